package commands

import (
	"reflect"
	"strings"
	"testing"
)

var testLive = LiveIDs{
	Subagents:    []string{"sa-10", "sa-2", "sa-1", "bogus", "sa-2"},
	Convergences: []string{"cv-1"},
	Conflicts:    []string{"cf-2", "cf-1"},
	Requests:     []string{"pr-3"},
	Agents:       []string{"tester", "builder", "code-reviewer", "Bad Name"},
	Tools:        []string{"read_file", "glob", "write_file"},
	Labels:       map[string]string{"sa-2": "builder · running"},
}

// texts renders candidates compactly; "|" in a test input marks the cursor.
func texts(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

func complete(input string, live LiveIDs) ([]Candidate, string) {
	cursor := strings.IndexByte(input, '|')
	line := input[:cursor] + input[cursor+1:]
	return Complete(line, cursor, live), line
}

func TestComplete(t *testing.T) {
	allFlagsDelegate := []string{"--agent-type", "--inherit-context", "--permission-mode", "--timeout", "--tools", "--inputs", "--on", "--retry"}
	tests := []struct {
		input string
		want  []string
	}{
		// command names
		{"/|", commandNames2("/")},
		{"/d|", []string{"/delegate", "/deny", "/diff", "/discard"}},
		{"/de|", []string{"/delegate", "/deny"}},
		{"/del|", []string{"/delegate"}},
		{"  /ap|", []string{"/approve", "/apply"}}, // table order
		{"/D|", []string{"/delegate", "/deny", "/diff", "/discard"}},
		{"/x|", nil},
		{"hello|", nil},
		{"|", nil},
		{"/nope |", nil},
		// flags
		{"/delegate fix --|", allFlagsDelegate},
		{"/delegate fix -|", allFlagsDelegate},
		{"/delegate fix --t|", []string{"--timeout", "--tools"}},
		{"/delegate fix --agent-type builder --t|", []string{"--timeout", "--tools"}},
		{"/delegate fix --timeout 5 --t|", []string{"--tools"}},
		{"/delegate fix --inherit-context --|", []string{"--agent-type", "--permission-mode", "--timeout", "--tools", "--inputs", "--on", "--retry"}},
		{"/converge sa-1 sa-2 --s|", []string{"--strategy"}},
		{"/quit --|", nil},
		{"/delegate fix -- --|", nil},
		{`/delegate "--|`, nil},
		// enum values after a flag, with a space or "="
		{"/converge sa-1 sa-2 --strategy |", []string{"merge", "vote", "consensus", "first_success"}},
		{"/converge sa-1 sa-2 --strategy m|", []string{"merge"}},
		{"/converge sa-1 sa-2 --strategy=f|", []string{"first_success"}},
		{"/converge sa-1 sa-2 --strategy merge --output-format |", []string{"json", "markdown", "delta_batch"}},
		{"/converge sa-1 sa-2 --conflict-resolution |", []string{"manual", "auto_accept_latest", "prefer_higher_confidence"}},
		{"/delegate x --permission-mode a|", []string{"acceptEdits"}},
		{"/handoff sa-1 --on-failure |", []string{"retry", "abort", "escalate"}},
		{"/approve pr-3 --scope |", []string{"once", "subagent"}},
		{"/delegate x --inherit-context=|", []string{"true", "false"}},
		{"/delegate x --inherit-context |", []string{"--agent-type", "--permission-mode", "--timeout", "--tools", "--inputs", "--on", "--retry"}},
		{"/delegate x --timeout |", nil},
		{"/resolve cf-1 --note |", nil},
		// agent names
		{"/delegate x --agent-type |", []string{"builder", "code-reviewer", "tester"}},
		{"/delegate x --agent-type=c|", []string{"code-reviewer"}},
		// tools: the name after the last comma
		{"/delegate x --tools |", []string{"glob", "read_file", "write_file"}},
		{"/delegate x --tools read_file,|", []string{"glob", "write_file"}},
		{"/delegate x --tools=glob,w|", []string{"write_file"}},
		// ids by position
		{"/handoff |", []string{"sa-1", "sa-2", "sa-10", "--transfer-control", "--timeout", "--on-failure"}},
		{"/handoff sa-1|", []string{"sa-1", "sa-10"}},
		{"/handoff s|", []string{"sa-1", "sa-2", "sa-10"}},
		{"/handoff sa-1 s|", nil},
		{"/cancel |", []string{"sa-1", "sa-2", "sa-10"}},
		{"/converge sa-2 |", []string{"sa-1", "sa-10", "--strategy", "--conflict-resolution", "--output-format"}},
		{"/converge --strategy vote sa-2 sa-1 s|", []string{"sa-10"}},
		{"/resolve |", []string{"cf-1", "cf-2", "--choose", "--note", "--content", "--whole-file"}},
		{"/resolve cf-1 --choose |", []string{"sa-1", "sa-2", "sa-10", "cv-1", "both", "none", "edit"}},
		{"/resolve cf-1 --choose b|", []string{"both"}},
		{"/approve |", []string{"pr-3", "--scope"}},
		{"/deny p|", []string{"pr-3"}},
		{"/apply |", []string{"sa-1", "sa-2", "sa-10", "cv-1", "--dry-run", "--verify", "--force"}},
		{"/status |", []string{"sa-1", "sa-2", "sa-10", "cv-1"}},
		{"/status c|", []string{"cv-1"}},
		{"/wait sa-1 |", []string{"sa-2", "sa-10", "cv-1"}},
		{"/wait -- |", []string{"sa-1", "sa-2", "sa-10", "cv-1"}},
		{"/help |", commandNames2("")},
		{"/help co|", []string{"converge"}},
		{"/help /co|", []string{"converge"}},
		{"/agents |", nil},
		{"/delegate fix th|", nil},
	}
	for _, tt := range tests {
		got, _ := complete(tt.input, testLive)
		if !reflect.DeepEqual(texts(got), tt.want) {
			t.Errorf("Complete(%q)\n got %q\nwant %q", tt.input, texts(got), tt.want)
		}
	}
}

func commandNames2(lead string) []string {
	var out []string
	for _, n := range commandNames() {
		out = append(out, lead+n)
	}
	return out
}

func TestCompleteRanges(t *testing.T) {
	tests := []struct {
		input      string
		start, end int
		first      string
	}{
		{"/del|", 0, 4, "/delegate"},
		{"/de|legate fix", 0, 9, "/delegate"}, // the whole word is replaced
		{"/converge sa-1 sa-2 --str|", 20, 25, "--strategy"},
		{"/converge sa-1 sa-2 --strategy=me|", 31, 33, "merge"},
		{"/converge sa-1 sa-2 --strategy |", 31, 31, "merge"},
		{"/converge sa-1 sa-2 --strategy | --output-format json", 31, 31, "merge"},
		{"/delegate x --tools read_file,g|", 30, 31, "glob"},
		{"/handoff |", 9, 9, "sa-1"},
		{"/hand|off sa-1", 0, 8, "/handoff"},
	}
	for _, tt := range tests {
		got, line := complete(tt.input, testLive)
		if len(got) == 0 {
			t.Errorf("Complete(%q): nothing", tt.input)
			continue
		}
		c := got[0]
		if c.Start != tt.start || c.End != tt.end || c.Text != tt.first {
			t.Errorf("Complete(%q)[0] = %+v, want %d:%d %q", tt.input, c, tt.start, tt.end, tt.first)
		}
		// Applying the candidate gives a line with the candidate as a whole word.
		applied := line[:c.Start] + c.Text + line[c.End:]
		if !strings.Contains(applied, c.Text) {
			t.Errorf("applying %+v to %q gives %q", c, line, applied)
		}
	}
}

func TestCompleteDescriptions(t *testing.T) {
	got, _ := complete("/handoff |", testLive)
	want := map[string]string{"sa-1": "subagent", "sa-2": "builder · running", "--on-failure": "what to do if the subagent fails"}
	for _, c := range got {
		if w, ok := want[c.Text]; ok && c.Description != w {
			t.Errorf("%s: description %q, want %q", c.Text, c.Description, w)
		}
	}
	got, _ = complete("/con|", testLive)
	if len(got) != 1 || got[0].Description != "combine the results of several subagents" {
		t.Errorf("command description: %+v", got)
	}
	got, _ = complete("/converge sa-1 sa-2 --|", testLive)
	if got[0].Description != "how to combine the results (required)" {
		t.Errorf("required flag description: %q", got[0].Description)
	}
	// Without live agents, the built-in types are offered with their help.
	got, _ = complete("/delegate x --agent-type |", LiveIDs{})
	if !reflect.DeepEqual(texts(got), []string{"builder", "tester", "analyzer", "retriever"}) || got[0].Description == "" {
		t.Errorf("built-in agent types: %+v", got)
	}
}

func TestCompleteOddInput(t *testing.T) {
	for _, in := range []string{"", "/", "/\xff", "/delegate \xff|x", "/handoff \"sa", "/resolve cf-1 --note 'x"} {
		for cur := -3; cur <= len(in)+3; cur++ {
			_ = Complete(in, cur, testLive) // must not panic
		}
	}
	// A cursor in the middle of a multi-byte character completes nothing rather than panic.
	if got := Complete("/help é", 7, testLive); got != nil {
		t.Errorf("split rune: %+v", got)
	}
}

// --on offers the live runners' names (sorted, only valid names, no duplicates), then any;
// without runners only any; another text flag offers nothing.
func TestCompleteOnRunners(t *testing.T) {
	live := LiveIDs{Runners: []string{"gpu-2", "ci-1", "gpu-1", "bad name", "gpu-1"}}
	tests := []struct {
		input string
		live  LiveIDs
		want  []string
	}{
		{`/delegate "t" --on |`, live, []string{"ci-1", "gpu-1", "gpu-2", "any"}},
		{`/delegate "t" --on g|`, live, []string{"gpu-1", "gpu-2"}},
		{`/delegate "t" --on=gpu-2|`, live, []string{"gpu-2"}},
		{`/delegate "t" --on a|`, live, []string{"any"}},
		{`/delegate "t" --on |`, LiveIDs{}, []string{"any"}},
		{`/delegate "t" --inputs |`, live, nil},
	}
	for _, tc := range tests {
		got, _ := complete(tc.input, tc.live)
		if !reflect.DeepEqual(texts(got), tc.want) {
			t.Errorf("%q: got %q, want %q", tc.input, texts(got), tc.want)
		}
	}
	got, line := complete(`/delegate "t" --on=g| --retry`, live)
	if len(got) != 2 || line[got[0].Start:got[0].End] != "g" || got[0].Description != "runner" {
		t.Errorf("--on=g: %+v", got)
	}
}
