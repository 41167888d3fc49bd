package testbed

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// UMAD2SimEnv overrides where libumad2sim.so is looked for.
const UMAD2SimEnv = "RDMAKIT_UMAD2SIM"

// peers are the programs floor 3 needs, with the Debian package that
// brings each (scripts/floors/10-ibsim.sh installs them).
var peers = []struct{ bin, pkg string }{
	{"ibsim", "ibsim-utils"},
	{"opensm", "opensm"},
	{"ibnetdiscover", "infiniband-diags"},
	{"smpquery", "infiniband-diags"},
	{"perfquery", "infiniband-diags"},
	{"saquery", "infiniband-diags"},
}

// Require skips the test (locally) or fails it (in CI) unless the
// machine's own ibsim, libumad2sim, OpenSM and infiniband-diags (Bookworm)
// are installed. Every Start and RunC function calls it for the release it
// runs, so a test needs to call it only before work of its own.
func Require(t testing.TB) {
	t.Helper()
	Bookworm.Require(t)
}

// LookPath finds a program in PATH and then in the sbin directories, which
// a non-root PATH often lacks and where Debian puts OpenSM and the diags.
func LookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

var umad2sim struct {
	once sync.Once
	path string
	err  error
}

// UMAD2SimPath finds libumad2sim.so, the LD_PRELOAD library that turns a
// libibumad program into an ibsim client: $RDMAKIT_UMAD2SIM, else the
// multiarch library directories, else what dpkg lists for libumad2sim0.
func UMAD2SimPath() (string, error) {
	umad2sim.once.Do(func() {
		umad2sim.path, umad2sim.err = findUMAD2Sim()
	})
	return umad2sim.path, umad2sim.err
}

func findUMAD2Sim() (string, error) {
	if p := os.Getenv(UMAD2SimEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", UMAD2SimEnv, p, err)
		}
		return p, nil
	}
	for _, pat := range []string{"/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so", "/usr/lib64/umad2sim/libumad2sim.so"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return m[0], nil
		}
	}
	if out, err := exec.Command("dpkg", "-L", "libumad2sim0").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(line, "/libumad2sim.so") {
				return line, nil
			}
		}
	}
	return "", errors.New("libumad2sim.so not found (install the Debian package libumad2sim0)")
}
