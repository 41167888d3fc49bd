//go:build vmguest

package device

// These tests run as root inside the floor-4 VM (internal/vmtest), where
// rdma_rxe provides rxe0 on dummy0 (10.0.0.1) and ib_umad provides umad0.
// They compare what this package reads from the real sysfs with what
// rdma(8) reads over netlink and ibv_devices reads through libibverbs.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
)

func liveDevices(t *testing.T) []*Device {
	t.Helper()
	devs, err := FS{}.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		t.Fatal("no RDMA devices in the VM")
	}
	return devs
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// rdmaPhysState is iproute2's spelling of PortPhysicalState (rdma/link.c).
var rdmaPhysState = []string{"NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP", "LINK_ERROR_RECOVER", "PHY_TEST"}

func TestGuestRdmaLink(t *testing.T) {
	devs := liveDevices(t)
	var links []struct {
		IfName        string  `json:"ifname"`
		Port          int     `json:"port"`
		State         string  `json:"state"`
		PhysicalState string  `json:"physical_state"`
		NetDev        string  `json:"netdev"`
		LID           *uint16 `json:"lid"`
		SMLID         *uint16 `json:"sm_lid"`
		LMC           *uint8  `json:"lmc"`
	}
	out := run(t, "rdma", "-j", "link", "show")
	if err := json.Unmarshal(out, &links); err != nil {
		t.Fatalf("rdma -j link: %v\n%s", err, out)
	}
	if len(links) == 0 {
		t.Fatalf("rdma -j link shows no links: %s", out)
	}
	var ports int
	for _, d := range devs {
		ports += len(d.Ports)
	}
	if ports != len(links) {
		t.Errorf("sysfs has %d ports, rdma link shows %d", ports, len(links))
	}
	for _, l := range links {
		d, err := FindDevice(devs, l.IfName)
		if err != nil {
			t.Errorf("rdma link %s/%d: %v", l.IfName, l.Port, err)
			continue
		}
		p := d.Port(l.Port)
		if p == nil {
			t.Errorf("rdma link %s/%d: no such port in sysfs", l.IfName, l.Port)
			continue
		}
		if p.State.String() != l.State {
			t.Errorf("%s: state %v, rdma link says %s", p, p.State, l.State)
		}
		if int(p.PhysState) >= len(rdmaPhysState) || rdmaPhysState[p.PhysState] != l.PhysicalState {
			t.Errorf("%s: physical state %v, rdma link says %s", p, p.PhysState, l.PhysicalState)
		}
		// rdma link prints a netdev for RoCE/iWARP ports and LIDs only
		// for InfiniBand ones.
		wantLL := LinkLayerInfiniBand
		if l.NetDev != "" {
			wantLL = LinkLayerEthernet
		}
		if p.LinkLayer != wantLL {
			t.Errorf("%s: link layer %v, rdma link (netdev %q) implies %v", p, p.LinkLayer, l.NetDev, wantLL)
		}
		if l.LID != nil && (*l.LID != p.LID || *l.SMLID != p.SMLID || *l.LMC != p.LMC) {
			t.Errorf("%s: LID %d SM LID %d LMC %d, rdma link says %d %d %d", p, p.LID, p.SMLID, p.LMC, *l.LID, *l.SMLID, *l.LMC)
		}
	}
	rxe, err := FindEndPort(devs, "rxe0/1")
	if err != nil {
		t.Fatal(err)
	}
	if rxe.LinkLayer != LinkLayerEthernet || rxe.State != PortActive {
		t.Errorf("rxe0/1: %v %v, want Ethernet ACTIVE", rxe.LinkLayer, rxe.State)
	}
	ipv4, _ := iba.ParseGID("::ffff:10.0.0.1")
	if _, ok := rxe.GIDIndex(ipv4); !ok {
		t.Errorf("rxe0/1 has no GID for 10.0.0.1: %v", rxe.GIDs)
	}
	if got, err := SelectEndPort(devs, "", ""); err != nil || got.String() != "rxe0/1" {
		t.Errorf("default end port = %v, %v; want rxe0/1", got, err)
	}
}

func TestGuestIbvDevices(t *testing.T) {
	devs := liveDevices(t)
	// ibv_devices prints a two-line header, then "name<TAB>node GUID" with
	// the GUID as 16 hex digits.
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(run(t, "ibv_devices")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || f[0] == "device" || strings.HasPrefix(f[0], "---") {
			continue
		}
		d, err := FindDevice(devs, f[0])
		if err != nil {
			t.Errorf("ibv_devices lists %s: %v", f[0], err)
			continue
		}
		if g, err := iba.ParseGUID(f[1]); err != nil || g != d.NodeGUID {
			t.Errorf("%s: node GUID %v, ibv_devices says %s", d, d.NodeGUID, f[1])
		}
		seen[f[0]] = true
	}
	for _, d := range devs {
		if d.Uverbs != nil && !seen[d.Name] {
			t.Errorf("%s has %s but ibv_devices does not list it", d, d.Uverbs)
		}
	}
}

func TestGuestCharDevs(t *testing.T) {
	devs := liveDevices(t)
	rxe, err := FindEndPort(devs, "rxe0/1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*CharDev{rxe.Umad, rxe.Issm, rxe.Device.Uverbs} {
		if c == nil {
			t.Fatalf("rxe0/1: umad %v issm %v uverbs %v; want all three", rxe.Umad, rxe.Issm, rxe.Device.Uverbs)
		}
		var st unix.Stat_t
		if err := unix.Stat(c.Path, &st); err != nil {
			t.Errorf("%s: %v", c.Path, err)
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || unix.Major(st.Rdev) != c.Major || unix.Minor(st.Rdev) != c.Minor {
			t.Errorf("%s: mode %o device %d:%d, sysfs dev says %d:%d", c.Path, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), c.Major, c.Minor)
		}
	}
	if rxe.GSIUmad != rxe.Umad || rxe.SMIUmad != nil {
		t.Errorf("rxe0/1 GSI %v SMI %v, want umad0 and none (RoCE has no QP0)", rxe.GSIUmad, rxe.SMIUmad)
	}
	if v, err := (FS{}).MADABIVersion(); err != nil || v != 5 {
		t.Errorf("MADABIVersion = %d, %v; want 5", v, err)
	}
}
