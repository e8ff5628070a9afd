package gitws

import (
	"context"
	"fmt"
	"strings"
)

// Take is one file of a composed result taken whole from a commit (a member's result): its
// Path there, or its absence (a deletion); OldPath, for a rename, is removed. Paths are
// relative to the workspace.
type Take struct {
	Path, OldPath string
	From          string // commit
}

// Compose builds a commit on base from a convergence's resolved result: patch (unified diffs
// relative to the workspace, git's own format: binary, renames and modes included) is applied
// to base with git apply, and each Take copies a file as it is in another commit. The commit's
// parent is base, so Apply lands it with a three-way merge. Nothing in the workspace or the
// user's index is touched: it all happens in a temporary index.
func (r *Repo) Compose(ctx context.Context, base, patch string, takes []Take) (string, error) {
	if err := r.checkOpen(); err != nil {
		return "", err
	}
	if err := validRevs(base); err != nil {
		return "", err
	}
	run, done, err := r.indexRunner(ctx, "compose-")
	if err != nil {
		return "", err
	}
	defer done()
	if _, err := run("", "read-tree", base); err != nil {
		return "", err
	}
	if strings.TrimSpace(patch) != "" {
		args := []string{"apply", "--cached", "--binary", "--whitespace=nowarn"}
		if r.prefix != "" {
			args = append(args, "--directory="+strings.TrimSuffix(r.prefix, "/"))
		}
		if _, err := run(patch, args...); err != nil {
			return "", fmt.Errorf("gitws: the merged changes do not apply to their base: %w", err)
		}
	}
	for _, t := range takes {
		if err := validRevs(t.From); err != nil {
			return "", err
		}
		if t.OldPath != "" && t.OldPath != t.Path {
			if _, err := run("", "update-index", "--force-remove", "--", r.prefix+t.OldPath); err != nil {
				return "", err
			}
		}
		out, err := run("", "ls-tree", "-z", t.From, "--", r.prefix+t.Path)
		if err != nil {
			return "", err
		}
		entry := strings.TrimSuffix(string(out), "\x00")
		if entry == "" { // absent there: deleted
			if _, err := run("", "update-index", "--force-remove", "--", r.prefix+t.Path); err != nil {
				return "", err
			}
			continue
		}
		// "<mode> <type> <oid>\t<path>" is what update-index --index-info reads.
		if _, err := run(entry+"\x00", "update-index", "-z", "--index-info"); err != nil {
			return "", err
		}
	}
	out, err := run("", "write-tree")
	if err != nil {
		return "", err
	}
	return r.commit(ctx, trim(out), "summit: converged changes", base)
}

// indexRunner runs git commands against a fresh temporary index (the user's is never used);
// stdin, when not empty, is fed to the command. done removes the index.
func (r *Repo) indexRunner(ctx context.Context, prefix string) (run func(stdin string, args ...string) ([]byte, error), done func(), err error) {
	idx, done, err := r.tempIndex(prefix)
	if err != nil {
		return nil, nil, err
	}
	env := append(r.repoEnv(false), "GIT_INDEX_FILE="+idx)
	run = func(stdin string, args ...string) ([]byte, error) {
		c := gitCmd{dir: r.top, env: env, args: args}
		if stdin != "" {
			c.stdin = strings.NewReader(stdin)
		}
		out, _, err := runGit(ctx, r.git, c)
		return out, err
	}
	return run, done, nil
}
