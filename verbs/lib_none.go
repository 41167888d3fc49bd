//go:build !(linux && (amd64 || arm64)) || rdmakit_noverbs

package verbs

import (
	"runtime"
	"syscall"
)

// call and fastcall are never reached where load always fails: no Context
// exists without it.
func call(uintptr, ...uintptr) (uintptr, syscall.Errno) {
	panic("verbs: libibverbs is not loaded on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func fastcall(uintptr, ...uintptr) uintptr {
	panic("verbs: libibverbs is not loaded on " + runtime.GOOS + "/" + runtime.GOARCH)
}
