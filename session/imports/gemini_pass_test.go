package imports

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"
)

// genGeminiChat writes a random Gemini CLI JSONL chat: messages of every type, with tool
// calls, thoughts and the content's three shapes; records that update a message (mostly a
// recent one, now and then one far back), rewinds (to a recent message, one far back, or an
// id never seen), $set updates, unknown records, malformed lines of both kinds (not JSON;
// JSON but not a message) and sometimes a torn last line.
func genGeminiChat(rng *rand.Rand, msgs int, malformed bool) []byte {
	var b bytes.Buffer
	if rng.IntN(8) > 0 {
		b.WriteString(`{"sessionId":"pass-1","projectHash":"p","startTime":"2026-05-01T12:00:00.000Z","kind":"main"}` + "\n")
	}
	ts := func(i int) string {
		return fmt.Sprintf("2026-05-01T%02d:%02d:%02d.%03dZ", 12+i/3600%10, i/60%60, i%60, i%1000)
	}
	content := func(i int) string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprintf(`"text %d"`, i)
		case 1:
			return fmt.Sprintf(`[{"text":"part %d"},{"text":"thought %d","thought":true}]`, i, i)
		case 2:
			return fmt.Sprintf(`["a string %d",{"text":"and a part"}]`, i)
		}
		return fmt.Sprintf(`{"text":"one part %d \u00e9\\n"}`, i)
	}
	message := func(i int, id string) {
		switch typ := []string{"user", "gemini", "gemini", "gemini", "info", "error", "warning", "odd"}[rng.IntN(8)]; typ {
		case "gemini":
			status := []string{"success", "success", "error", "cancelled"}[rng.IntN(4)]
			fmt.Fprintf(&b, `{"id":%q,"timestamp":%q,"type":"gemini","content":%s,"model":"gemini-2.5-pro","thoughts":[{"subject":"S%d","description":"d","timestamp":%q}],"tokens":{"input":%d,"output":%d},"toolCalls":[{"id":"c%d","name":"read_file","args":{"absolute_path":"/p/f%d"},"status":%q,"timestamp":%q,"result":[{"functionResponse":{"id":"c%d","name":"read_file","response":{"output":"out %d"}}}]}]}`+"\n",
				id, ts(i), content(i), i, ts(i), i, i%7, i, i, status, ts(i), i, i)
		default:
			fmt.Fprintf(&b, `{"id":%q,"timestamp":%q,"type":%q,"content":%s}`+"\n", id, ts(i), typ, content(i))
		}
	}
	var ids []string
	for i := 0; i < msgs; i++ {
		switch k := rng.IntN(100); {
		case k < 8 && len(ids) > 0: // an update of a recent message
			message(i, ids[len(ids)-1-rng.IntN(min(len(ids), 5))])
		case k < 9 && len(ids) > 0: // of any message
			message(i, ids[rng.IntN(len(ids))])
		case k < 11 && len(ids) > 0: // a rewind to a recent message
			j := len(ids) - 1 - rng.IntN(min(len(ids), 6))
			fmt.Fprintf(&b, `{"$rewindTo":%q}`+"\n", ids[j])
			ids = ids[:j]
		case k < 12 && rng.IntN(4) == 0: // to a message far back, or to none known
			if len(ids) > 0 && rng.IntN(2) == 0 {
				j := rng.IntN(len(ids))
				fmt.Fprintf(&b, `{"$rewindTo":%q}`+"\n", ids[j])
				ids = ids[:j]
			} else {
				b.WriteString(`{"$rewindTo":"never-seen"}` + "\n")
				ids = ids[:0]
			}
		case k < 14:
			fmt.Fprintf(&b, `{"$set":{"lastUpdated":%q,"summary":"summary %d"}}`+"\n", ts(i), i)
		case k < 15:
			b.WriteString(`{"something":"else"}` + "\n")
		case k < 16 && malformed:
			b.WriteString("{not json\n")
		case k < 17 && malformed:
			id := fmt.Sprintf("m%d", i)
			fmt.Fprintf(&b, `{"id":%q,"timestamp":%d,"type":"gemini","content":"x"}`+"\n", id, i) // a number where a time goes
			ids = append(ids, id)
		case k < 18:
			b.WriteString("\n   \n")
		default:
			id := fmt.Sprintf("m%d", i)
			message(i, id)
			ids = append(ids, id)
		}
	}
	if malformed && rng.IntN(2) == 0 {
		fmt.Fprintf(&b, `{"id":"m%d","timestamp":"2026-05-01T13:00:00.000Z","type":"gemini","content":"tor`, msgs)
	}
	return b.Bytes()
}

