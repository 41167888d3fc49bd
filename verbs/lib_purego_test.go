//go:build linux && (amd64 || arm64) && !rdmakit_noverbs

package verbs

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestVerbsOpenLibrary: open resolves every symbol of the real library, and
// tells a missing file and a library that is not libibverbs apart.
func TestVerbsOpenLibrary(t *testing.T) {
	needLib(t)
	s, err := open(libName)
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range s.table() {
		if *sym.addr == 0 && !sym.optional {
			t.Errorf("%s not resolved", sym.name)
		}
	}
	if s.errnoLocation == 0 {
		t.Error("__errno_location not resolved")
	}
	for name, want := range map[string]string{
		"libibverbs-absent.so.1": "cannot open shared object file",
		"libc.so.6":              "libc.so.6 has no ibv_get_device_list, so it is not rdma-core's libibverbs",
	} {
		_, err := open(name)
		var le *LoadError
		if !errors.As(err, &le) || !errors.Is(err, ErrNotAvailable) || !le.Install || !strings.Contains(err.Error(), want) {
			t.Errorf("open(%s) = %v, want a *LoadError saying %q", name, err, want)
		}
	}
}

// TestVerbsNotAvailable runs this test binary again with EnvLibrary naming
// a library that is not there, and one that is not libibverbs: Available,
// Devices and Open fail with an error matching ErrNotAvailable that says
// what to install.
func TestVerbsNotAvailable(t *testing.T) {
	if os.Getenv("VERBS_TEST_CHILD") == "1" {
		for _, err := range []error{Available(), func() error { _, err := Devices(); return err }(), func() error { _, err := Open(""); return err }()} {
			var le *LoadError
			if !errors.Is(err, ErrNotAvailable) || !errors.As(err, &le) {
				t.Fatalf("error %v (%T), want a *LoadError matching ErrNotAvailable", err, err)
			}
			t.Logf("%v", err)
		}
		return
	}
	for lib, want := range map[string]string{
		"libibverbs-absent.so.1": "libibverbs-absent.so.1: cannot open shared object file",
		"libc.so.6":              "libc.so.6 has no ibv_get_device_list",
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestVerbsNotAvailable$", "-test.v")
		cmd.Env = append(os.Environ(), "VERBS_TEST_CHILD=1", EnvLibrary+"="+lib)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s=%s: %v\n%s", EnvLibrary, lib, err, out)
			continue
		}
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "apt-get install libibverbs1 ibverbs-providers") {
			t.Errorf("%s=%s: the error does not say %q and what to install:\n%s", EnvLibrary, lib, want, out)
		}
	}
}
