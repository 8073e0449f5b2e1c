//go:build linux

package traces

import (
	"os"
	"syscall"
)

// mapInput maps a regular, uncompressed file read-only, so that the parse
// workers read its bytes where the page cache holds them instead of having
// them copied into chunk buffers (the copy, in read(2), took a tenth of a
// check's CPU). ok is false for anything else (a pipe, a gzip file, an
// empty file, a failed mapping): those take the reading path.
func mapInput(f *os.File) (data []byte, ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 2 || st.Size() != int64(int(st.Size())) {
		return nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	if data[0] == 0x1f && data[1] == 0x8b { // gzip
		_ = syscall.Munmap(data)
		return nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return data, true
}

// dropPages lets go of the pages of b, a page-aligned part of a mapping
// that is checked already: they stop counting in the process's RSS (the
// page cache keeps them). Reading b again reads the file again.
func dropPages(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }

func unmapInput(data []byte) { _ = syscall.Munmap(data) }