// TestGeminiOnePassMatchesTwo: a JSONL chat read in one pass (stream, its window of recent
// messages) writes the same recording, byte for byte, as read in two (records, replay),
// whatever its records change; a record that changes a message the window has mapped
// already reads the session again in two passes.
func TestGeminiOnePassMatchesTwo(t *testing.T) {
	dir := t.TempDir()
	redoneBefore := gmRedone.Load()
	redos, fails, ok := 0, 0, 0
	for seed := range 60 {
		rng := rand.New(rand.NewPCG(uint64(seed), 31))
		msgs := 20 + rng.IntN(200)
		if seed%6 == 0 {
			msgs = 3 * gmWindow // past the window
		}
		path := filepath.Join(dir, fmt.Sprintf("session-2026-05-01T12-00-pass%d.jsonl", seed))
		if err := os.WriteFile(path, genGeminiChat(rng, msgs, seed%2 == 0), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, lenient := range []bool{true, false} {
			before := gmRedone.Load()
			one, err1 := Import(Unit{Format: Gemini, Path: path}, filepath.Join(dir, "one"), Options{Environ: []string{}, Lenient: lenient})
			redo := gmRedone.Load() > before
			if redo {
				redos++
			}
			two, err2 := Import(Unit{Format: Gemini, Path: path}, filepath.Join(dir, "two"), Options{Environ: []string{}, Lenient: lenient, twoPass: true})
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("seed %d lenient %v: one pass: %v; two: %v", seed, lenient, err1, err2)
			}
			if err1 != nil {
				fails++
				if err1.Error() != err2.Error() || !strings.Contains(err1.Error(), path+":") {
					t.Fatalf("seed %d: one pass fails %v; two fail %v", seed, err1, err2)
				}
				continue
			}
			a, _ := os.ReadFile(one.Path)
			b, _ := os.ReadFile(two.Path)
			if !bytes.Equal(a, b) {
				t.Fatalf("seed %d lenient %v (read again in two passes: %v): the recordings differ at byte %d of %d/%d:\n%s", seed, lenient, redo, diffAt(a, b), len(a), len(b), around(a, diffAt(a, b)))
			}
			ok++
			if one.Events != two.Events || one.Lines != two.Lines || strings.Join(one.Warnings, "\n") != strings.Join(two.Warnings, "\n") {
				t.Fatalf("seed %d: results differ: %+v / %+v", seed, one, two)
			}
		}
	}
	if redos == 0 || gmRedone.Load()-redoneBefore != int64(redos) {
		t.Errorf("no chat was read again in two passes (%d)", redos)
	}
	if fails == 0 || ok < 60 {
		t.Errorf("%d imports failed (both ways alike) and %d succeeded: the chats do not cover both", fails, ok)
	}
	t.Logf("%d of 120 imports read again in two passes; %d failed alike, %d wrote the same recording", redos, fails, ok)
}

func diffAt(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, i int) string {
	lo := max(0, bytes.LastIndexByte(b[:i], '\n'))
	hi := bytes.IndexByte(b[i:], '\n')
	if hi < 0 {
		hi = len(b) - i
	}
	return string(b[lo : i+hi])
}

