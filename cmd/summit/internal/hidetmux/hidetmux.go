// Package hidetmux keeps the TMUX variable from the other packages' initialisers.
//
// lipgloss sets its package variable Writer at initialisation with colorprofile.Detect, which,
// when standard output is a terminal inside tmux, runs `tmux info` to learn whether tmux
// passes 24-bit colour: a child process on every summit command, --help and version included,
// for a Writer summit never uses. This package only imports os, so the language's order of
// initialisation (packages by import path, each as soon as its imports are done) runs it
// before colorprofile, which needs os/exec; it takes TMUX out of the environment, and main
// puts it back (Restore) before doing anything else, so subagents and their commands see it.
package hidetmux

import "os"

var value, set = os.LookupEnv("TMUX")

func init() {
	if set {
		os.Unsetenv("TMUX")
	}
}

// Restore puts TMUX back as it was.
func Restore() {
	if set {
		os.Setenv("TMUX", value)
	}
}
