package rdmadev

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

// The sysfs files and netlink exchanges of testdata/vm were recorded from the
// same VM boot (Linux 6.1, rxe0 on dummy0, siw0 on dummy1), by
// `go test ./rdmadev -run TestVM -record`.
const vmSys = "testdata/vm/sys"

func joinRecorded(t *testing.T, sysRoot string) []Device {
	t.Helper()
	ex, err := nldevtest.ReadFile("testdata/vm/netlink.nl")
	if err != nil {
		t.Fatal(err)
	}
	devs, err := Join(context.Background(), nldevtest.Replay(t, ex), device.FS{SysRoot: sysRoot})
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func TestRecordedViewsAgree(t *testing.T) {
	devs := joinRecorded(t, vmSys)
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
		if d.Sysfs == nil || d.Netlink == nil || len(d.Ports) != 1 || d.Ports[0].Sysfs == nil || d.Ports[0].Netlink == nil {
			t.Fatalf("%s not joined in both views: %+v", d.Name, d)
		}
	}
	if !slices.Equal(names, []string{"rxe0", "siw0"}) {
		t.Fatalf("joined %v", names)
	}
	if m := Check(devs); len(m) != 0 {
		t.Fatalf("the recorded views disagree: %v", m)
	}
	if got := LinkLayerOf(devs[1].Netlink.Protocol); got != device.LinkLayerEthernet {
		t.Fatalf("siw0's protocol %q gives link layer %v", devs[1].Netlink.Protocol, got)
	}
}

// copyTree copies the recorded sysfs tree so a test can change it.
func copyTree(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(vmSys, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(vmSys, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestDisagreementsFound(t *testing.T) {
	root := copyTree(t)
	ib := filepath.Join(root, "class", "infiniband")
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(ib, rel), []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rxe0/ports/1/state", "1: DOWN")
	write("rxe0/ports/1/lid", "0x7")
	write("siw0/node_guid", "0002:c903:0000:1491")
	write("siw0/ports/1/link_layer", "InfiniBand")
	// A device only sysfs lists.
	if err := os.MkdirAll(filepath.Join(ib, "mlx5_0"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("mlx5_0/node_type", "1: CA")
	write("mlx5_0/node_guid", "0002:c903:0000:1492")
	write("mlx5_0/sys_image_guid", "0002:c903:0000:1492")

	var got []string
	for _, m := range Check(joinRecorded(t, root)) {
		got = append(got, m.String())
	}
	want := []string{
		"mlx5_0 device: sysfs present, netlink absent",
		"rxe0/1 state: sysfs DOWN, netlink ACTIVE",
		"rxe0/1 lid: sysfs 7, netlink 0",
		"siw0 node_guid: sysfs 0002:c903:0000:1491, netlink ",
		"siw0/1 link_layer: sysfs InfiniBand, netlink Ethernet",
	}
	if len(got) != len(want) {
		t.Fatalf("mismatches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("mismatch %d: %q, want %q...", i, got[i], want[i])
		}
	}
}
