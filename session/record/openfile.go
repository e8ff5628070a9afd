package record

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens a file summit reads (a recording, a script, a tape, an agent file, a
// config) and refuses anything but a regular file, without blocking: a FIFO, a device or a
// socket gets a clear error instead of a hang. The file is opened non-blocking and checked
// on the open descriptor, so it cannot be swapped between the check and the read.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file: summit reads only regular files", path, FileKind(st.Mode()))
	}
	return f, nil
}

// ReadRegular reads a whole regular file of at most max bytes (see OpenRegular).
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

// FileKind names a file type that is not a regular file, for errors that refuse it (a FIFO
// would block a reader, a device or directory is not a recording or tape).
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "a " + m.Type().String() + " file"
}
