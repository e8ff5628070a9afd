package gitws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Applied is one Apply that landed: enough to undo it.
type Applied struct {
	ID     string   `json:"id"` // "apply-N"
	Base   string   `json:"base"`
	Result string   `json:"result"`
	Pre    string   `json:"pre"`             // the workspace just before (refs/summit/<session>/apply-N-pre)
	Post   string   `json:"post"`            // and just after (apply-N-post)
	Files  []string `json:"files,omitempty"` // paths written or deleted, relative to the workspace
}

// Side is one version of a conflicting file.
type Side struct {
	Mode    string // git mode: 100644, 100755, 120000
	OID     string
	Content []byte
}

// Conflict is a file the three-way merge could not settle.
type Conflict struct {
	Path string // relative to the workspace
	// Types are git's conflict types for the path: "contents", "modify/delete", "add/add",
	// "rename/delete", "file/directory", "binary", ...
	Types    []string
	Messages []string // git's messages about the path
	// Base is the file in the base, Ours in the main workspace now, Theirs in the result being
	// applied; nil where the file does not exist on that side.
	Base, Ours, Theirs *Side
	Binary             bool
	// Merged is the file with diff3 conflict markers (labels: workspace, base, the Apply label)
	// when both sides have it as text; empty otherwise.
	Merged string
}

// ConflictError is returned by Apply when the merge conflicts. Nothing was written.
type ConflictError struct{ Conflicts []Conflict }

func (e *ConflictError) Error() string {
	var paths []string
	for _, c := range e.Conflicts {
		paths = append(paths, c.Path)
	}
	return fmt.Sprintf("gitws: apply conflicts in %d file(s): %s; nothing was written", len(paths), strings.Join(paths, ", "))
}

// EditedError is returned by Undo when files the apply touched changed since: nothing was undone.
type EditedError struct{ Files []string }

func (e *EditedError) Error() string {
	return fmt.Sprintf("gitws: cannot undo: edited since the apply: %s; nothing was changed", strings.Join(e.Files, ", "))
}

// Apply lands the change base→result in the main workspace as it is now, with a three-way merge
// (merge-tree --write-tree, merge base = base). A clean merge writes exactly the files that
// change, all or none; conflicts write nothing and return a *ConflictError. The workspace before
// and after is kept at refs/summit/<session>/apply-N-pre and -post. label names the result in
// conflict markers and commit messages ("" means "result").
func (r *Repo) Apply(ctx context.Context, base, result, label string) (*Applied, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return nil, err
	}
	if label == "" {
		label = "result"
	}
	if err := validRevs(base, result); err != nil {
		return nil, err
	}
	_, cur, merged, err := r.mergeInto(ctx, base, result, label)
	if err != nil {
		return nil, err
	}
	ops, err := r.ops(ctx, cur, merged, nil)
	if err != nil {
		return nil, err
	}
	n := r.applyN + 1
	id := "apply-" + strconv.Itoa(n)
	if err := r.setRefs(ctx, r.sessionRef(id+"-pre"), cur); err != nil {
		return nil, err
	}
	r.applyN = n
	if err := r.writeFiles(ctx, merged, ops); err != nil {
		return nil, err
	}
	postTree, err := r.snapshotTree(ctx)
	if err != nil {
		return nil, err
	}
	post, err := r.commit(ctx, postTree, "summit "+r.session+" "+id+" "+label, cur)
	if err != nil {
		return nil, err
	}
	if err := r.setRefs(ctx, r.sessionRef(id+"-post"), post); err != nil {
		return nil, err
	}
	a := &Applied{ID: id, Base: base, Result: result, Pre: cur, Post: post}
	for _, o := range ops {
		a.Files = append(a.Files, strings.TrimPrefix(o.path, r.prefix))
	}
	return a, nil
}

// Discard takes back an apply that wrote no file and that the session will not record (an
// apply that changes nothing is refused): its refs go, and its number is given back when it
// is the last one handed out, so the next apply's id follows the last recorded one.
func (r *Repo) Discard(ctx context.Context, a *Applied) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return err
	}
	if len(a.Files) > 0 {
		return fmt.Errorf("gitws: %s wrote %d files: only an apply that wrote none is discarded", a.ID, len(a.Files))
	}
	n, err := strconv.Atoi(strings.TrimPrefix(a.ID, "apply-"))
	if err != nil || !strings.HasPrefix(a.ID, "apply-") {
		return fmt.Errorf("gitws: %q is not an apply id", a.ID)
	}
	var b strings.Builder
	for _, ref := range []string{a.ID + "-pre", a.ID + "-post"} {
		fmt.Fprintf(&b, "delete %s\n", r.sessionRef(ref))
	}
	if _, err := r.plainIn(ctx, []byte(b.String()), "update-ref", "--stdin"); err != nil {
		return err
	}
	if n == r.applyN {
		r.applyN = n - 1
	}
	return nil
}

