package record

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/summit-dev/summit/session"
)

// Redactor removes secrets from encoded event lines before they reach the disk: API key
// shapes (OpenAI and Anthropic sk-…, AWS AKIA…/ASIA…, GitHub ghp_/gho_/ghu_/ghs_/ghr_ and
// github_pat_…, Slack xox?-…), bearer tokens, and the values of environment variables whose
// names say they hold a secret (…_API_KEY, …_TOKEN, …_SECRET, …_PASSWORD and a few more).
//
// Invariants:
//   - Only string values inside the "data" object are rewritten. The envelope (ids, ts, type)
//     and object keys are never touched, so a redacted line decodes to the same event shape
//     and never loses its seq or type.
//   - A replacement never contains '"' or '\\' and every match lies inside one JSON string
//     and starts and ends on a character boundary of the escaped text, so the line stays
//     valid JSON.
//   - A line with nothing to redact is returned as the same slice, unchanged, after one pass
//     over its bytes with a lookup table (no regexp, no allocation): the recorder runs this
//     on every event. The scan is linear in the line whatever it holds.
//
// Redact sees one line. A secret split across streamed token or thinking deltas is joined
// before it is recorded by a StreamRedactor (the orchestrator keeps one per subagent stream).
// A secret used as an object key is kept (keys are schema names).
//
// A Redactor is immutable after NewRedactor and safe for concurrent use.
type Redactor struct {
	// needles are the spellings of the secret environment values, longest first, so a longer
	// secret wins over one it contains.
	needles []needle
	// envAt[c] lists the needles whose searched byte is c; trig[c] says c starts something
	// worth a look (trigTok: a token rule, trigEnv: a needle). The scan reads each byte of
	// the line once and does work only at the few bytes the table marks.
	envAt [256][]int32
	trig  [256]uint8
}

const (
	trigTok = 1 << iota
	trigEnv
	trigHide // the lead byte of a character that reorders or hides text (see mayHideAt)
)

// needle is one spelling (raw or JSON-escaped, ≥ minSecretLen bytes) of a secret
// environment value. It is found by its rarest byte, text[back]: the scan stops only where
// that byte occurs, and a common one ('e', ' ') would stop it at nearly every word.
type needle struct {
	text []byte
	back int
	repl []byte // [REDACTED:NAME]
}

func newNeedle(text, repl []byte) needle {
	best := 0
	for i := range text {
		if commonness(text[i]) < commonness(text[best]) {
			best = i
		}
	}
	return needle{text: text, back: best, repl: repl}
}

// commonness ranks bytes by how often they occur in transcripts (prose, code, JSON): space and
// frequent lowercase letters first, uppercase, digits and rare punctuation last.
func commonness(c byte) int {
	const lower = "etaoinsrhldcumfpgwybvkxjqz"
	switch {
	case c == ' ':
		return 100
	case c >= 'a' && c <= 'z':
		return 90 - strings.IndexByte(lower, c)
	case strings.IndexByte(`".,:/-_()=\'`, c) >= 0:
		return 50
	case c >= '0' && c <= '9':
		return 40
	case c >= 'A' && c <= 'Z':
		return 30
	}
	return 20
}

// Redacted is what a secret is replaced with; environment values become [REDACTED:NAME].
const Redacted = "[REDACTED]"

// minSecretLen is the shortest environment value treated as a secret: shorter ones ("1",
// "true", "debug") would redact ordinary words everywhere.
const minSecretLen = 6

// secretEnvSuffixes are the endings of variable names (upper-cased) whose values are secrets.
// A name equal to a suffix without its underscore (TOKEN, PASSWORD, …) counts too.
var secretEnvSuffixes = []string{
	"_API_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD",
	"_SECRET_KEY", "_ACCESS_KEY", "_PRIVATE_KEY",
}

// IsSecretEnvName reports whether the environment variable name's value is redacted.
func IsSecretEnvName(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range secretEnvSuffixes {
		if strings.HasSuffix(up, s) || up == s[1:] {
			return true
		}
	}
	return false
}

