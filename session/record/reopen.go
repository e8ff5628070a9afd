package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// ReopenRecorderFile opens an existing recording to append to it (`summit resume`: a session
// restarted on its own recording). A torn last line (the process was killed mid-write) is cut
// off first, so the next line starts on a line of its own; torn is its length (0: none). The
// file keeps its mode; it must be a regular file.
func ReopenRecorderFile(path string, opts RecorderOptions) (rec *Recorder, torn int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("reopen recording: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := lockWriter(f); err != nil { // before anything is cut: it may be mid-write
		return nil, 0, fmt.Errorf("recording %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("recording %s is not a regular file", path)
	}
	size := st.Size()
	// The last newline: everything after it is a torn line. A line is at most MaxEventLine,
	// so the search reads back at most that far.
	keep := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0 && size-end <= MaxEventLine+1; {
		start := max(0, end-int64(len(buf)))
		n, rerr := f.ReadAt(buf[:end-start], start)
		if rerr != nil && rerr != io.EOF {
			return nil, 0, rerr
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			keep = start + int64(i) + 1
			break
		}
		end = start
	}
	if keep < size {
		if err := f.Truncate(keep); err != nil {
			return nil, 0, fmt.Errorf("cutting the torn last line of %s: %w", path, err)
		}
	}
	// O_APPEND writes at the end; the offset NextOffset reads must start there too.
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return nil, 0, err
	}
	return newRecorder(f, path, opts), size - keep, nil
}
