//go:build !(linux && (amd64 || arm64)) && !rdmakit_noverbs

package verbs

import (
	"fmt"
	"runtime"
)

// load fails: this package loads libibverbs with purego, which it uses on
// linux/amd64 and linux/arm64, where its structure layouts are checked.
func load() (*symbols, error) {
	return nil, &LoadError{Library: libName,
		Reason: fmt.Sprintf("this build (%s/%s) does not load %s; rdmakit's verbs run on linux/amd64 and linux/arm64", runtime.GOOS, runtime.GOARCH, libName)}
}
