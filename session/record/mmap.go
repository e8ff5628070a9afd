package record

import (
	"fmt"
	"runtime/debug"
	"unsafe"
)

// mapping is a file mapped into memory (see mapFile).
type mapping struct {
	data     []byte
	released int // data[:released] is no longer mapped in (releaseTo)
}

// guard runs fn, which reads the mapping, and turns the fault of reading a page the file no
// longer has (it was truncated while it was read) into an error instead of a crash.
func (m *mapping) guard(fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			err = fmt.Errorf("the recording shrank while it was read (%v)", r)
		}
	}()
	fn()
	return nil
}

// end is where chunk ends in the mapping.
func (m *mapping) end(chunk []byte) int {
	if len(chunk) == 0 {
		return 0
	}
	return int(uintptr(unsafe.Pointer(&chunk[0]))-uintptr(unsafe.Pointer(&m.data[0]))) + len(chunk)
}