// NewRedactor returns a Redactor for the token patterns and for the secret-named variables
// of environ ("NAME=value" entries, as os.Environ returns them). Values shorter than 6 bytes
// are ignored.
func NewRedactor(environ []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || len(val) < minSecretLen || !IsSecretEnvName(name) || seen[val] {
			continue
		}
		seen[val] = true
		repl := []byte("[REDACTED:" + sanitizeEnvName(name) + "]")
		var forms [][]byte
		add := func(f []byte) {
			if len(f) >= minSecretLen && !slices.ContainsFunc(forms, func(g []byte) bool { return bytes.Equal(f, g) }) {
				forms = append(forms, f)
			}
		}
		// The raw spelling only occurs in a JSON string if it needs no escaping; otherwise
		// only its escaped spellings can appear. Both encoders that write lines are covered:
		// goccy (data, escapes <>& and U+2028/9) and appendString (the envelope; no HTML
		// escaping). Quotes are stripped: the value may sit inside a longer string.
		// The raw spelling is what a plain text stream (StreamRedactor, RedactText) holds; in an
		// encoded line it can only match when the value needs no escaping, and a match across
		// JSON punctuation is dropped by keepInValueStrings.
		add([]byte(val))
		if enc, err := json.Marshal(val); err == nil {
			add(enc[1 : len(enc)-1])
		}
		enc := appendString(nil, val)
		add(enc[1 : len(enc)-1])
		for _, f := range forms {
			r.needles = append(r.needles, newNeedle(f, repl))
		}
	}
	slices.SortStableFunc(r.needles, func(a, b needle) int { return len(b.text) - len(a.text) })
	for i, n := range r.needles {
		c := n.text[n.back]
		r.envAt[c] = append(r.envAt[c], int32(i))
		r.trig[c] |= trigEnv
	}
	for c, rules := range tokenAt {
		if len(rules) > 0 {
			r.trig[c] |= trigTok
		}
	}
	for c, lead := range leads {
		if lead {
			r.trig[c] |= trigHide
		}
	}
	return r
}

// sanitizeEnvName keeps the replacement text free of anything JSON would need to escape.
func sanitizeEnvName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// Redact returns line with its secrets replaced. When nothing matched it returns line itself
// (same backing array); otherwise a new slice. line is one encoded event (see AppendLine);
// for any other input only string values nested below the top-level object are touched.
func (r *Redactor) Redact(line []byte) []byte {
	out, _ := r.redact(line, 0)
	return out
}

// RedactEvent returns ev as a recorder would record it: encoded, redacted and, when that
// changed anything, decoded again. It is for a session that shows events without recording
// them; a Recorder does the same in Append.
func RedactEvent(r *Redactor, ev session.Event) (session.Event, error) {
	line, err := AppendLine(nil, ev)
	if err != nil {
		return ev, err
	}
	red, changed := r.redact(line, max(0, bytes.Index(line, dataKey)))
	if !changed {
		return ev, nil
	}
	return DecodeLine(red)
}

// RedactText redacts plain text (an input history line, a script line echoed on stderr): the
// same secrets as Redact, anywhere in the text, not only in JSON value strings.
func (r *Redactor) RedactText(text string) string {
	if r == nil {
		return text
	}
	out, _ := r.replace([]byte(text), r.find([]byte(text), 0))
	return string(out)
}

// redact is Redact that also says whether anything changed. Only line[from:] is searched:
// the recorder passes the start of "data", so the envelope (ids, ts, type: no secrets, and
// nothing it may rewrite) costs no scanning.
func (r *Redactor) redact(line []byte, from int) ([]byte, bool) {
	out, changed, _ := r.redactLine(line, from)
	return out, changed
}

// redactLine is redact that also reports whether line[from:] may hold a character that
// reorders or hides text (see mayHideAt), found in the same pass over its bytes.
func (r *Redactor) redactLine(line []byte, from int) (out []byte, changed, hide bool) {
	if r == nil {
		return line, false, mayHideText(line[from:])
	}
	spans, hide := r.scan(line, from)
	if len(spans) == 0 {
		return line, false, hide
	}
	out, changed = r.replace(line, keepInValueStrings(line, spans))
	return out, changed, hide
}

// replace puts each span's replacement in place of its bytes; overlapping spans merge.
func (r *Redactor) replace(line []byte, spans []span) ([]byte, bool) {
	if len(spans) == 0 {
		return line, false
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return len(b.repl) - len(a.repl) // [REDACTED:NAME] says more than [REDACTED]
	})
	out := make([]byte, 0, len(line))
	last := 0
	for _, s := range spans {
		if s.start < last { // overlaps a span already replaced
			if s.end > last {
				last = s.end
			}
			continue
		}
		out = append(out, line[last:s.start]...)
		out = append(out, s.repl...)
		last = s.end
	}
	out = append(out, line[last:]...)
	return out, true
}

// span is a byte range [start, end) of a line to be replaced by repl.
type span struct {
	start, end int
	repl       []byte
	// head is where the match begins: start, or for a keepHead token its anchor ("Bearer"),
	// which the StreamRedactor must hold with the body for the match to be found again.
	head int
}

// find returns the spans of the secrets in line[from:], in one pass over its bytes.
func (r *Redactor) find(line []byte, from int) []span {
	spans, _ := r.scan(line, from)
	return spans
}