// Undo reverts an apply exactly: every file it touched gets back its pre-apply content and mode,
// files it created are deleted and files it deleted come back. If any of them differs from its
// post-apply state now, Undo returns an *EditedError naming them and changes nothing.
func (r *Repo) Undo(ctx context.Context, a *Applied) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkOpen(); err != nil {
		return err
	}
	if err := validRevs(a.Pre, a.Post); err != nil {
		return err
	}
	touched := map[string]bool{}
	for _, f := range a.Files {
		touched[r.prefix+f] = true
	}
	if len(touched) == 0 {
		return nil
	}
	nowTree, err := r.snapshotTree(ctx)
	if err != nil {
		return err
	}
	out, err := r.plain(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", a.Post, nowTree)
	if err != nil {
		return err
	}
	var edited []string
	for _, p := range splitZ(out) {
		if touched[p] {
			edited = append(edited, strings.TrimPrefix(p, r.prefix))
		}
	}
	if len(edited) > 0 {
		return &EditedError{Files: edited}
	}
	ops, err := r.ops(ctx, nowTree, a.Pre, touched)
	if err != nil {
		return err
	}
	return r.writeFiles(ctx, a.Pre+"^{tree}", ops)
}

// op is one file to write (from the source tree) or delete.
type op struct {
	path    string // relative to the top, slash-separated
	del     bool
	oldMode string // "" when the file does not exist now
	newMode string
}

// ops lists what turns the work tree from tree `from` into tree `to`: the files under the
// workspace (and, when only is set, in it) that differ.
func (r *Repo) ops(ctx context.Context, from, to string, only map[string]bool) ([]op, error) {
	out, err := r.plain(ctx, "diff-tree", "-r", "-z", "--raw", "--no-renames", from, to)
	if err != nil {
		return nil, err
	}
	ents, _, _, err := parseRaw(splitZ(out), false)
	if err != nil {
		return nil, err
	}
	var ops []op
	for _, e := range ents {
		if !strings.HasPrefix(e.path, r.prefix) || only != nil && !only[e.path] {
			continue
		}
		if e.oldMode == "160000" || e.newMode == "160000" {
			return nil, fmt.Errorf("gitws: %s is a submodule; submodule changes are not applied", e.path)
		}
		ops = append(ops, op{path: e.path, del: e.status == 'D', oldMode: modeOrEmpty(e.oldMode), newMode: modeOrEmpty(e.newMode)})
	}
	return ops, nil
}

// parseMergeTree reads `merge-tree --write-tree -z` output: the tree, the conflicted stages
// ("<mode> <oid> <stage>\t<path>"), and the messages (path count, paths, type, message).
func parseMergeTree(out []byte) (tree string, stages []string, msgs []mtMessage, err error) {
	recs := strings.Split(string(out), "\x00")
	if len(recs) == 0 || recs[0] == "" {
		return "", nil, nil, errors.New("gitws: merge-tree printed no tree")
	}
	tree = strings.TrimSpace(recs[0])
	i := 1
	for i < len(recs) && recs[i] != "" {
		stages = append(stages, recs[i])
		i++
	}
	i++ // the empty record before the messages
	for i < len(recs) && recs[i] != "" {
		n, err := strconv.Atoi(recs[i])
		if err != nil || i+2+n >= len(recs) {
			return "", nil, nil, fmt.Errorf("gitws: cannot read merge-tree message at %q", recs[i])
		}
		msgs = append(msgs, mtMessage{paths: recs[i+1 : i+1+n], typ: recs[i+1+n], text: strings.TrimSpace(recs[i+2+n])})
		i += 3 + n
	}
	return tree, stages, msgs, nil
}

type mtMessage struct {
	paths []string
	typ   string
	text  string
}

// conflicts builds the Conflicts of the workspace's paths from merge-tree's stages and messages.
func (r *Repo) conflicts(ctx context.Context, stages []string, msgs []mtMessage, label string) ([]Conflict, error) {
	byPath := map[string]*Conflict{}
	var order []string
	var oids []string
	for _, s := range stages {
		meta, path, ok := strings.Cut(s, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("gitws: unexpected merge-tree stage %q", s)
		}
		if !strings.HasPrefix(path, r.prefix) {
			continue
		}
		c := byPath[path]
		if c == nil {
			c = &Conflict{Path: strings.TrimPrefix(path, r.prefix)}
			byPath[path] = c
			order = append(order, path)
		}
		side := &Side{Mode: f[0], OID: f[1]}
		switch f[2] {
		case "1":
			c.Base = side
		case "2":
			c.Ours = side
		case "3":
			c.Theirs = side
		}
		oids = append(oids, f[1])
	}
	for _, m := range msgs {
		if !strings.HasPrefix(m.typ, "CONFLICT") {
			continue
		}
		typ := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(m.typ, "CONFLICT"), " ("), ")")
		for i, p := range m.paths {
			c := byPath[p]
			if c == nil && i == 0 && strings.HasPrefix(p, r.prefix) {
				// A conflict git reports without stages for its first path: still a conflict.
				c = &Conflict{Path: strings.TrimPrefix(p, r.prefix)}
				byPath[p] = c
				order = append(order, p)
			}
			if c != nil {
				if !slices.Contains(c.Types, typ) {
					c.Types = append(c.Types, typ)
				}
				c.Messages = append(c.Messages, m.text)
			}
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	blobs, err := r.catBlobs(ctx, oids)
	if err != nil {
		return nil, err
	}
	out := make([]Conflict, 0, len(order))
	for _, p := range order {
		c := byPath[p]
		for _, s := range []*Side{c.Base, c.Ours, c.Theirs} {
			if s != nil {
				s.Content = blobs[s.OID]
				c.Binary = c.Binary || bytes.IndexByte(s.Content[:min(len(s.Content), 8000)], 0) >= 0
			}
		}
		if c.Ours != nil && c.Theirs != nil && !c.Binary && c.Ours.Mode != "160000" && c.Theirs.Mode != "160000" {
			merged, err := r.mergeFile(ctx, c, label)
			if err != nil {
				return nil, err
			}
			c.Merged = merged
		}
		out = append(out, *c)
	}
	return out, nil
}

