package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// render turns a call's result into the text the model sees: text content as it is, other
// content summarised in brackets, one part per line. Structured content stands in when there
// is no other content.
func render(r *sdk.CallToolResult) (string, bool) {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, details(c.Name, c.MIMEType)))
		case *sdk.EmbeddedResource:
			rc := c.Resource
			switch {
			case rc == nil:
				parts = append(parts, "[resource: empty]")
			case rc.Blob != nil:
				parts = append(parts, fmt.Sprintf("[resource: %s, %s, %d bytes]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob)))
			default:
				parts = append(parts, fmt.Sprintf("[resource: %s%s]\n%s", rc.URI, details("", rc.MIMEType), rc.Text))
			}
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, fmt.Sprintf("[content: %s]", b))
		}
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n"), r.IsError
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func details(name, mime string) string {
	var ds []string
	for _, d := range []string{name, mime} {
		if d != "" {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return ""
	}
	return " (" + strings.Join(ds, ", ") + ")"
}

// clip caps text at max bytes on a rune boundary with the tools' truncation marker, and makes
// it valid UTF-8 (results go to a model API and a JSON log).
func clip(text string, max int) string {
	if len(text) > max {
		cut := max
		for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(text[cut]); i++ {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[... truncated: %d bytes total, showing the first %d]", len(text), cut)
	}
	return strings.ToValidUTF8(text, "\uFFFD")
}