// scan is find that also says whether the bytes may hold a character that reorders or hides
// text.
func (r *Redactor) scan(line []byte, from int) (spans []span, hide bool) {
	// Matches of one needle do not overlap (a run of a repeated secret is covered by
	// consecutive matches), and a token is not searched inside the last token found, which
	// keeps the scan linear whatever the input.
	var envNextBuf [16]int
	envNext := envNextBuf[:0]
	if len(r.needles) > len(envNextBuf) {
		envNext = make([]int, len(r.needles))
	} else {
		envNext = envNextBuf[:len(r.needles)]
	}
	tokNext := from
	trig := &r.trig
	for i := from; i < len(line); i++ {
		t := trig[line[i]]
		if t == 0 {
			continue
		}
		if t&trigHide != 0 && !hide {
			hide = mayHideAt(line, i)
		}
		if t&trigEnv != 0 {
			for _, ni := range r.envAt[line[i]] {
				n := &r.needles[ni]
				p := i - n.back
				if p >= from && p >= envNext[ni] && bytes.HasPrefix(line[p:], n.text) {
					spans = append(spans, span{p, p + len(n.text), n.repl, p})
					envNext[ni] = p + len(n.text)
				}
			}
		}
		if t&trigTok != 0 {
			for _, rule := range tokenAt[line[i]] {
				if sp, ok := rule.matchAt(line, max(from, tokNext), i); ok {
					spans = append(spans, sp)
					tokNext = sp.end
					break
				}
			}
		}
	}
	return spans, hide
}

// byteClass is a set of bytes a token is made of. None of the classes contain '"' or '\\',
// which is what keeps a token match inside one JSON string.
type byteClass [256]bool

func classOf(ranges ...string) *byteClass {
	var c byteClass
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for b := int(r[0]); b <= int(r[2]); b++ {
				c[b] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			c[r[i]] = true
		}
	}
	if c['"'] || c['\\'] {
		panic("redact: a token class must not contain a quote or backslash")
	}
	return &c
}

var (
	alnum       = classOf("A-Z", "a-z", "0-9")
	classSK     = classOf("A-Z", "a-z", "0-9", "_-")      // sk-, sk-proj-, sk-ant-api03-
	classAWS    = classOf("A-Z", "0-9")                   // AKIA/ASIA + 16
	classGH     = classOf("A-Z", "a-z", "0-9")            // ghp_ … (36 in practice)
	classGHPat  = classOf("A-Z", "a-z", "0-9", "_")       // github_pat_ … (82 in practice)
	classSlack  = classOf("A-Z", "a-z", "0-9", "-")       // xoxb-123-456-abc
	classBearer = classOf("A-Z", "a-z", "0-9", "-._~+/=") // RFC 6750 b64token
	redactedTok = []byte(Redacted)
)

// tokenRule is a secret shape: a literal anchor, then at least min bytes of class. The anchor
// must not follow a letter or digit (so "task-…" does not match "sk-…"), except a letter that
// ends a JSON escape like \n, since text often puts a key at the start of a line.
//
// The scan stops at find, a part of the anchor that starts with a byte rare in prose ("k-" of
// "sk-", "KIA" of "AKIA"), back bytes after the anchor's start: a common first byte ('s',
// 'g') would stop it at nearly every word.
type tokenRule struct {
	find   []byte
	back   int
	anchor []byte
	// check validates what follows the anchor and returns the index just after it where the
	// token body starts (ok false: not this shape). Nil means the body starts right after it.
	check func(line []byte, after int) (int, bool)
	class *byteClass
	min   int
	// keepHead keeps the anchor (and the spaces after it) and redacts only the body.
	keepHead bool
	// digitUnder: a body shorter than this must contain a digit ("Bearer authentication" is
	// prose, "Bearer eyJhbGciOi…" or "Bearer 1f9c…" is a token).
	digitUnder int
}

func newRule(anchor string, findAt int, r tokenRule) *tokenRule {
	r.anchor, r.find, r.back = []byte(anchor), []byte(anchor[findAt:]), findAt
	return &r
}

var tokenRules = []*tokenRule{
	newRule("sk-", 1, tokenRule{class: classSK, min: 20}),
	newRule("AKIA", 1, tokenRule{class: classAWS, min: 16}),
	newRule("ASIA", 1, tokenRule{class: classAWS, min: 16}),
	// gh[pousr]_: found by its underscore (back 3), which prose rarely has.
	{find: []byte("_"), back: 3, anchor: []byte("gh"), check: ghKind, class: classGH, min: 20},
	newRule("github_pat_", 6, tokenRule{class: classGHPat, min: 20}),
	newRule("xox", 0, tokenRule{check: slackKind, class: classSlack, min: 10}),
	newRule("Bearer", 0, tokenRule{check: spaces, class: classBearer, min: 8, keepHead: true, digitUnder: 20}),
	newRule("bearer", 0, tokenRule{check: spaces, class: classBearer, min: 8, keepHead: true, digitUnder: 20}),
	newRule("BEARER", 0, tokenRule{check: spaces, class: classBearer, min: 8, keepHead: true, digitUnder: 20}),
}

