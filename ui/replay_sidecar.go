package ui

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/summit-dev/summit/session"
)

// A replay sidecar is the state at the end of a recording, saved (session.EncodeCheckpoint) in
// the cache dir when a replay's background fold has folded the whole recording, so that the
// next replay of the same recording seeks anywhere near its end at once instead of waiting for
// a fold of the whole file.
//
// It lives in $XDG_CACHE_HOME/summit/replay/<sha256 of the recording's absolute path>.ckpt:
// one JSON line (sidecarHead: which recording, which bytes of it, and how to tell that they are
// still the same), then the checkpoint. It is used only when the recording still holds the
// same bytes: the same size and modification time, and the same hash of its first and last
// 64 KB and of 16 blocks between; or, for a recording appended to since, the same checksum
// (CRC-32C) of the whole prefix the sidecar was folded from, whose end state it then is. A
// lenient replay keeps its own. A
// changed recording, a damaged sidecar or one of another build is ignored and replaced.
// summit gc removes the sidecars of recordings that are gone or changed (Sidecars).

// sidecarFormat names the layout of the head and of the checkpoint after it.
const sidecarFormat = "summit-replay-sidecar 1"

type sidecarHead struct {
	Format    string `json:"format"`
	Recording string `json:"recording"` // absolute path
	Lenient   bool   `json:"lenient,omitempty"`
	Size      int64  `json:"size"`     // the bytes of the recording the state was folded from
	MTime     int64  `json:"mtime_ns"` // the recording's modification time when it was opened
	FileSize  int64  `json:"file_size"`
	Sample    string `json:"sample"` // sampleHash of [0, Size)
	CRC       uint32 `json:"crc32c"` // of [0, Size): checked when the recording has grown since
	Events    int    `json:"events"` // events folded
	LastSeq   uint64 `json:"last_seq"`
	FoldError string `json:"fold_error,omitempty"`
}

// sidecarDir is where replay sidecars go (a variable for tests).
var sidecarDir = func() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "summit", "replay"), nil
}

func sidecarPath(dir, recording string, lenient bool) string {
	key := recording
	if lenient {
		key += "\x00lenient"
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".ckpt")
}

// sampleHash hashes the first and last 64 KB of [0, size) of f and 16 blocks of 4 KB spread
// between.
func sampleHash(f io.ReaderAt, size int64) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", size)
	read := func(off, n int64) error {
		off = max(0, off)
		n = min(n, size-off)
		if n <= 0 {
			return nil
		}
		_, err := io.Copy(h, io.NewSectionReader(f, off, n))
		return err
	}
	if err := read(0, 64<<10); err != nil {
		return "", err
	}
	for i := int64(1); i <= 16; i++ {
		if err := read(size*i/17, 4<<10); err != nil {
			return "", err
		}
	}
	if err := read(size-64<<10, 64<<10); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// recordingID is what a sidecar needs of the recording opened: its path, and its size and
// modification time before it was indexed.
type recordingID struct {
	path    string
	lenient bool
	size    int64
	mtime   int64
}

func statRecording(path string, lenient bool) (recordingID, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return recordingID{}, false
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return recordingID{}, false
	}
	return recordingID{path: abs, lenient: lenient, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// readHead reads a sidecar's head line.
func readHead(br *bufio.Reader) (sidecarHead, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return sidecarHead{}, fmt.Errorf("no head: %w", err)
	}
	var h sidecarHead
	if err := json.Unmarshal(line, &h); err != nil || h.Format != sidecarFormat {
		return sidecarHead{}, errors.New("not a replay sidecar of this build")
	}
	return h, nil
}

