package sessiontest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
)

func Fold(t testing.TB, evs []session.Event) *session.State {
	t.Helper()
	s := &session.State{}
	for _, e := range evs {
		if err := session.Apply(s, e); err != nil {
			t.Fatalf("apply %v: %v", e, err)
		}
	}
	return s
}

// Deep renders the whole state as JSON (exported fields; pointers followed), including what
// render.Render does not show (flags such as ReviewRequested, PendingRequest) and transcript items.
func Deep(s *session.State) string {
	var b strings.Builder
	put := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	put(s)
	for _, sa := range s.Subagents {
		for i := 0; i < sa.Transcript.Len(); i++ {
			put(sa.Transcript.Item(i))
			put(sa.Transcript.Text(i))
		}
	}
	return b.String()
}
