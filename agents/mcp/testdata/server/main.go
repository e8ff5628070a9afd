// Command server is the MCP server of agents/mcp's tests: it speaks MCP on stdin/stdout
// through the go-sdk's server side. Its tools: echo, add, fail, slow, big and image.
//
// Environment:
//
//	MCP_TEST_PIDFILE  append "<pid>\n" to this file at start (and the child's pid with -child)
//	MCP_TEST_CRASH    write this text to stderr and exit 3 before speaking MCP
//	MCP_TEST_CHILD    start a child process (sleep) in the same process group, to prove the
//	                  whole group is stopped
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
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
	s := mcp.NewServer(&mcp.Implementation{Name: "summit-test", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(a.A + a.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the fail tool failed, as it always does")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleep, then answer."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return a lot of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Return an image and a resource."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "a picture:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG0123456789")},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "note text"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///blob.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
				&mcp.ResourceLink{URI: "https://example.com/doc", Name: "doc", MIMEType: "text/html"},
			}}, nil, nil
		})
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
