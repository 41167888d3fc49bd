//go:build !vmguest

package nldev_test

// The host side of the VM tests: boots the kernel VMs and runs
// record_vmguest_test.go inside each, so that every call decodes all that
// Linux 6.1 and 6.12 send. With -record it stores the exchanges the 6.1
// guest recorded under testdata/replay and adds their replies to the fuzz
// seed corpus.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/rdmakit/rdmakit/internal/vmtest"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

var record = flag.Bool("record", false, "store the exchanges recorded in the VM under testdata/replay")

func TestVM(t *testing.T) {
	t.Run(vmtest.Kernel612, func(t *testing.T) {
		vmtest.RunWith(t, vmtest.Options{Pkg: "./nldev", Kernel: vmtest.Kernel612, Args: []string{"-test.run", "^TestRecordReplies$", "-test.v"}})
	})
	t.Run(vmtest.Kernel61, testVM61)
}

// testVM61 runs the cases in the 6.1 guest, the one the recordings come from.
func testVM61(t *testing.T) {
	con := &nldevtest.Console{TB: t}
	o := vmtest.Options{Pkg: "./nldev", Args: []string{"-test.run", "^TestRecordReplies$", "-test.v"}}
	if *record {
		o.Env = map[string]string{"NLDEV_RECORD": "1"}
	}
	vmtest.RunWith(con, o)
	if !*record || t.Failed() {
		return
	}
	files, err := nldevtest.Collect(con.Lines)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(replayCases) {
		t.Fatalf("the guest sent %d recordings, want %d", len(files), len(replayCases))
	}
	seeds := filepath.Join("testdata", "fuzz", "FuzzUnmarshalAttributes")
	old, _ := filepath.Glob(filepath.Join(seeds, "vm-*"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, name := range nldevtest.Names(files) {
		if !strings.HasPrefix(name, replayDir+"/") {
			t.Fatalf("the guest sent %q, outside %s", name, replayDir)
		}
		if err := os.WriteFile(name, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		ex, err := nldevtest.Unmarshal(files[name])
		if err != nil {
			t.Fatal(err)
		}
		// One seed per case: the first data reply after the device list.
		base := strings.TrimSuffix(filepath.Base(name), ".nl")
		for _, e := range ex[1:] {
			if len(e.Replies) == 0 || e.Replies[0].Header.Type == netlink.Error {
				continue
			}
			seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", e.Replies[0].Data)
			if err := os.WriteFile(filepath.Join(seeds, "vm-"+base), []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	t.Logf("stored %d recordings under %s", len(files), replayDir)
}