// fits reports whether head describes a prefix of the recording as it is (ra, id): the state
// it holds is the state after head.Events events of it.
func (h sidecarHead) fits(id recordingID, ra io.ReaderAt) bool {
	if h.Recording != id.path || h.Lenient != id.lenient || h.Size <= 0 || id.size < h.Size {
		return false
	}
	if id.size == h.FileSize && id.mtime != h.MTime {
		return false // rewritten in place
	}
	s, err := sampleHash(ra, h.Size)
	if err != nil || s != h.Sample {
		return false
	}
	if id.size != h.FileSize {
		// Grown since: an append keeps every byte of the prefix, which the whole checksum
		// checks (a read of the prefix, at several GB/s, beside the fold).
		c, err := prefixCRC(ra, h.Size)
		return err == nil && c == h.CRC
	}
	return true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func prefixCRC(ra io.ReaderAt, size int64) (uint32, error) {
	h := crc32.New(castagnoli)
	_, err := io.Copy(h, io.NewSectionReader(ra, 0, size))
	return h.Sum32(), err
}

// loadSidecar reads the sidecar of the recording, if it fits it: the checkpoint after its
// Events events, which must end exactly at an event's end in ix (end(pos) returns the byte
// offset after event pos-1 and its seq). Nothing, quietly, when there is none or it does not fit.
func loadSidecar(id recordingID, ra io.ReaderAt, text *session.TextStore, n int, end func(pos int) (int64, uint64)) (checkpoint, bool) {
	dir, err := sidecarDir()
	if err != nil {
		return checkpoint{}, false
	}
	f, err := os.Open(sidecarPath(dir, id.path, id.lenient))
	if err != nil {
		return checkpoint{}, false
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	h, err := readHead(br)
	if err != nil || h.Events <= 0 || h.Events > n || !h.fits(id, ra) {
		return checkpoint{}, false
	}
	if off, seq := end(h.Events); off != h.Size || seq != h.LastSeq {
		return checkpoint{}, false
	}
	st, err := session.DecodeCheckpoint(br, text)
	if err != nil || st.LastSeq != h.LastSeq {
		return checkpoint{}, false
	}
	return checkpoint{pos: h.Events, st: st, err: h.FoldError}, true
}

// writeSidecar saves st, the state after events events (size bytes) of the recording, for the
// next replay of it: written to a temporary file and renamed, so a reader sees a whole sidecar
// or the previous one.
func writeSidecar(id recordingID, ra io.ReaderAt, size int64, events int, lastSeq uint64, foldErr string, st *session.State) error {
	dir, err := sidecarDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sample, err := sampleHash(ra, size)
	if err != nil {
		return err
	}
	crc, err := prefixCRC(ra, size)
	if err != nil {
		return err
	}
	h := sidecarHead{Format: sidecarFormat, Recording: id.path, Lenient: id.lenient, Size: size, MTime: id.mtime, FileSize: id.size,
		Sample: sample, CRC: crc, Events: events, LastSeq: lastSeq, FoldError: foldErr}
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".ckpt-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	bw.Write(append(head, '\n'))
	if err := st.EncodeCheckpoint(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), sidecarPath(dir, id.path, id.lenient))
}

// Sidecar is a replay sidecar in the cache dir, for summit gc.
type Sidecar struct {
	Path      string `json:"path"`
	Recording string `json:"recording"`
	Bytes     int64  `json:"bytes"`
	// Stale says why it no longer serves ("" = it does): its recording is gone or changed,
	// or it cannot be read.
	Stale string `json:"stale,omitempty"`
}

// Sidecars lists the replay sidecars in the cache dir, each saying whether it still serves its
// recording.
func Sidecars() ([]Sidecar, error) {
	dir, err := sidecarDir()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Sidecar
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".ckpt") && !strings.HasPrefix(name, ".ckpt-") {
			continue
		}
		s := Sidecar{Path: filepath.Join(dir, name)}
		if fi, err := e.Info(); err == nil {
			s.Bytes = fi.Size()
		}
		s.Recording, s.Stale = sidecarServes(s.Path)
		if strings.HasPrefix(name, ".ckpt-") {
			s.Stale = "an unfinished write"
		}
		out = append(out, s)
	}
	return out, nil
}

func sidecarServes(path string) (recording, stale string) {
	f, err := os.Open(path)
	if err != nil {
		return "", err.Error()
	}
	defer f.Close()
	h, err := readHead(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return "", err.Error()
	}
	id, ok := statRecording(h.Recording, h.Lenient)
	if !ok {
		return h.Recording, "its recording is gone"
	}
	rf, err := os.Open(id.path)
	if err != nil {
		return h.Recording, "its recording cannot be read"
	}
	defer rf.Close()
	if !h.fits(id, rf) {
		return h.Recording, "its recording changed"
	}
	return h.Recording, ""
}
