package live

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/summit-dev/summit/commands"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/blame"
	"github.com/summit-dev/summit/session/record"
)

// blameCmd is /blame PATH: the provenance of each line of a workspace file, computed from this
// session's recording alone (session/blame), anchored to the file as it is now.
func (x *Orchestrator) blameCmd(line string, c commands.Blame) (Reply, error) {
	p := path.Clean(strings.TrimPrefix(strings.ReplaceAll(c.Path, "\\", "/"), "./"))
	switch {
	case x.o.Recorder == nil:
		return x.rejectf(line, c, "/blame reads the session's recording, and this session is not recorded (--no-record)")
	case path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return x.rejectf(line, c, "%s is not a path inside the workspace", c.Path)
	case p == ".summit" || strings.HasPrefix(p, ".summit/"):
		return x.rejectf(line, c, "%s is summit's own directory, not a workspace file", c.Path)
	}
	data, err := x.readFile(p)
	var text []string
	switch {
	case err == nil:
		text = blame.SplitLines(data)
	case !errors.Is(err, fs.ErrNotExist):
		return x.rejectf(line, c, "%s: %v", p, err)
	}
	if err := x.issue(line, c); err != nil {
		return Reply{}, err
	}
	// Every event is in the kernel before the fold sees it (emit flushes), so the file holds
	// the whole session up to this command.
	b := blame.New()
	if _, err := record.FoldFile(x.o.Recorder.Path(), record.ReadOptions{NoText: true}, b.State(),
		func(_ *session.State, e session.Event) error { return b.Add(e) }); err != nil {
		return Reply{Error: "/blame: reading the recording: " + err.Error()}, nil
	}
	rep := b.File(p, text)
	if text == nil && len(rep.Applies) == 0 {
		return Reply{Error: "/blame: " + p + " is not in the workspace and summit landed nothing there"}, nil
	}
	var out strings.Builder
	if err := blame.Render(&out, rep); err != nil {
		return Reply{}, err
	}
	return Reply{Output: out.String()}, nil
}
