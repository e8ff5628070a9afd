package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Options configure a Sandbox; zero values mean the defaults shown.
type Options struct {
	MaxResult    int           // bytes of a result handed on; default 64 KiB
	MaxRead      int64         // read_file refuses larger files unless a range is asked; default 4 MiB
	MatchCap     int           // glob / search matches listed; default 200
	ShellTimeout time.Duration // default 120 s; timeout_s may lower it, never above 600 s
	Environ      []string      // base environment of the shell; default os.Environ()
	HTTPClient   *http.Client  // web_fetch; default a client with a 30 s timeout
}

// Sandbox runs tools confined to one workspace root.
type Sandbox struct {
	root string
	o    Options
}

// New resolves root (an existing directory) to an absolute, symlink-free path.
func New(root string, o Options) (*Sandbox, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	if o.MaxResult <= 0 {
		o.MaxResult = 64 << 10
	}
	if o.MaxRead <= 0 {
		o.MaxRead = 4 << 20
	}
	if o.MatchCap <= 0 {
		o.MatchCap = 200
	}
	if o.ShellTimeout <= 0 {
		o.ShellTimeout = 120 * time.Second
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &Sandbox{root: real, o: o}, nil
}

// Root is the resolved workspace root.
func (s *Sandbox) Root() string { return s.root }

// Result is what a call produced. Output is already capped. Written lists workspace-relative
// slash paths the call created or changed.
type Result struct {
	Output  string
	IsError bool
	Written []string
}

func errResult(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Call runs one tool with the model's raw argument text.
func (s *Sandbox) Call(ctx context.Context, tool, args string) Result {
	t, ok := registry[tool]
	if !ok {
		return errResult("unknown tool %q", tool)
	}
	a, err := decode(args, t.spec)
	if err != nil {
		return errResult("%s: %v", tool, err)
	}
	r := t.run(ctx, s, a)
	r.Output = s.capText(r.Output)
	return r
}

// capText cuts a result to MaxResult bytes on a rune boundary, saying how much there was.
// Tools that cap while reading (the shell) have already added their marker, which the slack
// of markerRoom lets through unchanged.
func (s *Sandbox) capText(text string) string {
	return capText(text, len(text), s.o.MaxResult+markerRoom)
}

const markerRoom = 200

// capText keeps at most max bytes of text, whose full size was total.
func capText(text string, total, max int) string {
	if len(text) <= max && total <= len(text) {
		return text
	}
	cut := min(len(text), max)
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + fmt.Sprintf("\n[... truncated: %d bytes total, showing the first %d]", total, cut)
}

// resolve maps a path argument to an absolute path inside the root, or says why not.
func (s *Sandbox) resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(s.root, full)
	}
	full = filepath.Clean(full)
	if !s.inside(full) {
		return "", fmt.Errorf("%s is outside the workspace %s", p, s.root)
	}
	// Resolve the deepest existing ancestor (the path itself when it exists): a symlink
	// anywhere along the way must not lead out.
	existing, rest := full, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("%s: %v", p, err)
	}
	real = filepath.Join(real, rest)
	if !s.inside(real) {
		return "", fmt.Errorf("%s leads outside the workspace (through a symlink to %s)", p, real)
	}
	return real, nil
}

func (s *Sandbox) inside(p string) bool {
	return p == s.root || strings.HasPrefix(p, s.root+string(filepath.Separator))
}

// rel is p relative to the root, with slashes.
func (s *Sandbox) rel(p string) string {
	r, err := filepath.Rel(s.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// args is a decoded argument object.
type args map[string]any

func (a args) str(k string) string { v, _ := a[k].(string); return v }
func (a args) num(k string) (int, bool) {
	f, ok := a[k].(float64)
	return int(f), ok
}

// decode parses the argument object and checks it against the tool's schema: required keys
// present, no unknown keys, each value of its declared type.
func decode(text string, spec Spec) (args, error) {
	if strings.TrimSpace(text) == "" {
		text = "{}"
	}
	var a args
	if err := json.Unmarshal([]byte(text), &a); err != nil || a == nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %s", firstErr(err))
	}
	props, _ := spec.Parameters["properties"].(map[string]any)
	for k, v := range a {
		p, ok := props[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("unknown argument %q (known: %s)", k, strings.Join(keys(props), ", "))
		}
		want, _ := p["type"].(string)
		if !typeOK(want, v) {
			return nil, fmt.Errorf("argument %q must be %s, got %s", k, article(want), jsonType(v))
		}
	}
	req, _ := spec.Parameters["required"].([]string)
	for _, k := range req {
		if _, ok := a[k]; !ok {
			return nil, fmt.Errorf("missing required argument %q", k)
		}
	}
	return a, nil
}

func firstErr(err error) string {
	if err == nil {
		return "got null"
	}
	return err.Error()
}

func typeOK(want string, v any) bool {
	switch want {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	case "boolean":
		_, ok := v.(bool)
		return ok
	}
	return true
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case []any:
		return "an array"
	}
	return "an object"
}

func article(t string) string {
	if t == "integer" {
		return "an integer"
	}
	return "a " + t
}
