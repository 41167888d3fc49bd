package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
)

// A Release is one Debian release's set of C peers: ibsim with libumad2sim,
// OpenSM and infiniband-diags. Bookworm is the machine's own packages
// (scripts/floors/10-ibsim.sh); Trixie is Debian 13's, in a root of its own
// (scripts/floors/20-trixie.sh), run from outside through that root's
// dynamic loader and libraries, so nothing is mounted and no chroot is
// needed. ibsim's sockets are in the abstract namespace: our tools reach a
// simulator of either release the same way.
//
// A test that compares with the C tools says against which releases:
//
//	for _, rel := range testbed.Releases(t) {
//		t.Run("diags"+rel.Diags, func(t *testing.T) {
//			sim := rel.StartIBSim(t, topo)
//			testbed.StartOpenSM(t, sim, "H-1")
//			out, _, _ := testbed.RunC(t, sim, "H-2", "ibnetdiscover")
//			...
//		})
//	}
//
// StartOpenSM and RunC use the simulator's release (IBSim.Release).
type Release struct {
	// Name is the Debian release: "bookworm" or "trixie".
	Name string
	// Diags is the major version of its infiniband-diags ("44", "56"),
	// IBSim its ibsim version ("0.10", "0.12").
	Diags, IBSim string

	// bin is the directory of 20-trixie.sh's wrappers, root the
	// release's root directory; both empty for the machine's own.
	bin, root string
	// preload is the root's libumad2sim.so, handed to the wrappers in
	// PreloadEnv.
	preload string
}

// Bookworm is the machine's own peers: Debian 12's infiniband-diags 44,
// ibsim 0.10 and OpenSM 3.3.23.
var Bookworm = &Release{Name: "bookworm", Diags: "44", IBSim: "0.10"}

// PreloadEnv names the library 20-trixie.sh's wrappers preload into a
// program of the trixie root (libumad2sim.so for ibsim clients). It is not
// LD_PRELOAD, which would also reach the host's programs a script starts.
const PreloadEnv = "RDMAKIT_TRIXIE_PRELOAD"

// trixieCache is where scripts/floors/20-trixie.sh builds the root,
// relative to the module root.
const trixieCache = ".cache/trixie"

var trixie struct {
	once sync.Once
	rel  *Release
	err  error
}

// Trixie returns Debian 13's peers: infiniband-diags 56, ibsim 0.12 and
// OpenSM 3.3.23 from the root scripts/floors/20-trixie.sh builds. Without
// that root it skips the test (locally) or fails it (in CI).
func Trixie(t testing.TB) *Release {
	t.Helper()
	r, err := TrixieRelease()
	floor.Need(t, err == nil, fmt.Sprintf("Debian 13 peers (%v)", err))
	return r
}

// TrixieRelease is Trixie without a testing.TB: err says what is missing.
func TrixieRelease() (*Release, error) {
	trixie.once.Do(func() { trixie.rel, trixie.err = findTrixie() })
	return trixie.rel, trixie.err
}

// Releases returns every release a live comparison runs against: Bookworm
// and Trixie, oldest first. Like Trixie, it skips or fails the test when a
// release's peers are missing.
func Releases(t testing.TB) []*Release {
	t.Helper()
	Bookworm.Require(t)
	return []*Release{Bookworm, Trixie(t)}
}

// EachRelease runs f as one subtest per release, oldest first, each named
// by its diags ("diags44", "diags56"). Unlike Releases it does not skip
// the whole test when Debian 13's root is missing: then only the diags56
// subtest (named "trixie") skips, or fails in CI, and diags44 still runs.
func EachRelease(t *testing.T, f func(t *testing.T, r *Release)) {
	t.Helper()
	t.Run("diags"+Bookworm.Diags, func(t *testing.T) {
		Bookworm.Require(t)
		f(t, Bookworm)
	})
	t.Run(TrixieSubtest(), func(t *testing.T) {
		f(t, Trixie(t))
	})
}

// TrixieSubtest is the name EachRelease gives Debian 13's subtest:
// "diags" and its diags' major version, or "trixie" when its root is
// missing.
func TrixieSubtest() string {
	if r, err := TrixieRelease(); err == nil {
		return "diags" + r.Diags
	}
	return "trixie"
}

