//go:build vmguest

package vmtest

// These tests run inside the VM (see doc.go); vmtest_test.go boots them.

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
)

var (
	failOnPurpose = flag.Bool("vmtest.fail", false, "make TestGuestFailOnPurpose fail")
	wantProbe     = flag.String("vmtest.probe", "", "expected value of $VMTEST_PROBE")
)

// TestGuestRXE checks the guest contract of doc.go for soft-RoCE.
func TestGuestRXE(t *testing.T) {
	if os.Getuid() != 0 {
		t.Errorf("uid %d, want root", os.Getuid())
	}
	for _, p := range []string{"/sys/class/infiniband/rxe0", "/sys/class/infiniband/rxe0/ports/1/gids/1", "/dev/infiniband/uverbs0"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%v", err)
		}
	}
	if b, err := os.ReadFile("/sys/class/infiniband/rxe0/ports/1/gids/1"); err != nil || strings.TrimSpace(string(b)) != "0000:0000:0000:0000:0000:ffff:0a00:0001" {
		t.Errorf("rxe0 GID 1 = %q (%v), want ::ffff:10.0.0.1", b, err)
	}

	out, err := exec.Command("rdma", "-j", "link").Output()
	if err != nil {
		t.Fatalf("rdma -j link: %v", err)
	}
	var links []struct {
		IfName string `json:"ifname"`
		Port   int    `json:"port"`
		State  string `json:"state"`
		Netdev string `json:"netdev"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatalf("rdma -j link: %v in %s", err, out)
	}
	found := false
	for _, l := range links {
		if l.IfName == "rxe0" {
			found = true
			if l.Port != 1 || l.State != "ACTIVE" || l.Netdev != "dummy0" {
				t.Errorf("rxe0 link = %+v, want port 1 ACTIVE on dummy0", l)
			}
		}
	}
	if !found {
		t.Errorf("rdma -j link does not list rxe0: %s", out)
	}

	// umad needs the device open read-write, as libibumad does.
	f, err := os.OpenFile("/dev/infiniband/umad0", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("opening umad0: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("closing umad0: %v", err)
	}
	if b, err := os.ReadFile("/sys/class/infiniband_mad/umad0/ibdev"); err != nil || strings.TrimSpace(string(b)) != "rxe0" {
		t.Errorf("umad0 ibdev = %q (%v), want rxe0", b, err)
	}

	out, err = exec.Command("ibv_devices").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rxe0") {
		t.Errorf("ibv_devices: %v\n%s", err, out)
	}
}

// TestGuestSIW checks siw0. The contract allows a VM without siw.ko (it is
// built out of tree), but CI's set-up builds it, so there its absence fails.
func TestGuestSIW(t *testing.T) {
	_, err := os.Stat("/sys/module/siw")
	floor.Need(t, err == nil, "siw.ko in the VM (scripts/vm/siw.sh)")
	b, err := os.ReadFile("/sys/class/infiniband/siw0/node_type")
	if err != nil {
		t.Fatalf("siw0: %v", err)
	}
	if !strings.Contains(string(b), "RNIC") {
		t.Errorf("siw0 node_type = %q, want an RNIC", b)
	}
}

// TestGuestHarness checks what the harness passes in: environment, extra
// binaries on PATH, and the package directory as working directory.
func TestGuestHarness(t *testing.T) {
	if got := os.Getenv("VMTEST_PROBE"); got != *wantProbe {
		t.Errorf("$VMTEST_PROBE = %q, want %q", got, *wantProbe)
	}
	out, err := exec.Command("vmhello").Output()
	if err != nil {
		t.Fatalf("running the extra binary vmhello: %v", err)
	}
	if got, want := strings.TrimSpace(string(out)), "vmhello "+*wantProbe; got != want {
		t.Errorf("vmhello printed %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("VMTEST_DIR"), "notes.txt")); err != nil {
		t.Errorf("extra file: %v", err)
	}
	if _, err := os.Stat("doc.go"); err != nil {
		t.Errorf("working directory is not the package directory: %v", err)
	}
}

// TestGuestCgoVerbs runs the cgo extra binary vmverbs: libibverbs, the rxe
// provider and the uverbs device work for a dynamically linked Go program.
func TestGuestCgoVerbs(t *testing.T) {
	out, err := exec.Command("vmverbs", "rxe0").CombinedOutput()
	if err != nil {
		t.Fatalf("vmverbs rxe0: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "vmverbs rxe0: ok" {
		t.Errorf("vmverbs printed %q", got)
	}
}

// guestTools are the kernel and iproute2 each guest has (30-vm.sh).
var guestTools = map[string]struct{ uname, iproute2 string }{
	"6.1":  {"6.1.", "iproute2-6.1.0"},
	"6.12": {"6.12.", "iproute2-6.15."},
}

// TestGuestKernel checks that the guest is the one asked for: its kernel
// series ($VMTEST_KERNEL) and the iproute2 release that comes with it.
func TestGuestKernel(t *testing.T) {
	k := os.Getenv("VMTEST_KERNEL")
	want, ok := guestTools[k]
	if !ok {
		t.Fatalf("$VMTEST_KERNEL = %q names no known guest", k)
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	if !strings.HasPrefix(string(rel), want.uname) {
		t.Errorf("kernel %s, want %s*", rel, want.uname)
	}
	out, err := exec.Command("rdma", "-V").Output()
	if err != nil || !strings.Contains(string(out), want.iproute2) {
		t.Errorf("rdma -V: %q (%v), want %s", out, err, want.iproute2)
	}
}

// TestGuestFailOnPurpose fails when -vmtest.fail is given, so that the host
// can check that a failing guest test fails Run.
func TestGuestFailOnPurpose(t *testing.T) {
	if !*failOnPurpose {
		t.Skip("only fails with -vmtest.fail")
	}
	t.Error("failing on purpose (-vmtest.fail)")
}