// tokenAt[c] lists the rules whose searched part starts with byte c.
var tokenAt = func() (at [256][]*tokenRule) {
	for _, r := range tokenRules {
		at[r.find[0]] = append(at[r.find[0]], r)
	}
	return at
}()

// matchAt reports the token whose searched part starts at i, if there is one and its anchor
// starts at or after min.
func (rule *tokenRule) matchAt(line []byte, min, i int) (span, bool) {
	p := i - rule.back // where the anchor starts
	if p < min || !bytes.HasPrefix(line[i:], rule.find) || !bytes.HasPrefix(line[p:], rule.anchor) || !tokenBoundary(line, p) {
		return span{}, false
	}
	body := p + len(rule.anchor)
	if rule.check != nil {
		var ok bool
		if body, ok = rule.check(line, body); !ok {
			return span{}, false
		}
	}
	end, digit := body, false
	for end < len(line) && rule.class[line[end]] {
		digit = digit || line[end] >= '0' && line[end] <= '9'
		end++
	}
	if n := end - body; n < rule.min || n < rule.digitUnder && !digit {
		return span{}, false
	}
	if rule.keepHead {
		return span{body, end, redactedTok, p}, true
	}
	return span{p, end, redactedTok, p}, true
}

// ghKind accepts the GitHub token prefixes gh[pousr]_.
func ghKind(line []byte, after int) (int, bool) {
	if after+2 <= len(line) && strings.IndexByte("pousr", line[after]) >= 0 && line[after+1] == '_' {
		return after + 2, true
	}
	return 0, false
}

// slackKind accepts the Slack token prefixes xox[abprs]-.
func slackKind(line []byte, after int) (int, bool) {
	if after+2 <= len(line) && strings.IndexByte("abprs", line[after]) >= 0 && line[after+1] == '-' {
		return after + 2, true
	}
	return 0, false
}

// spaces accepts one or more spaces after "Bearer".
func spaces(line []byte, after int) (int, bool) {
	i := after
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i, i > after
}

// tokenBoundary reports whether a token may start at p: at the start, after a byte that is not
// a letter or digit, or after a JSON escape such as \n, \t or \u003c (goccy writes '<' so).
func tokenBoundary(line []byte, p int) bool {
	if p == 0 || !alnum[line[p-1]] {
		return true
	}
	if p >= 2 && line[p-2] == '\\' && strings.IndexByte("bfnrt", line[p-1]) >= 0 {
		return true
	}
	return p >= 6 && line[p-6] == '\\' && line[p-5] == 'u' && isHex(line[p-4]) && isHex(line[p-3]) && isHex(line[p-2]) && isHex(line[p-1])
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// keepInValueStrings drops the spans that do not lie wholly inside one string value nested in
// the top-level object (for an event line: inside "data"), or that start in the middle of an
// escape sequence. It scans the line once, which only happens when something matched.
func keepInValueStrings(line []byte, spans []span) []span {
	type region struct{ start, end int } // string contents, quotes excluded
	var regions []region
	// A minimal JSON scanner: strings, and whether the next string of the current object is
	// a key. Brackets inside strings are skipped with the string.
	var stack []byte // '{' or '['
	expectKey := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '{', '[':
			stack = append(stack, c)
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
			expectKey = false
		case '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if !expectKey && len(stack) >= 2 {
				regions = append(regions, region{i + 1, min(j, len(line))})
			}
			i = j
		}
	}
	kept := spans[:0]
	for _, s := range spans {
		// The region that could hold s is the last one starting at or before it.
		k := sort.Search(len(regions), func(k int) bool { return regions[k].start > s.start }) - 1
		if k >= 0 && s.end <= regions[k].end && !midEscape(line, regions[k].start, s.start) && !midEscape(line, regions[k].start, s.end) {
			kept = append(kept, s)
		}
	}
	return kept
}

// midEscape reports whether position p (between two bytes) of a string whose contents start
// at lo falls inside an escape sequence: right after its backslash, or within the four hex
// digits of \uXXXX. Only the few bytes before p are looked at.
func midEscape(line []byte, lo, p int) bool {
	for q := p - 1; q >= lo && q >= p-5; q-- {
		if line[q] != '\\' {
			continue
		}
		// q is the nearest backslash before p. It starts an escape if the run of backslashes
		// ending at it is odd (in "\\\\" each pair is one escaped backslash).
		run := 0
		for k := q; k >= lo && line[k] == '\\'; k-- {
			run++
		}
		return run%2 == 1 && (p-q == 1 || line[q+1] == 'u' && p-q <= 5)
	}
	return false
}
