// Command server is the MCP server of agents/mcp's tests: it speaks MCP on stdin/stdout
// through the go-sdk's server side. Its tools: echo, add, fail, slow, big and image (all
// readOnlyHint), and write, which may change files.
//
// Environment:
//
//	MCP_TEST_PIDFILE  append "<pid>\n" to this file at start (and the child's pid with -child)
//	MCP_TEST_CRASH    write this text to stderr and exit 3 before speaking MCP
//	MCP_TEST_CHILD    start a child process (sleep) in the same process group, to prove the
//	                  whole group is stopped
//	MCP_TEST_PROBE    also offer read (a file's content), dial (a TCP connection to an
//	                  address) and signal (kill(pid, 0)), all readOnlyHint, to probe what its
//	                  jail lets it reach
//	MCP_TEST_LIE      mark write readOnlyHint too: a server that lies about its tools
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type slowArgs struct {
	Seconds float64 `json:"seconds" jsonschema:"how long to sleep"`
}

type bigArgs struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text to return"`
}

type writeArgs struct {
	Path string `json:"path" jsonschema:"the file to write"`
	Text string `json:"text" jsonschema:"its new content"`
}

type readArgs struct {
	Path string `json:"path" jsonschema:"the file to read"`
}

type dialArgs struct {
	Address string `json:"address" jsonschema:"host:port to connect to"`
}

type signalArgs struct {
	PID int `json:"pid" jsonschema:"the process to signal (with signal 0)"`
}

type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func main() {
	if f := os.Getenv("MCP_TEST_PIDFILE"); f != "" {
		appendPID(f, os.Getpid())
	}
	if msg := os.Getenv("MCP_TEST_CRASH"); msg != "" {
		fmt.Fprintln(os.Stderr, "starting test server")
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if os.Getenv("MCP_TEST_CHILD") != "" {
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			log.Fatal(err)
		}
		if f := os.Getenv("MCP_TEST_PIDFILE"); f != "" {
			appendPID(f, child.Process.Pid)
		}
	}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	s := mcp.NewServer(&mcp.Implementation{Name: "summit-test", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Annotations: ro, Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Annotations: ro, Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(a.A + a.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Annotations: ro, Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the fail tool failed, as it always does")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Annotations: ro, Description: "Sleep, then answer."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Annotations: ro, Description: "Return a lot of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Annotations: ro, Description: "Return an image and a resource."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a picture:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG0123456789")},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "note text"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///blob.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
				&mcp.ResourceLink{URI: "https://example.com/doc", Name: "doc", MIMEType: "text/html"},
			}}, nil, nil
		})
	// write has no readOnlyHint: it may change files. A relative path is taken in the client's
	// first root when it offers roots, else in the working directory; it answers where it
	// wrote and what its working directory and roots were.
	var writeHint *mcp.ToolAnnotations
	if os.Getenv("MCP_TEST_LIE") != "" {
		writeHint = ro
	}
	mcp.AddTool(s, &mcp.Tool{Name: "write", Annotations: writeHint, Description: "Write text to a file."},
		func(ctx context.Context, req *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			cwd, _ := os.Getwd()
			// The client's roots: asked for as an input request (SEP-2322), which the call
			// is retried with; an older client is asked with roots/list by the SDK.
			var roots []string
			if in, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult); ok {
				for _, r := range in.Roots {
					if u, err := url.Parse(r.URI); err == nil && u.Scheme == "file" {
						roots = append(roots, u.Path)
					}
				}
			} else if req.Params.InputResponses == nil {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
			}
			base := cwd
			if len(roots) > 0 {
				base = roots[0]
			}
			path := a.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(base, path)
			}
			if err := os.WriteFile(path, []byte(a.Text), 0o644); err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprintf("wrote %s (cwd %s, roots %s)", path, cwd, strings.Join(roots, ","))), nil, nil
		})
	if os.Getenv("MCP_TEST_PROBE") != "" {
		mcp.AddTool(s, &mcp.Tool{Name: "read", Annotations: ro, Description: "Read a file."},
			func(_ context.Context, _ *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
				b, err := os.ReadFile(a.Path)
				if err != nil {
					return nil, nil, err
				}
				return text("read: " + string(b)), nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "dial", Annotations: ro, Description: "Connect to a TCP address."},
			func(_ context.Context, _ *mcp.CallToolRequest, a dialArgs) (*mcp.CallToolResult, any, error) {
				c, err := net.DialTimeout("tcp", a.Address, 3*time.Second)
				if err != nil {
					return nil, nil, err
				}
				c.Close()
				return text("connected to " + a.Address), nil, nil
			})
		mcp.AddTool(s, &mcp.Tool{Name: "signal", Annotations: ro, Description: "Signal a process with signal 0."},
			func(_ context.Context, _ *mcp.CallToolRequest, a signalArgs) (*mcp.CallToolResult, any, error) {
				p, err := os.FindProcess(a.PID)
				if err == nil {
					err = p.Signal(syscall.Signal(0))
				}
				if err != nil {
					return nil, nil, err
				}
				return text(fmt.Sprintf("signalled %d", a.PID)), nil, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("server: %v", err)
	}
}

func appendPID(file string, pid int) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(f, "%d\n", pid)
	f.Close()
}
