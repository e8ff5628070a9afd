package hooks

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/summit-dev/summit/agents/provider"
	"github.com/summit-dev/summit/session"
	"github.com/summit-dev/summit/session/record"

	"github.com/summit-dev/summit/session/internal/atomicfile"
)

// maxTrustFile bounds the trust store read (a bigger file is treated as damaged).
const maxTrustFile = 4 << 20

// TrustPath is the trust store: $XDG_DATA_HOME/summit/hooks-trust.json, else
// ~/.local/share/summit/hooks-trust.json (a relative XDG_DATA_HOME is ignored, as the XDG
// spec says).
func TrustPath(getenv func(string) string) (string, error) {
	base := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("no data directory for the hooks trust store: %w", err)
			}
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "summit", "hooks-trust.json"), nil
}

// trustFile is the store's format: per workspace path, the digest of the workspace hooks the
// user answered about, and the answer.
type trustFile struct {
	Version    int                      `json:"version"`
	Workspaces map[string]trustDecision `json:"workspaces"`
}

type trustDecision struct {
	Digest  string    `json:"digest"`
	Trusted bool      `json:"trusted"`
	At      time.Time `json:"at"`
}

// Digest identifies a workspace's hooks: every entry's event, matcher, command and timeout,
// so a changed hook is a new question.
func Digest(h provider.Hooks) string {
	hash := sha256.New()
	for _, ev := range slices.Sorted(maps.Keys(h.Events)) {
		for _, e := range h.Events[ev] {
			fmt.Fprintf(hash, "%s\x00%s\x00%s\x00%d\x00", ev, e.Matcher, e.Command, e.Timeout)
		}
	}
	return "sha256:" + hex.EncodeToString(hash.Sum(nil))
}

func loadTrust(path string) (trustFile, error) {
	tf := trustFile{Version: 1, Workspaces: map[string]trustDecision{}}
	f, err := record.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTrustFile+1))
	if err != nil {
		return tf, err
	}
	if len(data) > maxTrustFile {
		return tf, fmt.Errorf("%s is larger than %d bytes", path, maxTrustFile)
	}
	var got trustFile
	if err := json.Unmarshal(data, &got); err != nil {
		return tf, fmt.Errorf("%s: %v", path, err)
	}
	if got.Workspaces != nil {
		tf.Workspaces = got.Workspaces
	}
	return tf, nil
}

// Decided reports whether the user answered about these workspace hooks (workspace path and
// digest), and the answer.
func Decided(path, workspace, digest string) (decided, trusted bool, err error) {
	tf, err := loadTrust(path)
	if err != nil {
		return false, false, err
	}
	d, ok := tf.Workspaces[workspace]
	if !ok || d.Digest != digest {
		return false, false, nil
	}
	return true, d.Trusted, nil
}

// Remember stores the answer for the workspace's hooks of digest, replacing any earlier one,
// atomically (a temp file renamed over the store; the file is 0600, its directory 0700).
func Remember(path, workspace, digest string, trusted bool, now time.Time) error {
	tf, err := loadTrust(path)
	if err != nil {
		// A damaged store is replaced: an answer lost is only asked again.
		tf = trustFile{Version: 1, Workspaces: map[string]trustDecision{}}
	}
	tf.Workspaces[workspace] = trustDecision{Digest: digest, Trusted: trusted, At: now.UTC().Truncate(time.Second)}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, ".hooks-trust-*", data)
}

// TrustOptions are what Trust decides with.
type TrustOptions struct {
	Workspace string         // absolute
	Hooks     provider.Hooks // the merged hooks; only the workspace's entries need trust
	StorePath string         // TrustPath
	// Flag is --trust-hooks: run the workspace's hooks this once, without asking or
	// remembering.
	Flag bool
	// Interactive is set when a person at a terminal can answer (In and Out are that
	// terminal); otherwise an undecided workspace's hooks do not run.
	Interactive bool
	In          io.Reader
	Out         io.Writer
	Now         func() time.Time
}

// Trust decides whether the workspace's hooks run, asking on a terminal the first time (and
// whenever they changed), and returns a notice for the user ("" when there is nothing to
// say). The question is answered by typing yes and Enter, never by a single key: anything else
// refuses. Both answers are remembered, per workspace and hooks digest. Without a terminal
// the hooks do not run unless Flag is set.
func Trust(o TrustOptions) (bool, string) {
	ws := o.Hooks.WorkspaceOnly()
	if ws.Empty() {
		return true, ""
	}
	n := 0
	for _, l := range ws.Events {
		n += len(l)
	}
	what := fmt.Sprintf("the workspace's %s (.summit/config.yaml)", session.Plural(n, "hook"))
	if o.Flag {
		return true, what + " run: --trust-hooks"
	}
	digest := Digest(ws)
	decided, trusted, err := Decided(o.StorePath, o.Workspace, digest)
	if err != nil {
		return false, fmt.Sprintf("%s do not run: the trust store could not be read: %v", what, err)
	}
	if decided {
		if trusted {
			return true, ""
		}
		return false, what + " do not run: you declined them (they are asked about again when they change)"
	}
	if !o.Interactive || o.In == nil || o.Out == nil {
		return false, what + " do not run: they are not trusted yet; start summit in this workspace on a terminal to answer, or pass --trust-hooks to run them this once"
	}
	fmt.Fprintf(o.Out, "This workspace's .summit/config.yaml configures hooks: shell commands summit would run on session events.\n")
	for _, ev := range provider.HookEvents {
		for _, h := range ws.Events[ev] {
			m := ""
			if h.Matcher != "" {
				m = " (matcher " + session.Sanitize(h.Matcher) + ")"
			}
			fmt.Fprintf(o.Out, "  %s%s: %s\n", ev, m, session.Sanitize(h.Command))
		}
	}
	fmt.Fprintf(o.Out, "Run them in %s? Type yes to trust them (anything else refuses; the answer is remembered): ", session.Sanitize(o.Workspace))
	answer, ok := readLine(o.In)
	if !ok {
		fmt.Fprintln(o.Out)
		return false, what + " do not run: no answer"
	}
	trusted = strings.EqualFold(strings.TrimSpace(answer), "yes")
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	note := ""
	if err := Remember(o.StorePath, o.Workspace, digest, trusted, now()); err != nil {
		note = fmt.Sprintf(" (the answer could not be remembered: %v)", err)
	}
	if !trusted {
		return false, what + " do not run: declined" + note
	}
	return true, what + " trusted" + note
}

// readLine reads one line byte by byte, so nothing after it is taken from a terminal the
// workbench reads next. ok is false at EOF before a newline.
func readLine(r io.Reader) (string, bool) {
	if br, isBuf := r.(*bufio.Reader); isBuf {
		s, err := br.ReadString('\n')
		return s, err == nil
	}
	var b []byte
	one := make([]byte, 1)
	for len(b) < 4096 {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				return string(b), true
			}
			b = append(b, one[0])
		}
		if err != nil {
			return string(b), false
		}
	}
	return string(b), true
}
