package acp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/summit-dev/summit/agents"
)

// The file methods go through the sandbox's read_file and write_file, so they reach what
// summit's own tools reach and nothing else: the worktree, never .summit/, never out of it by
// a symlink or a hard link. The sandbox a run gets must have MaxResult ≥ MaxRead, so a file
// read_file accepts whole comes back whole (an agent writes back what it read).

// errNotFound is the answer to a read of a file that does not exist: ACP's "Resource not
// found" (-32002). Gemini CLI turns an error whose message holds "Resource not found" (or
// "ENOENT") into a Node ENOENT, which its write_file and replace take as "a new file".
func errNotFound(path string) error {
	return &sdk.RequestError{Code: -32002, Message: "Resource not found: ENOENT: no such file or directory: " + path,
		Data: map[string]any{"uri": path}}
}

// ReadTextFile serves fs/read_text_file: the file's text, or lines line.. (1-based) up to
// limit lines of it.
func (c *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	if !c.enter() {
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	defer c.leave()
	c.barrier(ctx)
	c = c.route(p.SessionId)
	if err := c.gate(ctx, agents.ToolReadFile, map[string]any{"path": p.Path}, "read "+p.Path); err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	args, _ := json.Marshal(map[string]any{"path": p.Path})
	r := c.r.c.Sandbox.Call(ctx, agents.ToolReadFile, string(args))
	if r.IsError {
		if strings.Contains(r.Output, "no such file or directory") {
			if c.refusesAlways() {
				// Gemini CLI cannot read ACP's "not found" as ENOENT (its SDK rejects with a
				// plain object its check does not see), so its write_file of a new file fails.
				// An empty file lets it create one; its read_file then shows an empty file.
				return sdk.ReadTextFileResponse{Content: ""}, nil
			}
			return sdk.ReadTextFileResponse{}, errNotFound(p.Path)
		}
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32603, Message: r.Output}
	}
	return sdk.ReadTextFileResponse{Content: lineRange(r.Output, p.Line, p.Limit)}, nil
}

// lineRange is the lines of text from line (1-based; nil or < 1: the first) on, at most limit
// of them (nil: all), each with its line ending.
func lineRange(text string, line, limit *int) string {
	if (line == nil || *line <= 1) && limit == nil {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start := 0
	if line != nil && *line > 1 {
		start = *line - 1
	}
	if start >= len(lines) {
		return ""
	}
	end := len(lines)
	if limit != nil && *limit >= 0 && start+*limit < end {
		end = start + *limit
	}
	return strings.Join(lines[start:end], "")
}

// WriteTextFile serves fs/write_text_file: the file replaced whole (by a rename), missing
// parent directories created. The subagent's policy decides first: plan mode refuses.
func (c *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	if !c.enter() {
		return sdk.WriteTextFileResponse{}, &sdk.RequestError{Code: -32800, Message: "Request cancelled"}
	}
	defer c.leave()
	c.barrier(ctx)
	c = c.route(p.SessionId)
	if err := c.gate(ctx, agents.ToolWriteFile, map[string]any{"path": p.Path, "bytes": len(p.Content)}, "write "+p.Path); err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	args, _ := json.Marshal(map[string]any{"path": p.Path, "content": p.Content})
	r := c.r.c.Sandbox.Call(ctx, agents.ToolWriteFile, string(args))
	if r.IsError {
		return sdk.WriteTextFileResponse{}, &sdk.RequestError{Code: -32603, Message: r.Output}
	}
	top := c.root() // the run's artifacts, whichever of its sessions wrote
	top.mu.Lock()
	for _, w := range r.Written {
		seen := false
		for _, x := range top.written {
			seen = seen || x == w
		}
		if !seen {
			top.written = append(top.written, w)
		}
	}
	top.mu.Unlock()
	return sdk.WriteTextFileResponse{}, nil
}
