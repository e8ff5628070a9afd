package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/gitws"
)

// newGC is 'summit gc': the worktrees, private git dirs and refs that sessions left behind (a
// crash, or --keep-worktrees), listed first, then removed unless --dry-run.
func newGC(stdout, stderr io.Writer) *cobra.Command {
	var dry, asJSON bool
	c := &cobra.Command{
		Use:   "gc",
		Short: "List and remove the worktrees and refs that ended sessions left behind",
		Long: `Subagents that change files work in git worktrees under the cache dir
($XDG_CACHE_HOME/summit, else ~/.cache/summit), with refs under refs/summit/<session>/ in the
workspace's repository. A session removes them when it closes; a crash or --keep-worktrees
leaves them. gc lists every leftover of a session that is not running, then removes it.
Running sessions are never touched, nor anything outside refs/summit/ and the cache dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cache, err := gitws.DefaultCacheDir()
			if err != nil {
				return badFile(err)
			}
			left, err := gitws.Leftovers(ctx, cache)
			if err != nil {
				return badFile(err)
			}
			if asJSON {
				if left == nil {
					left = []gitws.Leftover{}
				}
				if err := writeJSON(stdout, left); err != nil {
					return err
				}
			} else if len(left) == 0 {
				fmt.Fprintln(stdout, "nothing to clean: no session left worktrees or refs behind")
			} else {
				for _, l := range left {
					fmt.Fprintln(stdout, session.Sanitize(l.String())) // paths and ref names as found
				}
			}
			if dry || len(left) == 0 {
				return nil
			}
			if err := gitws.GC(ctx, cache, left); err != nil {
				return badFile(err)
			}
			fmt.Fprintf(stderr, "summit: removed %d leftovers\n", len(left))
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "only list what would be removed")
	c.Flags().BoolVar(&asJSON, "json", false, "list as JSON")
	return c
}

// noteLeftovers tells, when a session starts, that earlier sessions left worktrees behind.
func noteLeftovers(stderr io.Writer) {
	cache, err := gitws.DefaultCacheDir()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if left, err := gitws.Leftovers(ctx, cache); err == nil && len(left) > 0 {
		fmt.Fprintf(stderr, "summit: %d leftovers of ended sessions in %s ('summit gc' lists and removes them)\n", len(left), session.Sanitize(cache))
	}
}
