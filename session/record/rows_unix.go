//go:build unix

package record

import (
	"syscall"
	"unsafe"
)

// mapRows returns room for n rows outside the Go heap (an anonymous mapping), or nil. An index
// is most of a replay's memory and holds no pointers: kept off the heap, it does not count
// twice toward the garbage collector's goal (a heap grows to twice what is live before a
// collection), which is what keeps a 1 GB replay's peak RSS near what it holds.
func mapRows(n int) []indexRow {
	size := n * int(unsafe.Sizeof(indexRow{}))
	if size <= 0 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return unsafe.Slice((*indexRow)(unsafe.Pointer(&b[0])), n)[:0]
}

// unmapRows releases rows from mapRows.
func unmapRows(r []indexRow) {
	if cap(r) == 0 {
		return
	}
	r = r[:cap(r)]
	_ = syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(&r[0])), len(r)*int(unsafe.Sizeof(indexRow{}))))
}
