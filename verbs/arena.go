package verbs

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// arena is memory outside the Go heap, an anonymous private mapping, in
// which work request lists, scatter/gather lists and completions are laid
// out for libibverbs: the library never sees Go memory that the garbage
// collector could free or move. It grows in whole pages and is reused for
// every call; its owner (a QP, SRQ or CQ) serialises its use and frees it
// when the C object is destroyed.
type arena struct{ b []byte }

var pageSize = os.Getpagesize()

// ensure makes the arena at least n bytes long; the contents are not kept.
func (a *arena) ensure(n int) error {
	if n <= len(a.b) {
		return nil
	}
	size := (n + pageSize - 1) / pageSize * pageSize
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return err
	}
	if a.b != nil {
		_ = unix.Munmap(a.b)
	}
	a.b = b
	return nil
}

// at is the address of byte off of the arena.
func (a *arena) at(off int) uintptr { return uintptr(unsafe.Pointer(&a.b[off])) }

// free unmaps the arena.
func (a *arena) free() error {
	if a.b == nil {
		return nil
	}
	err := unix.Munmap(a.b)
	a.b = nil
	return err
}

// arenaSlice views n values of T at byte off of a, zeroed.
func arenaSlice[T any](a *arena, off, n int) []T {
	if n == 0 {
		return nil
	}
	s := unsafe.Slice((*T)(unsafe.Pointer(&a.b[off])), n)
	clear(s)
	return s
}