func findTrixie() (*Release, error) {
	root, err := floor.ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, trixieCache)
	ready, err := os.ReadFile(filepath.Join(dir, "ready"))
	if err != nil {
		return nil, fmt.Errorf("the trixie root is not prepared (run scripts/floors/20-trixie.sh): %w", err)
	}
	r := &Release{Name: "trixie", bin: filepath.Join(dir, "bin"), root: filepath.Join(dir, "root")}
	// ready's versions line: "ibsim-utils=0.12-1 infiniband-diags=56.1-1 ...".
	for _, line := range strings.Split(string(ready), "\n") {
		vs, ok := strings.CutPrefix(line, "versions=")
		if !ok {
			continue
		}
		for _, pv := range strings.Fields(vs) {
			p, v, _ := strings.Cut(pv, "=")
			v, _, _ = strings.Cut(v, "-")
			switch p {
			case "infiniband-diags":
				r.Diags, _, _ = strings.Cut(v, ".")
			case "ibsim-utils":
				r.IBSim = v
			}
		}
	}
	if r.Diags == "" || r.IBSim == "" {
		return nil, fmt.Errorf("%s/ready names no infiniband-diags or ibsim-utils version", trixieCache)
	}
	libs, _ := filepath.Glob(filepath.Join(dir, "root/usr/lib/*/umad2sim/libumad2sim.so"))
	if len(libs) == 0 {
		return nil, fmt.Errorf("the trixie root has no libumad2sim.so (rerun scripts/floors/20-trixie.sh)")
	}
	r.preload = libs[0]
	return r, nil
}

func (r *Release) String() string {
	return fmt.Sprintf("%s (infiniband-diags %s, ibsim %s)", r.Name, r.Diags, r.IBSim)
}

// Require skips the test (locally) or fails it (in CI) unless this
// release's ibsim, libumad2sim, OpenSM and infiniband-diags are there.
func (r *Release) Require(t testing.TB) {
	t.Helper()
	for _, p := range peers {
		_, err := r.LookPath(p.bin)
		floor.Need(t, err == nil, fmt.Sprintf("%s of %s (Debian package %s)", p.bin, r.Name, p.pkg))
	}
	_, err := r.umad2sim()
	floor.Need(t, err == nil, fmt.Sprintf("libumad2sim.so of %s (Debian package libumad2sim0)", r.Name))
}

// Glob finds files of the release by an absolute pattern
// ("/usr/lib/*/libibmad.so.5"): in its root, or on the machine for
// Bookworm. For a program to copy elsewhere, such as into a VM guest.
func (r *Release) Glob(pattern string) ([]string, error) {
	if !filepath.IsAbs(pattern) {
		return nil, fmt.Errorf("%q: want an absolute pattern", pattern)
	}
	return filepath.Glob(filepath.Join(r.root, pattern))
}

// LookPath finds a program of the release: for the machine's own, in PATH
// and the sbin directories; for trixie, its wrapper.
func (r *Release) LookPath(name string) (string, error) {
	if r.bin == "" {
		return LookPath(name)
	}
	if name == "" || strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("%q: %w", name, exec.ErrNotFound)
	}
	p := filepath.Join(r.bin, name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s of %s: %w", name, r.Name, exec.ErrNotFound)
	}
	return p, nil
}

func (r *Release) umad2sim() (string, error) {
	if r.bin == "" {
		return UMAD2SimPath()
	}
	if _, err := os.Stat(r.preload); err != nil {
		return "", err
	}
	return r.preload, nil
}

// clientEnv adds what makes a libibumad program an ibsim client:
// libumad2sim preloaded.
func (r *Release) clientEnv(env []string) ([]string, error) {
	pre, err := r.umad2sim()
	if err != nil {
		return nil, err
	}
	if r.bin == "" {
		return append(env, "LD_PRELOAD="+pre), nil
	}
	return append(env, PreloadEnv+"="+pre), nil
}

// StartIBSim starts this release's ibsim on topo, as StartIBSim does.
func (r *Release) StartIBSim(t testing.TB, topo string) *IBSim {
	t.Helper()
	return StartIBSimWith(t, topo, IBSimOptions{Release: r})
}

// release is what a nil Release means: the machine's own peers.
func release(r *Release) *Release {
	if r == nil {
		return Bookworm
	}
	return r
}
