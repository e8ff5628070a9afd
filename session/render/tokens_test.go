package render

import (
	"fmt"
	"testing"

	"github.com/summit-dev/summit/session"
)

// TestFormatTokensAsFmt: the strconv formatting writes what fmt's %.1fk and %d wrote, across
// the values a count takes (the rounding at each .x5 and at 999.95k included).
func TestFormatTokensAsFmt(t *testing.T) {
	old := func(n int64, prefix string) string {
		if n >= 1000 {
			return fmt.Sprintf("%s%.1fk", prefix, float64(n)/1000)
		}
		return fmt.Sprintf("%s%d", prefix, n)
	}
	for n := int64(0); n < 2_000_000; n += 1 + n/5000 {
		if got, want := formatTokens(session.Tokens{Output: n}, 0), old(n, ""); got != want {
			t.Fatalf("%d tokens: %q, fmt wrote %q", n, got, want)
		}
		if got, want := formatTokens(session.Tokens{}, int(4*n)), old(n, "~"); n > 0 && got != want {
			t.Fatalf("%d streamed bytes: %q, fmt wrote %q", 4*n, got, want)
		}
	}
}