// TestGeminiLateSessionID: a subagent's chat whose session id comes in a $set after more
// messages than the window holds were mapped (to the agent its file name named) is read again
// in two passes, and its subagent is the one its session id names.
func TestGeminiLateSessionID(t *testing.T) {
	chats := filepath.Join(t.TempDir(), "tmp", "abc", "chats")
	if err := os.MkdirAll(filepath.Join(chats, "par-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	main := `{"sessionId":"par-1","projectHash":"abc","startTime":"2026-05-01T12:00:00.000Z","kind":"main"}` + "\n" +
		`{"id":"u1","timestamp":"2026-05-01T12:00:01.000Z","type":"user","content":"go"}` + "\n"
	var sub strings.Builder
	for i := range gmWindow + 10 {
		fmt.Fprintf(&sub, `{"id":"s%d","timestamp":"2026-05-01T12:00:02.000Z","type":"gemini","content":"step %d"}`+"\n", i, i)
	}
	sub.WriteString(`{"$set":{"sessionId":"late-id","summary":"the helper"}}` + "\n")
	if err := os.WriteFile(filepath.Join(chats, "session-2026-05-01T12-00-par1.jsonl"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chats, "par-1", "helper-x1.jsonl"), []byte(sub.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	before := gmRedone.Load()
	st, _, _ := load(t, plan(t, filepath.Join(chats, "session-2026-05-01T12-00-par1.jsonl")))
	if gmRedone.Load() != before+1 {
		t.Errorf("the chat was not read again in two passes")
	}
	if got, want := tree(st), "sa-1 gemini-cli main <-  success\nsa-2 gemini-subagent the helper <- sa-1 success\n"; got != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", got, want)
	}
	if sa := st.Subagent("sa-2"); sa.AgentSessionID != "late-id" || !strings.Contains(transcript(st, "sa-2"), fmt.Sprintf("step %d", gmWindow+9)) {
		t.Errorf("the subagent's session id %q, transcript ends %q", sa.AgentSessionID, transcript(st, "sa-2")[max(0, len(transcript(st, "sa-2"))-40):])
	}
}

// TestGeminiRewoundBadLine: a rewind drops a message whose line is JSON but not a valid
// message, and a later record has its id: that record starts a new message, and the message
// written between them stays (the dropped line's id once pointed at the position the next
// message took, and the later record replaced that message). Both readers agree.
func TestGeminiRewoundBadLine(t *testing.T) {
	chats := filepath.Join(t.TempDir(), "tmp", "abc", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(chats, "session-2026-05-01T12-00-rew1.jsonl")
	lines := []string{
		`{"sessionId":"rew-1","projectHash":"abc","startTime":"2026-05-01T12:00:00.000Z","kind":"main"}`,
		`{"id":"a","timestamp":"2026-05-01T12:00:01.000Z","type":"user","content":"first"}`,
		`{"id":"x","timestamp":"2026-05-01T12:00:02.000Z","type":"gemini","content":"lost","toolCalls":"not a list"}`,
		`{"$rewindTo":"x"}`,
		`{"id":"y","timestamp":"2026-05-01T12:00:03.000Z","type":"user","content":"second"}`,
		`{"id":"x","timestamp":"2026-05-01T12:00:04.000Z","type":"user","content":"third"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, twoPass := range []bool{false, true} {
		res, err := Import(Unit{Format: Gemini, Path: path}, filepath.Join(t.TempDir(), "out"), Options{Environ: []string{}, Lenient: true, twoPass: twoPass})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if ev, err := record.DecodeLine([]byte(l)); err == nil {
				if n, ok := ev.Data.(session.UserNote); ok && !strings.HasPrefix(n.Text, "[imported") {
					notes = append(notes, n.Text)
				}
			}
		}
		if got := strings.Join(notes, ","); got != "first,second,third" {
			t.Errorf("two passes %v: the user's messages are %q, want first,second,third", twoPass, got)
		}
	}
}
