package gitws

import (
	"context"
	"fmt"
	"strings"
)

// Settle prepares an apply whose merge overlapped the workspace, once a reviewer has chosen
// per overlapping file: theirs[path] takes the result's version, otherwise the workspace's
// stays. It snapshots the workspace now (pre), merges base→result onto it as Apply does, puts
// the chosen version at each overlapping path, and returns the settled commit (parent pre).
// Apply(pre, settled) then lands it; nothing is written here.
func (r *Repo) Settle(ctx context.Context, base, result string, theirs map[string]bool) (pre, settled string, err error) {
	return r.SettleEdited(ctx, base, result, theirs, nil)
}

// SettleEdited is Settle where the reviewer wrote some overlapping files by hand (the apply
// review's choice edit): edited[path] is the file's whole new content, put at that path with
// the workspace's mode (a regular file when the workspace has none there). A path in edited
// that is not an overlapping file is an error: nothing else may change.
func (r *Repo) SettleEdited(ctx context.Context, base, result string, theirs map[string]bool, edited map[string][]byte) (pre, settled string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return "", "", err
	}
	if err := validRevs(base, result); err != nil {
		return "", "", err
	}
	curTree, err := r.snapshotTree(ctx)
	if err != nil {
		return "", "", err
	}
	cur, err := r.commit(ctx, curTree, "summit "+r.session+" workspace", base)
	if err != nil {
		return "", "", err
	}
	th, err := r.commit(ctx, result+"^{tree}", "summit "+r.session+" result", base)
	if err != nil {
		return "", "", err
	}
	out, code, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), ok: []int{1},
		args: []string{"merge-tree", "--write-tree", "-z", "--", cur, th}})
	if err != nil {
		return "", "", err
	}
	merged, stages, msgs, err := parseMergeTree(out)
	if err != nil {
		return "", "", err
	}
	run, done, err := r.indexRunner(ctx, "settle-")
	if err != nil {
		return "", "", err
	}
	defer done()
	if _, err := run("", "read-tree", merged); err != nil {
		return "", "", err
	}
	used := 0 // edited paths put in place
	if code == 1 {
		conflicts, err := r.conflicts(ctx, stages, msgs, "result")
		if err != nil {
			return "", "", err
		}
		for _, c := range conflicts {
			from := cur
			if theirs[c.Path] {
				from = th
			}
			full := r.prefix + c.Path
			entry, err := run("", "ls-tree", "-z", from, "--", full)
			if err != nil {
				return "", "", err
			}
			if text, ok := edited[c.Path]; ok {
				used++
				oid, err := r.plainIn(ctx, text, "hash-object", "-w", "--stdin")
				if err != nil {
					return "", "", err
				}
				mode := "100644"
				if f := strings.Fields(string(entry)); len(f) > 0 && (f[0] == "100644" || f[0] == "100755") {
					mode = f[0]
				}
				entry = []byte(mode + " blob " + trim(oid) + "\t" + full + "\x00")
			}
			if e := strings.TrimSuffix(string(entry), "\x00"); e != "" {
				_, err = run(e+"\x00", "update-index", "-z", "--index-info")
			} else {
				_, err = run("", "update-index", "--force-remove", "--", full)
			}
			if err != nil {
				return "", "", err
			}
		}
	}
	if used != len(edited) {
		return "", "", fmt.Errorf("gitws: settle: an edited file is not one of the overlapping files")
	}
	tree, err := run("", "write-tree")
	if err != nil {
		return "", "", err
	}
	settled, err = r.commit(ctx, trim(tree), "summit "+r.session+" settled", cur)
	return cur, settled, err
}
