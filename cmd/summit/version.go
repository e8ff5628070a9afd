package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise the module
// version from the build info, or "devel".
var version = ""

func programVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func newVersion(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the program and recording schema versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(stdout, "summit %s (recording schema v%d)\n", programVersion(), session.SchemaVersion)
			return err
		},
	}
}
