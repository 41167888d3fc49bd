//go:build !vmguest

package rdmadev

// The host side: boots the kernel VM and runs TestLiveAgree inside it; with
// -record it stores what the guest recorded under testdata/vm.

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

var record = flag.Bool("record", false, "store the netlink exchanges and sysfs files recorded in the VM under testdata/vm")

func TestVM(t *testing.T) {
	con := &nldevtest.Console{TB: t}
	o := vmtest.Options{Pkg: "./rdmadev", Args: []string{"-test.run", "^TestLiveAgree$", "-test.v"}}
	if *record {
		o.Env = map[string]string{"RDMADEV_RECORD": "1"}
	}
	vmtest.RunWith(con, o)
	if !*record || t.Failed() {
		return
	}
	files, err := nldevtest.Collect(con.Lines)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["testdata/vm/netlink.nl"]; !ok {
		t.Fatal("the guest recorded no netlink exchanges")
	}
	if err := os.RemoveAll(filepath.Join("testdata", "vm")); err != nil {
		t.Fatal(err)
	}
	for _, name := range nldevtest.Names(files) {
		if !strings.HasPrefix(name, "testdata/vm/") {
			t.Fatalf("the guest sent %q, outside testdata/vm", name)
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("stored %d files under testdata/vm", len(files))
}