// catBlobs reads objects with one git cat-file --batch.
func (r *Repo) catBlobs(ctx context.Context, oids []string) (map[string][]byte, error) {
	res := map[string][]byte{}
	if len(oids) == 0 {
		return res, nil
	}
	out, err := r.plainIn(ctx, []byte(strings.Join(oids, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		hdr, err := br.ReadString('\n')
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return nil, fmt.Errorf("gitws: cat-file: %w", err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			return nil, fmt.Errorf("gitws: cat-file: %q", hdr)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("gitws: cat-file: %q", hdr)
		}
		b := make([]byte, n+1)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("gitws: cat-file: %w", err)
		}
		res[f[0]] = b[:n]
	}
}

// mergeFile runs git merge-file -p --diff3 on the three sides (an absent base is empty).
func (r *Repo) mergeFile(ctx context.Context, c *Conflict, label string) (string, error) {
	dir, err := os.MkdirTemp(r.tmpDir, "merge-")
	if err != nil {
		return "", fmt.Errorf("gitws: %w", err)
	}
	defer os.RemoveAll(dir)
	var base []byte
	if c.Base != nil {
		base = c.Base.Content
	}
	files := []string{filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs")}
	for i, b := range [][]byte{c.Ours.Content, base, c.Theirs.Content} {
		if err := os.WriteFile(files[i], b, 0o600); err != nil {
			return "", fmt.Errorf("gitws: %w", err)
		}
	}
	// Exit codes: the number of conflicts (capped at 127), or 255 on error.
	ok := make([]int, 127)
	for i := range ok {
		ok[i] = i + 1
	}
	out, _, err := runGit(ctx, r.git, gitCmd{dir: dir, ok: ok, args: []string{"merge-file", "-p", "--diff3",
		"-L", "workspace", "-L", "base", "-L", label, "--", files[0], files[1], files[2]}})
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// validRevs refuses empty revisions and ones git would read as options.
func validRevs(revs ...string) error {
	for _, r := range revs {
		if r == "" || strings.HasPrefix(r, "-") || strings.ContainsAny(r, " \t\n\x00") {
			return fmt.Errorf("gitws: invalid revision %q", r)
		}
	}
	return nil
}

// mergeInto is the three-way merge of base→result into the workspace as it is now, which Apply
// lands and Preview shows: the workspace's tree, its commit (parent base) and the merged tree.
// Conflicts inside the workspace return a *ConflictError; conflicts only outside a
// subdirectory workspace are not, since nothing there is applied. r.mu is held by the caller.
func (r *Repo) mergeInto(ctx context.Context, base, result, label string) (curTree, cur, merged string, err error) {
	if err := r.haveCommits(ctx, base, result); err != nil {
		return "", "", "", err
	}
	if curTree, err = r.snapshotTree(ctx); err != nil {
		return "", "", "", err
	}
	// Both sides get base as their only parent, so merge-tree finds base as the merge base
	// (git 2.38/2.39 have no --merge-base).
	if cur, err = r.commit(ctx, curTree, "summit "+r.session+" workspace", base); err != nil {
		return "", "", "", err
	}
	theirs, err := r.commit(ctx, result+"^{tree}", "summit "+r.session+" "+label, base)
	if err != nil {
		return "", "", "", err
	}
	out, code, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: r.repoEnv(false), ok: []int{1},
		args: []string{"merge-tree", "--write-tree", "-z", "--", cur, theirs}})
	if err != nil {
		return "", "", "", err
	}
	merged, stages, msgs, err := parseMergeTree(out)
	if err != nil {
		return "", "", "", err
	}
	if code == 1 {
		conflicts, err := r.conflicts(ctx, stages, msgs, label)
		if err != nil {
			return "", "", "", err
		}
		if len(conflicts) > 0 {
			return "", "", "", &ConflictError{Conflicts: conflicts}
		}
	}
	return curTree, cur, merged, nil
}
