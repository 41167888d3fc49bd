//go:build vmguest

package rdmadev

// Runs inside the kernel VM (internal/vmtest): sysfs and netlink must agree
// on rxe0 and siw0. With RDMADEV_RECORD=1 the netlink exchanges and the
// sysfs files Join read go to the console, for vm_host_test.go to store
// under testdata/vm.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/nldev"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

func TestLiveAgree(t *testing.T) {
	_, err := os.Stat("/sys/class/infiniband/siw0")
	floor.Need(t, err == nil, "siw0 in the VM")
	rec, err := nldevtest.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	devs, err := Join(ctx, rec.Conn(), device.FS{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range devs {
		seen[d.Name] = d.Sysfs != nil && d.Netlink != nil && len(d.Ports) == 1
	}
	if !seen["rxe0"] || !seen["siw0"] {
		t.Fatalf("want rxe0 and siw0 with one port in both views, joined %+v", devs)
	}
	for _, m := range Check(devs) {
		t.Errorf("disagreement: %v", m)
	}
	// The real connection must see the same.
	c, err := nldev.Dial(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	again, err := Join(ctx, c, device.FS{})
	if err != nil || len(again) != len(devs) || len(Check(again)) != 0 {
		t.Fatalf("through nldev.Dial: %d devices, %v, %v", len(again), err, Check(again))
	}
	if os.Getenv("RDMADEV_RECORD") != "1" {
		return
	}
	uname, _ := exec.Command("uname", "-r").Output()
	b, err := nldevtest.Marshal(fmt.Sprintf("Join's netlink exchanges, recorded from Linux %s in the vmtest VM (go test ./rdmadev -run TestVM -record)", strings.TrimSpace(string(uname))), rec.Take())
	if err != nil {
		t.Fatal(err)
	}
	nldevtest.Emit("testdata/vm/netlink.nl", b)
	for _, d := range devs {
		emitSysfs(t, d.Name)
	}
}

// emitSysfs sends the files package device reads for one device; unused
// (all-zero) GID and P_Key entries are left out, as device skips them.
func emitSysfs(t *testing.T, name string) {
	root := "/sys/class/infiniband/" + name
	send := func(rel string) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return // absent, or the driver cannot provide it (EINVAL)
		}
		nldevtest.Emit("testdata/vm/sys/class/infiniband/"+name+"/"+rel, b)
	}
	for _, f := range []string{"node_type", "node_guid", "sys_image_guid", "fw_ver", "hw_rev", "board_id", "hca_type", "node_desc"} {
		send(f)
	}
	ports, err := os.ReadDir(filepath.Join(root, "ports"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, p := range ports {
		pd := "ports/" + p.Name() + "/"
		for _, f := range []string{"state", "phys_state", "rate", "lid", "sm_lid", "lid_mask_count", "sm_sl", "cap_mask", "link_layer"} {
			send(pd + f)
		}
		gids, _ := os.ReadDir(filepath.Join(root, pd, "gids"))
		for _, g := range gids {
			b, err := os.ReadFile(filepath.Join(root, pd, "gids", g.Name()))
			if err != nil || strings.TrimSpace(string(b)) == "0000:0000:0000:0000:0000:0000:0000:0000" {
				continue
			}
			send(pd + "gids/" + g.Name())
			send(pd + "gid_attrs/types/" + g.Name())
			send(pd + "gid_attrs/ndevs/" + g.Name())
		}
		pkeys, _ := os.ReadDir(filepath.Join(root, pd, "pkeys"))
		for _, k := range pkeys {
			b, err := os.ReadFile(filepath.Join(root, pd, "pkeys", k.Name()))
			if err == nil && strings.TrimSpace(string(b)) != "0x0000" {
				send(pd + "pkeys/" + k.Name())
			}
		}
	}
}
