package gitws

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// testHookPlace, when set by a test, runs before each file is put in place; an error from it
// stands for a failing rename.
var testHookPlace func(path string) error

// writeFiles makes the work tree's files in ops equal to the source tree, all or nothing:
//
//  1. git checks the new contents out (with the repository's attributes and filters) into a
//     staging dir in <workspace>/.summit/tmp, on the workspace's file system;
//  2. every file that is replaced or deleted is moved aside into the staging dir;
//  3. the new files are renamed into place, creating parent directories as needed; directories
//     emptied by deletions are removed.
//
// Any failure undoes every step taken so far, in reverse, so the work tree is left as it was.
func (r *Repo) writeFiles(ctx context.Context, srcTree string, ops []op) (err error) {
	if len(ops) == 0 {
		return nil
	}
	tmpRoot := filepath.Join(r.workspace, ".summit", "tmp")
	if err := os.MkdirAll(tmpRoot, 0o700); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	staging, err := os.MkdirTemp(tmpRoot, "apply-")
	if err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	keepStaging := false // when a rollback fails, the displaced files there are all that is left
	defer func() {
		if !keepStaging {
			os.RemoveAll(staging)
		}
	}()

	// Check every target before touching anything.
	for _, o := range ops {
		if err := r.checkTarget(o); err != nil {
			return err
		}
	}
	// 1. New contents.
	var paths []string
	for _, o := range ops {
		if !o.del {
			paths = append(paths, o.path)
		}
	}
	newDir := filepath.Join(staging, "new") + string(filepath.Separator)
	if len(paths) > 0 {
		idx := filepath.Join(staging, "index")
		env := append(r.repoEnv(true), "GIT_INDEX_FILE="+idx)
		if _, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: env, args: []string{"read-tree", srcTree}}); err != nil {
			return err
		}
		if _, _, err := runGit(ctx, r.git, gitCmd{dir: r.top, env: env, stdin: strings.NewReader(strings.Join(paths, "\x00") + "\x00"),
			args: []string{"checkout-index", "-z", "--stdin", "--prefix=" + newDir}}); err != nil {
			return err
		}
	}

	var undo []func() error
	defer func() {
		if err == nil {
			return
		}
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			if e := undo[i](); e != nil {
				errs = append(errs, e)
			}
		}
		if len(errs) > 0 {
			keepStaging = true
			err = fmt.Errorf("%w; rolling back also failed (displaced files are kept in %s): %v", err, staging, errors.Join(errs...))
		}
	}()

	// 2. Move aside what is replaced or deleted.
	oldPerm := map[string]fs.FileMode{}
	for i, o := range ops {
		target := r.abs(o.path)
		fi, lerr := os.Lstat(target)
		if errors.Is(lerr, fs.ErrNotExist) {
			continue
		}
		if lerr != nil {
			return fmt.Errorf("gitws: %w", lerr)
		}
		if fi.IsDir() {
			if o.oldMode == "" && !o.del {
				continue // a directory becoming a file: step 3 removes it once emptied
			}
			return fmt.Errorf("gitws: %s is a directory now; nothing was written", o.path)
		}
		if o.oldMode == "" {
			return fmt.Errorf("gitws: %s exists but is ignored or untracked; it would be overwritten; nothing was written", o.path)
		}
		oldPerm[o.path] = fi.Mode()
		aside := filepath.Join(staging, "old-"+strconv.Itoa(i))
		if err := os.Rename(target, aside); err != nil {
			return fmt.Errorf("gitws: %w", err)
		}
		undo = append(undo, func() error { return os.Rename(aside, target) })
	}

	// 3. Put the new files in place.
	for _, o := range ops {
		if o.del {
			continue
		}
		target := r.abs(o.path)
		staged := newDir + filepath.FromSlash(o.path)
		if p, ok := oldPerm[o.path]; ok && p.IsRegular() && o.newMode != "120000" {
			// Keep the file's permissions, switching only the executable bits git records.
			perm := p.Perm()
			if o.newMode == "100755" {
				perm |= (perm & 0o444) >> 2
			} else {
				perm &^= 0o111
			}
			if err := os.Chmod(staged, perm); err != nil {
				return fmt.Errorf("gitws: %w", err)
			}
		}
		// A directory that stands where the file goes was emptied by the deletions above.
		if fi, lerr := os.Lstat(target); lerr == nil && fi.IsDir() {
			perm := fi.Mode().Perm()
			if err := os.Remove(target); err != nil {
				return fmt.Errorf("gitws: %s: %w", o.path, err)
			}
			undo = append(undo, func() error { return os.Mkdir(target, perm) })
		}
		if err := r.mkdirs(filepath.Dir(target), &undo); err != nil {
			return err
		}
		if testHookPlace != nil {
			if err := testHookPlace(o.path); err != nil {
				return err
			}
		}
		if err := os.Rename(staged, target); err != nil {
			return fmt.Errorf("gitws: %w", err)
		}
		undo = append(undo, func() error { return os.Remove(target) })
	}

	// Directories emptied by deletions go, as git would do.
	for _, o := range ops {
		if !o.del {
			continue
		}
		for d := filepath.Dir(r.abs(o.path)); d != r.workspace && within(r.workspace, d); d = filepath.Dir(d) {
			fi, err := os.Lstat(d)
			if err != nil || !fi.IsDir() || os.Remove(d) != nil {
				break
			}
			perm := fi.Mode().Perm()
			undo = append(undo, func() error { return os.Mkdir(d, perm) })
		}
	}
	return nil
}

// abs is the absolute path of a top-relative slash path.
func (r *Repo) abs(p string) string { return filepath.Join(r.top, filepath.FromSlash(p)) }

// checkTarget refuses paths that leave the workspace or pass through a symlink.
func (r *Repo) checkTarget(o op) error {
	if !strings.HasPrefix(o.path, r.prefix) || strings.Contains("/"+o.path+"/", "/../") || strings.Contains("/"+o.path+"/", "/.git/") {
		return fmt.Errorf("gitws: refusing to write %q", o.path)
	}
	rel := strings.TrimPrefix(o.path, r.prefix)
	parts := strings.Split(rel, "/")
	d := r.workspace
	for _, part := range parts[:len(parts)-1] {
		d = filepath.Join(d, part)
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("gitws: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("gitws: refusing to write %s: %s is a symlink", o.path, strings.TrimPrefix(d, r.workspace+string(filepath.Separator)))
		}
	}
	return nil
}

// mkdirs creates dir and its missing parents inside the workspace, recording how to undo it.
func (r *Repo) mkdirs(dir string, undo *[]func() error) error {
	if fi, err := os.Lstat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("gitws: %s is not a directory", dir)
		}
		return nil
	}
	if !within(r.workspace, dir) || dir == r.workspace {
		return fmt.Errorf("gitws: refusing to create %s", dir)
	}
	if err := r.mkdirs(filepath.Dir(dir), undo); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		return fmt.Errorf("gitws: %w", err)
	}
	*undo = append(*undo, func() error { return os.Remove(dir) })
	return nil
}
