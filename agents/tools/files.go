package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

func readFile(_ context.Context, s *Sandbox, a args) Result {
	p, err := s.resolve(a.str("path"))
	if err != nil {
		return errResult("read_file: %v", err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return errResult("read_file: %s: no such file", a.str("path"))
	}
	if st.IsDir() {
		return errResult("read_file: %s is a directory; use glob to list it", a.str("path"))
	}
	offset, hasOff := a.num("offset")
	limit, hasLim := a.num("limit")
	if offset < 0 || hasLim && limit <= 0 {
		return errResult("read_file: offset must be ≥ 0 and limit > 0")
	}
	ranged := hasOff || hasLim
	if !ranged && st.Size() > s.o.MaxRead {
		return errResult("read_file: %s is %d bytes, over the %d-byte cap; read a range with offset and limit", a.str("path"), st.Size(), s.o.MaxRead)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return errResult("read_file: %v", err)
	}
	if binary(data) {
		return errResult("read_file: %s is a binary file (%d bytes)", a.str("path"), len(data))
	}
	if !ranged {
		return Result{Output: string(data)}
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if offset >= len(lines) && len(lines) > 0 {
		return errResult("read_file: offset %d is past the end (%d lines)", offset, len(lines))
	}
	end := len(lines)
	if hasLim && offset+limit < end {
		end = offset + limit
	}
	return Result{Output: fmt.Sprintf("[%s lines %d-%d of %d]\n%s", a.str("path"), offset+1, end, len(lines),
		strings.Join(lines[offset:end], ""))}
}

// binary: a NUL byte in the first 8 KiB, or text that is not valid UTF-8 there.
func binary(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Allow a rune cut at the 8 KiB boundary.
	for i := 0; i < 4 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// writeAtomic writes content through a temporary file in the same directory and a rename,
// keeping an existing file's mode.
func writeAtomic(p string, content []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(p); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", p)
		}
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".summit-write-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

func writeFile(_ context.Context, s *Sandbox, a args) Result {
	p, err := s.resolve(a.str("path"))
	if err != nil {
		return errResult("write_file: %v", err)
	}
	content := a.str("content")
	if err := writeAtomic(p, []byte(content)); err != nil {
		return errResult("write_file: %v", err)
	}
	rel := s.rel(p)
	return Result{Output: fmt.Sprintf("wrote %s (%d bytes)", rel, len(content)), Written: []string{rel}}
}

func replaceTool(_ context.Context, s *Sandbox, a args) Result {
	p, err := s.resolve(a.str("path"))
	if err != nil {
		return errResult("replace: %v", err)
	}
	old, repl := a.str("old_string"), a.str("new_string")
	want := 1
	if n, ok := a.num("expected_replacements"); ok {
		want = n
	}
	if old == "" {
		return errResult("replace: old_string is empty; use write_file to create a file")
	}
	if want < 1 {
		return errResult("replace: expected_replacements must be at least 1")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return errResult("replace: %s: no such file", a.str("path"))
	}
	text := string(data)
	found := strings.Count(text, old)
	switch {
	case found == 0:
		msg := fmt.Sprintf("replace: old_string not found in %s", a.str("path"))
		if line := fuzzyLine(text, old); line > 0 {
			msg += fmt.Sprintf("; it matches at line %d if whitespace is ignored: copy the exact text", line)
		}
		return errResult("%s", msg)
	case found != want:
		return errResult("replace: old_string occurs %d times in %s, expected %d; add context to make it unique or set expected_replacements", found, a.str("path"), want)
	}
	if err := writeAtomic(p, []byte(strings.ReplaceAll(text, old, repl))); err != nil {
		return errResult("replace: %v", err)
	}
	rel := s.rel(p)
	return Result{Output: fmt.Sprintf("replaced %d occurrence(s) in %s", found, rel), Written: []string{rel}}
}

// fuzzyLine finds old in text with all whitespace ignored and returns its 1-based line, or 0.
func fuzzyLine(text, old string) int {
	squash := func(s string) (string, []int) {
		var b strings.Builder
		var at []int
		for i, r := range s {
			if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
				b.WriteRune(r)
				at = append(at, i)
			}
		}
		return b.String(), at
	}
	st, at := squash(text)
	so, _ := squash(old)
	if so == "" {
		return 0
	}
	i := strings.Index(st, so)
	if i < 0 {
		return 0
	}
	// i is a byte index in st; count runes to map back.
	n := utf8.RuneCountInString(st[:i])
	return strings.Count(text[:at[n]], "\n") + 1
}
