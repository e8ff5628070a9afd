package agents

import (
	"slices"
	"strings"
	"testing"
)

// TestDecideTable covers every mode × tool class (DESIGN §5).
func TestDecideTable(t *testing.T) {
	tools := map[ToolClass]string{
		ClassRead: ToolReadFile, ClassNetwork: ToolWebFetch, ClassWrite: ToolReplace,
		ClassShell: ToolShell, ClassMCP: "mcp__gh__search", ClassTask: ToolTask, ClassUnknown: "frobnicate",
	}
	want := map[PermissionMode]map[ToolClass]Verdict{
		ModePlan:        {ClassRead: Allow, ClassNetwork: Allow, ClassWrite: Deny, ClassShell: Ask, ClassMCP: Ask, ClassTask: Deny, ClassUnknown: Deny},
		ModeAcceptEdits: {ClassRead: Allow, ClassNetwork: Allow, ClassWrite: Allow, ClassShell: Ask, ClassMCP: Ask, ClassTask: Deny, ClassUnknown: Deny},
		ModeBypass:      {ClassRead: Allow, ClassNetwork: Allow, ClassWrite: Allow, ClassShell: Allow, ClassMCP: Allow, ClassTask: Deny, ClassUnknown: Deny},
		"yolo":          {ClassRead: Deny, ClassNetwork: Deny, ClassWrite: Deny, ClassShell: Deny, ClassMCP: Deny, ClassTask: Deny, ClassUnknown: Deny},
	}
	for mode, row := range want {
		for class, v := range row {
			d := Decide(mode, tools[class])
			if d.Verdict != v || d.Reason == "" {
				t.Errorf("%s × %s: %+v, want %s", mode, class, d, v)
			}
		}
	}
}

func TestResolveEscalation(t *testing.T) {
	builder := &Definition{Name: "builder", Tools: []string{ToolReadFile, ToolWriteFile, ToolReplace, ToolShell, ToolTask}, DisallowedTools: []string{ToolReplace}, PermissionMode: ModeAcceptEdits}
	session := []string{ToolReadFile, ToolGlob, ToolWriteFile, ToolReplace, ToolShell}
	cases := []struct {
		name      string
		req       Request
		wantMode  PermissionMode
		wantTools []string
		wantErr   string
		wantNote  string
	}{
		{"defaults", Request{SessionTools: session}, ModeAcceptEdits, []string{ToolReadFile, ToolWriteFile, ToolShell}, "", "task removed"},
		{"plan ceiling caps acceptEdits", Request{SessionTools: session, Ceiling: ModePlan}, ModePlan, nil, "", "capped"},
		{"bypass above ceiling", Request{SessionTools: session, Mode: ModeBypass}, ModeAcceptEdits, nil, "", "capped"},
		{"bypass unapproved", Request{SessionTools: session, Ceiling: ModeBypass, Mode: ModeBypass}, ModeAcceptEdits, nil, "", "explicit approval"},
		{"bypass approved", Request{SessionTools: session, Ceiling: ModeBypass, Mode: ModeBypass, BypassApproved: true}, ModeBypass, nil, "", ""},
		{"--tools narrows", Request{SessionTools: session, Tools: []string{"Read"}}, ModeAcceptEdits, []string{ToolReadFile}, "", ""},
		{"--tools outside parent", Request{SessionTools: session, Tools: []string{"WebFetch"}}, "", nil, "does not have", ""},
		{"--tools task", Request{SessionTools: session, Tools: []string{"Task"}}, "", nil, "does not have", ""},
		{"session lacks shell", Request{SessionTools: []string{ToolReadFile}}, ModeAcceptEdits, []string{ToolReadFile}, "", "parent session does not have"},
	}
	for _, c := range cases {
		p, err := Resolve(builder, c.req)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Mode != c.wantMode {
			t.Errorf("%s: mode %s, want %s", c.name, p.Mode, c.wantMode)
		}
		if c.wantTools != nil && !slices.Equal(p.Tools, c.wantTools) {
			t.Errorf("%s: tools %v, want %v", c.name, p.Tools, c.wantTools)
		}
		if c.wantNote != "" && !strings.Contains(strings.Join(p.Notes, "; "), c.wantNote) {
			t.Errorf("%s: notes %v lack %q", c.name, p.Notes, c.wantNote)
		}
		if d := p.Decide("Task"); d.Verdict != Deny {
			t.Errorf("%s: task %+v", c.name, d)
		}
		if d := p.Decide(ToolReplace); d.Verdict != Deny {
			t.Errorf("%s: disallowed replace %+v", c.name, d)
		}
	}
	// Absent tools mean the session's, still minus task.
	p, _ := Resolve(&Definition{Name: "x"}, Request{SessionTools: append(session, ToolTask), Ceiling: ModePlan})
	if slices.Contains(p.Tools, ToolTask) || len(p.Tools) != len(session) || p.Decide(ToolWriteFile).Verdict != Deny || p.Decide(ToolShell).Verdict != Ask {
		t.Errorf("defaults: %+v", p)
	}
}
