//go:build linux

package record

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// mapFile maps the whole of f (its size now) read-only, for forEachFile, or returns nil when
// it cannot be (then f is read instead): an empty file, one not at its start, or a system that
// refuses. (Linux only: elsewhere files are read.)
func mapFile(f *os.File) (*mapping, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil, nil
	}
	if at, err := f.Seek(0, io.SeekCurrent); err != nil || at != 0 {
		return nil, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil
	}
	madvise(data, syscall.MADV_SEQUENTIAL)
	return &mapping{data: data}, nil
}

func (m *mapping) close() {
	_ = syscall.Munmap(m.data)
	m.data = nil
}

// releaseTo drops the process's mapping of the pages before off that were not dropped yet (the
// file stays in the page cache): what has been decoded no longer counts toward the process's
// resident memory, so reading a file through its mapping costs memory in proportion to the
// chunks in flight, not to the file.
func (m *mapping) releaseTo(off int) {
	pg := os.Getpagesize()
	hi := off / pg * pg
	if hi <= m.released {
		return
	}
	madvise(m.data[m.released:hi], syscall.MADV_DONTNEED)
	m.released = hi
}

func madvise(b []byte, advice int) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))
}
