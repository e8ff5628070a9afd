package tools

import (
	"context"
	"io"
	"mime"
	"net/http"
	"net/url"
	"unicode/utf8"
)

// fetchCeiling bounds how much of a body web_fetch downloads to learn its size; beyond it
// the truncation marker says "more than".
const fetchCeiling = 16 << 20

func webFetch(ctx context.Context, s *Sandbox, a args) Result {
	raw := a.str("url")
	u, err := url.Parse(raw)
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return errResult("web_fetch: %q is not an absolute http or https URL", raw)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	req.Header.Set("User-Agent", "summit-web-fetch")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json, */*;q=0.5")
	client := *s.o.HTTPClient
	client.CheckRedirect = checkRedirect(ctx)
	resp, err := client.Do(req)
	if err != nil {
		return errResult("web_fetch: %v", err)
	}
	defer resp.Body.Close()
	body := &capBuf{max: s.o.MaxResult + utf8.UTFMax}
	n, err := io.Copy(body, io.LimitReader(resp.Body, fetchCeiling+1))
	if err != nil {
		return errResult("web_fetch: reading %s: %v", raw, err)
	}
	total := n
	if n > fetchCeiling {
		total = -1
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The start of an error body often says why (an API's JSON error, say).
		return errResult("web_fetch: %s returned %s\n%s", raw, resp.Status, clip(string(body.buf), total, 512))
	}
	if looksBinary(body.buf[:min(len(body.buf), sniffLen)]) {
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		return errResult("web_fetch: %s returned binary content (%s, %d bytes)", raw, ct, n)
	}
	return Result{Output: clip(string(body.buf), total, s.o.MaxResult)}
}

func webSearch(context.Context, *Sandbox, args) Result {
	return errResult("web_search has no search backend configured")
}
