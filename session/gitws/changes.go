package gitws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// Kind is what happened to a file.
type Kind string

const (
	Added    Kind = "added"
	Modified Kind = "modified" // content changed (perhaps its mode or type too)
	Deleted  Kind = "deleted"
	Renamed  Kind = "renamed" // perhaps with edits: see Added/Removed and Diff
	Mode     Kind = "mode"    // only the mode changed (chmod +x)
)

// FileChange is one file of a ChangeSet. Paths are slash-separated and relative to the workspace.
type FileChange struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // renames
	Kind    Kind   `json:"kind"`
	Binary  bool   `json:"binary,omitempty"`
	Added   int    `json:"added"`              // lines, 0 for binary files
	Removed int    `json:"removed"`            // lines, 0 for binary files
	OldMode string `json:"old_mode,omitempty"` // git modes: 100644, 100755, 120000 (symlink), 160000
	NewMode string `json:"new_mode,omitempty"`
	// Diff is git's patch of this file (a unified diff; a binary patch for binary files), cut
	// at MaxFileDiff or when the ChangeSet reaches MaxTotalDiff, ending then with a marker line
	// that names the ref holding the full change.
	Diff      string `json:"diff,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ChangeSet is what a subagent really changed in its worktree against its base.
type ChangeSet struct {
	Base      string       `json:"base"`   // base commit
	Result    string       `json:"result"` // commit of the worktree's state (parent: Base)
	Ref       string       `json:"ref"`    // refs/summit/<session>/<name>/result
	Files     []FileChange `json:"files,omitempty"`
	Added     int          `json:"added"`
	Removed   int          `json:"removed"`
	Truncated bool         `json:"truncated,omitempty"` // some file's Diff was cut
	// Outside lists paths (relative to the repository top) changed outside the workspace when
	// the workspace is a subdirectory of its repository. They are not applied.
	Outside []string `json:"outside,omitempty"`
}

// TruncationMarker starts the line that ends a cut diff.
const TruncationMarker = "[summit: diff truncated"

// Changes commits the worktree as it is now (everything the subagent changed: through file
// tools or the shell, new untracked files, deletions, renames, modes; not ignored files) at
// refs/summit/<session>/<name>/result and reports it file by file against the worktree's base.
func (r *Repo) Changes(ctx context.Context, wt *Worktree) (ChangeSet, error) {
	wt.stopRefresh()
	wt.mu.Lock()
	defer wt.mu.Unlock()
	tree, err := r.indexTree(ctx, wt.Path, nil) // the worktree's own index: summit's metadata
	if err != nil {
		return ChangeSet{}, err
	}
	ref := r.ResultRef(wt.Name)
	res, err := r.commit(ctx, tree, "summit "+r.session+" "+wt.Name+" result", wt.Base.Commit)
	if err != nil {
		return ChangeSet{}, err
	}
	if err := r.setRefs(ctx, ref, res); err != nil {
		return ChangeSet{}, err
	}
	cs := ChangeSet{Base: wt.Base.Commit, Result: res, Ref: ref}
	if tree == wt.Base.Tree {
		return cs, nil
	}
	return cs, r.diff(ctx, &cs)
}

// Diff reports the changes between two commits of this repository the way Changes does (for a
// result that did not come from a worktree, such as a convergence's). ref names where the full
// change is kept, for the truncation marker.
func (r *Repo) Diff(ctx context.Context, base, result, ref string) (ChangeSet, error) {
	if err := validRevs(base, result); err != nil {
		return ChangeSet{}, err
	}
	cs := ChangeSet{Base: base, Result: result, Ref: ref}
	return cs, r.diff(ctx, &cs)
}

type rawEntry struct {
	oldMode, newMode string
	oldOID, newOID   string
	status           byte
	path, oldPath    string
}

// parseRaw parses `diff-tree -z --raw` records; with numstat it also parses the numstat records
// that follow them.
func parseRaw(recs []string, numstat bool) ([]rawEntry, [][2]int, []bool, error) {
	var ents []rawEntry
	i := 0
	for i < len(recs) && strings.HasPrefix(recs[i], ":") {
		f := strings.Fields(recs[i][1:])
		if len(f) != 5 || i+1 >= len(recs) {
			return nil, nil, nil, fmt.Errorf("gitws: unexpected diff-tree record %q", recs[i])
		}
		e := rawEntry{oldMode: f[0], newMode: f[1], oldOID: f[2], newOID: f[3], status: f[4][0], path: recs[i+1]}
		i += 2
		if e.status == 'R' || e.status == 'C' {
			if i >= len(recs) {
				return nil, nil, nil, errors.New("gitws: truncated diff-tree rename record")
			}
			e.oldPath, e.path = e.path, recs[i]
			i++
		}
		ents = append(ents, e)
	}
	if !numstat {
		return ents, nil, nil, nil
	}
	counts := make([][2]int, 0, len(ents))
	binary := make([]bool, 0, len(ents))
	for i < len(recs) {
		f := strings.SplitN(recs[i], "\t", 3)
		if len(f) != 3 {
			return nil, nil, nil, fmt.Errorf("gitws: unexpected numstat record %q", recs[i])
		}
		i++
		if f[2] == "" { // a rename: the two paths follow
			i += 2
		}
		a, errA := strconv.Atoi(f[0])
		d, errD := strconv.Atoi(f[1])
		counts = append(counts, [2]int{a, d})
		binary = append(binary, errA != nil || errD != nil)
	}
	if len(counts) != len(ents) {
		return nil, nil, nil, fmt.Errorf("gitws: diff-tree gave %d raw and %d numstat records", len(ents), len(counts))
	}
	return ents, counts, binary, nil
}

func kindOf(e rawEntry) Kind {
	switch e.status {
	case 'A', 'C':
		return Added
	case 'D':
		return Deleted
	case 'R':
		return Renamed
	case 'M':
		if e.oldOID == e.newOID && e.oldMode != e.newMode {
			return Mode
		}
	}
	return Modified
}

func modeOrEmpty(m string) string {
	if strings.Trim(m, "0") == "" {
		return ""
	}
	return m
}

// diff fills cs.Files (and Outside) from one git diff-tree between cs.Base and cs.Result.
func (r *Repo) diff(ctx context.Context, cs *ChangeSet) error {
	args := []string{"diff-tree", "-r", "-M", "--no-ext-diff", "--no-textconv", "-z", "--raw", "--numstat",
		"-p", "--binary", "--src-prefix=a/", "--dst-prefix=b/"}
	if r.prefix != "" {
		args = append(args, "--relative="+r.prefix)
	}
	if err := r.readDiff(ctx, append(args, cs.Base, cs.Result), cs); err != nil {
		return err
	}
	if r.prefix != "" {
		out, err := r.plain(ctx, "diff-tree", "-r", "-z", "--name-only", cs.Base, cs.Result)
		if err != nil {
			return err
		}
		for _, p := range splitZ(out) {
			if !strings.HasPrefix(p, r.prefix) {
				cs.Outside = append(cs.Outside, p)
			}
		}
	}
	return nil
}

// readDiff streams `diff-tree -z --raw --numstat -p`: NUL-terminated raw and numstat records, an
// empty record, then the patch, which it cuts into the files' Diffs (one "diff --git" header per
// raw record, in the same order), keeping at most the caps in memory.
func (r *Repo) readDiff(ctx context.Context, args []string, cs *ChangeSet) error {
	cmd := exec.CommandContext(ctx, r.git, append(append([]string{}, configArgs...), args...)...)
	cmd.Dir = r.top
	cmd.Env = cleanEnv(r.repoEnv(false)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &GitError{Args: args, Code: -1, Err: err}
	}
	br := bufio.NewReaderSize(pipe, 64<<10)
	var recs []string
	for {
		rec, err := br.ReadString(0)
		if err == io.EOF && rec == "" {
			break
		}
		if err != nil {
			cmd.Wait()
			return fmt.Errorf("gitws: reading diff: %w: %s", err, errb.String())
		}
		if rec = rec[:len(rec)-1]; rec == "" {
			break
		}
		recs = append(recs, rec)
	}
	ents, counts, binary, err := parseRaw(recs, true)
	if err != nil {
		cmd.Wait()
		return err
	}
	cs.Files = make([]FileChange, len(ents))
	for i, e := range ents {
		fc := FileChange{Path: e.path, OldPath: e.oldPath, Kind: kindOf(e), Binary: binary[i],
			OldMode: modeOrEmpty(e.oldMode), NewMode: modeOrEmpty(e.newMode)}
		if !fc.Binary {
			fc.Added, fc.Removed = counts[i][0], counts[i][1]
			cs.Added += fc.Added
			cs.Removed += fc.Removed
		}
		cs.Files[i] = fc
	}
	var (
		idx        = -1
		buf        bytes.Buffer
		fileBytes  int
		total      int
		atLineHead = true
		full       bool // this file's Diff stopped growing
	)
	flush := func() {
		if idx < 0 || idx >= len(cs.Files) {
			buf.Reset()
			fileBytes, full = 0, false
			return
		}
		fc := &cs.Files[idx]
		b := buf.Bytes()
		if full && len(b) > 0 && b[len(b)-1] != '\n' { // cut inside a long line
			b = b[:bytes.LastIndexByte(b, '\n')+1]
		}
		fc.Diff = string(b)
		if full {
			fc.Truncated, cs.Truncated = true, true
			fc.Diff += fmt.Sprintf("%s: %d of %d bytes shown; the full change is at %s]\n", TruncationMarker, len(b), fileBytes, cs.Ref)
		}
		total += buf.Len()
		buf.Reset()
		fileBytes, full = 0, false
	}
	for {
		seg, err := br.ReadSlice('\n')
		if len(seg) > 0 {
			if atLineHead && bytes.HasPrefix(seg, []byte("diff --git ")) {
				flush()
				idx++
			}
			fileBytes += len(seg)
			if idx >= 0 && !full {
				room := min(r.maxFile-buf.Len(), r.maxTotal-total-buf.Len())
				if len(seg) <= room {
					buf.Write(seg)
				} else {
					// Cut at the last whole line that fits.
					if room > 0 {
						if j := bytes.LastIndexByte(seg[:room], '\n'); j >= 0 {
							buf.Write(seg[:j+1])
						}
					}
					full = true
				}
			}
			atLineHead = seg[len(seg)-1] == '\n'
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			cmd.Wait()
			return fmt.Errorf("gitws: reading diff: %w", err)
		}
	}
	flush()
	if err := cmd.Wait(); err != nil {
		return &GitError{Args: args, Code: cmd.ProcessState.ExitCode(), Stderr: errb.String(), Err: err}
	}
	if idx+1 != len(cs.Files) {
		return fmt.Errorf("gitws: diff-tree gave %d patches for %d files", idx+1, len(cs.Files))
	}
	return nil
}
