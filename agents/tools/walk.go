package tools

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one .gitignore line, anchored at the directory holding the file (dir, a
// workspace-relative slash path, "" for the root).
type ignoreRule struct {
	dir     string
	pattern string // doublestar pattern relative to dir
	negate  bool
	dirOnly bool
}

// parseIgnore reads one .gitignore. Rules: blank and # lines are skipped; ! negates; a
// trailing / matches directories only; a pattern with no slash but a trailing one matches at
// any depth below dir; otherwise it is anchored at dir.
func parseIgnore(file, dir string) []ignoreRule {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var rules []ignoreRule
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{dir: dir}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			line = strings.TrimPrefix(line, "/")
		} else {
			line = "**/" + line
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// ignored applies the rules in order (the last match wins), as git does.
func ignored(rules []ignoreRule, rel string, isDir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		sub := rel
		if r.dir != "" {
			if !strings.HasPrefix(rel, r.dir+"/") {
				continue
			}
			sub = rel[len(r.dir)+1:]
		}
		if ok, _ := doublestar.Match(r.pattern, sub); ok {
			out = !r.negate
		}
	}
	return out
}

// walk visits the regular files under start (an absolute path inside the root) in lexical
// order, skipping .git, ignored paths and symlinks (never followed, so a walk cannot leave the
// workspace). fn returns false to stop.
func (s *Sandbox) walk(start string, fn func(abs, rel string) bool) error {
	var rules []ignoreRule
	// .gitignore files of the start's ancestors apply too.
	for d := s.rel(start); ; d = path.Dir(d) {
		dir := d
		if dir == "." {
			dir = ""
		}
		rules = append(parseIgnore(filepath.Join(s.root, filepath.FromSlash(dir), ".gitignore"), dir), rules...)
		if dir == "" {
			break
		}
	}
	stop := fmt.Errorf("stop")
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		rel := s.rel(p)
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" || p != start && ignored(rules, rel, true) {
				return filepath.SkipDir
			}
			if p != start {
				dir := rel
				rules = append(rules, parseIgnore(filepath.Join(p, ".gitignore"), dir)...)
			}
			return nil
		}
		if !d.Type().IsRegular() || ignored(rules, rel, false) {
			return nil
		}
		if !fn(p, rel) {
			return stop
		}
		return nil
	})
	if err == stop {
		return nil
	}
	return err
}

func (s *Sandbox) startDir(a args) (string, error) {
	p := a.str("path")
	if p == "" {
		p = "."
	}
	return s.resolve(p)
}

func globTool(_ context.Context, s *Sandbox, a args) Result {
	pat := a.str("pattern")
	if !doublestar.ValidatePattern(pat) {
		return errResult("glob: %q is not a valid glob pattern", pat)
	}
	start, err := s.startDir(a)
	if err != nil {
		return errResult("glob: %v", err)
	}
	var out []string
	more := 0
	base := s.rel(start)
	err = s.walk(start, func(_, rel string) bool {
		sub := rel
		if base != "." {
			sub = strings.TrimPrefix(rel, base+"/")
		}
		if ok, _ := doublestar.Match(pat, sub); ok {
			if len(out) < s.o.MatchCap {
				out = append(out, rel)
			} else {
				more++
			}
		}
		return true
	})
	if err != nil {
		return errResult("glob: %v", err)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return Result{Output: "no files match " + pat}
	}
	text := strings.Join(out, "\n")
	if more > 0 {
		text += fmt.Sprintf("\n[%d more matches not shown]", more)
	}
	return Result{Output: text}
}

func searchTool(ctx context.Context, s *Sandbox, a args) Result {
	re, err := regexp.Compile(a.str("pattern"))
	if err != nil {
		return errResult("search_file_content: bad pattern: %v", err)
	}
	include := a.str("include")
	if include != "" && !doublestar.ValidatePattern(include) {
		return errResult("search_file_content: include %q is not a valid glob pattern", include)
	}
	start, err := s.startDir(a)
	if err != nil {
		return errResult("search_file_content: %v", err)
	}
	var out []string
	more := 0
	visit := func(abs, rel string) bool {
		if ctx.Err() != nil {
			return false
		}
		if include != "" {
			if ok, _ := doublestar.Match(include, rel); !ok {
				return true
			}
		}
		data, err := os.ReadFile(abs)
		if err != nil || binary(data) {
			return true
		}
		for i, line := range strings.Split(string(data), "\n") {
			if re.MatchString(line) {
				if len(out) < s.o.MatchCap {
					if len(line) > 300 {
						line = line[:300] + "…"
					}
					out = append(out, fmt.Sprintf("%s:%d: %s", rel, i+1, line))
				} else {
					more++
				}
			}
		}
		return true
	}
	if st, err := os.Stat(start); err == nil && !st.IsDir() {
		visit(start, s.rel(start))
	} else if err := s.walk(start, visit); err != nil {
		return errResult("search_file_content: %v", err)
	}
	if len(out) == 0 {
		return Result{Output: "no matches for " + a.str("pattern")}
	}
	text := strings.Join(out, "\n")
	if more > 0 {
		text += fmt.Sprintf("\n[%d more matches not shown]", more)
	}
	return Result{Output: text}
}
