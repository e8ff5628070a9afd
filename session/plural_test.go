package session

import "testing"

// Plural is the one count formatter of user-visible text: no "1 requests", no "2 retrys".
func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "request", "1 request"}, {0, "request", "0 requests"}, {2, "conflict", "2 conflicts"},
		{1, "retry", "1 retry"}, {2, "retry", "2 retries"}, {3, "key", "3 keys"}, {2, "day", "2 days"},
		{3, "patch", "3 patches"}, {2, "box", "2 boxes"}, {2, "leftover", "2 leftovers"},
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
