//go:build linux && (amd64 || arm64) && !rdmakit_noverbs

package verbs

import (
	"fmt"
	"runtime"
	"sync"
	"syscall"

	"github.com/ebitengine/purego"
)

var (
	loadOnce sync.Once
	loadErr  error
)

// load dlopens libibverbs on first use and resolves its functions. It is
// purego's dlopen, so it works in a binary built without cgo; such a binary
// is linked dynamically against the C library (for dlopen), never against
// libibverbs.
func load() (*symbols, error) {
	loadOnce.Do(func() { lib, loadErr = open(libPath()) })
	return lib, loadErr
}

func open(name string) (*symbols, error) {
	// dlerror's message is per thread: dlopen and the dlerror purego calls
	// after a failure must run on one.
	runtime.LockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	runtime.UnlockOSThread()
	if err != nil {
		return nil, &LoadError{Library: name, Reason: err.Error(), Install: true}
	}
	s := &symbols{}
	for _, sym := range s.table() {
		p, err := purego.Dlsym(h, sym.name)
		if err != nil || p == 0 {
			if sym.optional {
				continue
			}
			_ = purego.Dlclose(h)
			return nil, &LoadError{Library: name, Reason: fmt.Sprintf("%s has no %s, so it is not rdma-core's libibverbs", name, sym.name), Install: true}
		}
		*sym.addr = p
	}
	p, err := purego.Dlsym(purego.RTLD_DEFAULT, "__errno_location")
	if err != nil || p == 0 {
		_ = purego.Dlclose(h)
		return nil, &LoadError{Library: name, Reason: "the C library has no __errno_location (rdmakit's verbs need glibc)"}
	}
	s.errnoLocation = p
	return s, nil
}

// call runs a libibverbs function and returns its result and the errno it
// left. purego does not keep errno on Linux, so call reads it itself, on
// the same locked OS thread, after clearing it. Pointer arguments
// converted to uintptr in the call expression stay alive and in place for
// the call, as for syscall.Syscall.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) (uintptr, syscall.Errno) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, _, _ := purego.SyscallN(lib.errnoLocation)
	errno := at[int32](r)
	*errno = 0
	r, _, _ = purego.SyscallN(fn, args...)
	return r, syscall.Errno(*errno)
}

// fastcall runs a data path verb through a context's ops table. These
// return their errno, so errno is not read.
//
//go:uintptrescapes
func fastcall(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
