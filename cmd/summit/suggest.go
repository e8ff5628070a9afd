package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/summit-dev/summit/commands"
)

// suggestTypos makes a mistyped subcommand or flag name its nearest valid one, with the same
// rule the slash commands use (commands.Nearest): `summit demoo` → did you mean demo?,
// `--worksapce` → did you mean --workspace? The errors stay cobra's, so run() still exits 2.
//
// cobra suggests subcommands only for a command without Args; the root takes no arguments
// (cobra.NoArgs), so its unknown-command error is made here. Unknown flags get no suggestion
// from cobra or pflag at all: the flag error hook, which every subcommand inherits from the
// root, adds the nearest flag of the command that was run.
func suggestTypos(root *cobra.Command) {
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return fmt.Errorf("unknown command %q for %q%s", args[0], c.CommandPath(), didYouMean(args[0], subcommandNames(c)))
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		name, ok := strings.CutPrefix(err.Error(), "unknown flag: ")
		if !ok {
			return err
		}
		return fmt.Errorf("%w%s", err, didYouMean(name, flagNames(c)))
	})
}

// didYouMean is " (did you mean X?)" for the candidate nearest to typed, or "".
func didYouMean(typed string, candidates []string) string {
	if n := commands.Nearest(typed, candidates); n != "" {
		return " (did you mean " + n + "?)"
	}
	return ""
}

// subcommandNames are the names and aliases a user may type after c.
func subcommandNames(c *cobra.Command) []string {
	var out []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, s.Name())
			out = append(out, s.Aliases...)
		}
	}
	return out
}

// flagNames are c's flags as typed ("--workspace"), its own and the ones it inherits.
func flagNames(c *cobra.Command) []string {
	out := []string{"--help"}
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			out = append(out, "--"+f.Name)
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return out
}
