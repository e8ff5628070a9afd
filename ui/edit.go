package ui

import (
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/summit-dev/summit/commands"
)

// Choice edit: the reviewer writes a conflicted region by hand. The region, with conflict
// markers, is written to a temporary file, $VISUAL (else $EDITOR, else vi) opens it with the
// workbench suspended, and what is saved becomes /resolve cf-N --choose edit --content TEXT,
// recorded like any answer. A file that still has conflict markers, or an editor that fails,
// settles nothing. All file work happens in Cmds, never in Update.

type editReadyMsg struct {
	id, path string
	err      error
}

type editDoneMsg struct {
	id, path string
	err      error
}

type editReadMsg struct {
	id, content string
	err         error
}

// startEdit writes the conflict's template to a temporary file, then opens the editor.
func (m *Model) startEdit(id, template string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", "summit-"+id+"-*.txt")
		if err != nil {
			return editReadyMsg{id: id, err: err}
		}
		_, err = f.WriteString(template)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return editReadyMsg{id: id, path: f.Name(), err: err}
	}
}

// editor is the command that edits path.
func editor(path string) *exec.Cmd {
	ed := os.Getenv("VISUAL")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	words := strings.Fields(ed)
	if len(words) == 0 {
		words = []string{"vi"}
	}
	return exec.Command(words[0], append(words[1:], path)...)
}

// onEdit moves an edit along: the editor opens, then the file is read back, then the answer
// is sent.
func (m *Model) onEdit(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case editReadyMsg:
		if msg.err != nil {
			m.setNotice("edit: "+msg.err.Error(), true)
			return nil
		}
		path, id := msg.path, msg.id
		return tea.ExecProcess(editor(path), func(err error) tea.Msg { return editDoneMsg{id: id, path: path, err: err} })
	case editDoneMsg:
		path, id, eerr := msg.path, msg.id, msg.err
		return func() tea.Msg {
			defer os.Remove(path)
			if eerr != nil {
				return editReadMsg{id: id, err: eerr}
			}
			b, err := os.ReadFile(path)
			return editReadMsg{id: id, content: string(b), err: err}
		}
	case editReadMsg:
		switch {
		case msg.err != nil:
			m.setNotice("edit: the editor failed, nothing was decided: "+msg.err.Error(), true)
			return nil
		case hasMarkers(msg.content):
			m.setNotice(msg.id+": the conflict markers are still there, so nothing was decided; ctrl+o to edit again", true)
			return nil
		}
		line := "/resolve " + msg.id + " --choose " + commands.ChooseEdit + " --content " + commands.Quote(msg.content)
		if n := strings.TrimSpace(m.notes[msg.id]); n != "" {
			line += " --note " + commands.Quote(n)
		}
		m.answered[msg.id] = true
		if m.ib != nil && m.ib.id == msg.id {
			m.ib = nil
		}
		return m.send(line, false)
	}
	return nil
}

// hasMarkers reports whether text still holds a line of conflict markers. A line of only
// '=' longer than a marker is a Markdown or reStructuredText heading underline (an apply
// review opens whole files), not a marker.
func hasMarkers(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		for _, mk := range []string{"<<<<<<<", "|||||||", ">>>>>>>"} {
			if strings.HasPrefix(l, mk) {
				return true
			}
		}
		if l == "=======" || strings.HasPrefix(l, "======= ") {
			return true
		}
	}
	return false
}
