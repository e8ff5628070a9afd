package record

import (
	"fmt"
	"io"
	"os"

	"github.com/summit-dev/summit/session"
)

// FileSource reads events back from a recording by their place in it: the session.TextSource
// of a replay or of a live session's state (session.TextStore). Lines close together are read
// with one ReadAt. It is safe for concurrent use when ra is (an *os.File is).
type FileSource struct {
	ra io.ReaderAt
}

// NewFileSource reads from ra, the recording.
func NewFileSource(ra io.ReaderAt) *FileSource { return &FileSource{ra: ra} }

// PathSource is a FileSource that opens the recording at path for each read, so it holds no
// file open between reads: a live session's state keeps one for as long as it is shown.
type PathSource struct{ path string }

// NewPathSource reads from the recording at path.
func NewPathSource(path string) *PathSource { return &PathSource{path: path} }

// ReadEvents decodes the lines at locs.
func (s *PathSource) ReadEvents(locs []session.Loc) ([]session.Event, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return NewFileSource(f).ReadEvents(locs)
}

// readGap is the most bytes between two wanted lines that one read spans rather than two;
// readSpan bounds one read.
const (
	readGap  = 64 << 10
	readSpan = 4 << 20
)

// ReadEvents decodes the lines at locs (each a whole line, ascending offsets read fastest).
func (s *FileSource) ReadEvents(locs []session.Loc) ([]session.Event, error) {
	out := make([]session.Event, 0, len(locs))
	var buf []byte
	for i := 0; i < len(locs); {
		start, end := locs[i].Off, locs[i].Off+int64(locs[i].Len)
		j := i + 1
		for j < len(locs) && locs[j].Off >= end && locs[j].Off-end <= readGap && locs[j].Off+int64(locs[j].Len)-start <= readSpan {
			end = locs[j].Off + int64(locs[j].Len)
			j++
		}
		if int64(cap(buf)) < end-start {
			buf = make([]byte, end-start)
		}
		buf = buf[:end-start]
		if n, err := s.ra.ReadAt(buf, start); n < len(buf) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return out, fmt.Errorf("read the recording at offset %d: %w", start, err)
		}
		for _, l := range locs[i:j] {
			line := buf[l.Off-start : l.Off-start+int64(l.Len)]
			ev, err := DecodeLine(line)
			if err != nil {
				return out, fmt.Errorf("the line at offset %d: %w", l.Off, err)
			}
			out = append(out, ev)
		}
		i = j
	}
	return out, nil
}

// NextOffset is the offset in the file at which the next appended line will start, and false
// when the recorder does not write to a file it can ask (a test's writer). With the offset
// before an Append and the one after its Flush, a caller knows where the event's line lies
// (session.ApplyAt).
func (r *Recorder) NextOffset() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.f.(*os.File)
	if !ok || r.closed {
		return 0, false
	}
	// The file is opened O_APPEND: its offset is its size after every write.
	pos, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false
	}
	return pos + int64(len(r.buf)), true
}
