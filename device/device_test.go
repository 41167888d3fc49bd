package device

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmakit/rdmakit/iba"
)

// fixture returns the FS of a tree under testdata/, with device nodes under
// a fake /dev root so paths are checked without touching the machine's.
func fixture(name string) FS {
	return FS{SysRoot: filepath.Join("testdata", name, "sys"), DevRoot: "/fakedev"}
}

func mustList(t *testing.T, f FS) []*Device {
	t.Helper()
	devs, err := f.List()
	if err != nil {
		t.Fatalf("List(%s): %v", f.SysRoot, err)
	}
	return devs
}

// deviceView and portView hold the fields a test compares, without the
// back pointers of Device and Port.
type deviceView struct {
	Name, FWVersion, HWRev, BoardID, HCAType, NodeDesc string
	NodeType                                           NodeType
	NodeGUID, SysImageGUID                             iba.GUID
	Uverbs                                             string
	Ports                                              []portView
}

type portView struct {
	Name                  string
	State                 PortState
	PhysState             PhysState
	Rate                  string
	RateGbps              float64
	Width                 int
	Speed                 string
	LID, SMLID            uint16
	LMC, SMSL             uint8
	CapMask               uint32
	LinkLayer             LinkLayer
	PortGUID              iba.GUID
	GIDPrefix             uint64
	GIDs                  []string
	PKeys                 []PKeyEntry
	Umad, Issm            string
	GSIUmad, SMIUmad      string
	GSIPort, SMIPort      string
	UmadMajor, UmadMinor  uint32
	IssmMajor, IssmMinor  uint32
	DefaultGID, DirSuffix string
	SMDisabled            bool
}

func charPath(c *CharDev) string {
	if c == nil {
		return ""
	}
	return c.Path
}

func portName(p *Port) string {
	if p == nil {
		return ""
	}
	return p.String()
}

func view(d *Device) deviceView {
	v := deviceView{
		Name: d.Name, FWVersion: d.FWVersion, HWRev: d.HWRev, BoardID: d.BoardID, HCAType: d.HCAType,
		NodeDesc: d.NodeDesc, NodeType: d.NodeType, NodeGUID: d.NodeGUID, SysImageGUID: d.SysImageGUID,
		Uverbs: charPath(d.Uverbs),
	}
	for _, p := range d.Ports {
		pv := portView{
			Name: p.String(), State: p.State, PhysState: p.PhysState, Rate: p.Rate, RateGbps: p.RateGbps,
			Width: p.Width, Speed: p.Speed, LID: p.LID, SMLID: p.SMLID, LMC: p.LMC, SMSL: p.SMSL,
			CapMask: p.CapMask, LinkLayer: p.LinkLayer, PortGUID: p.PortGUID, GIDPrefix: p.GIDPrefix,
			PKeys: p.PKeys, Umad: charPath(p.Umad), Issm: charPath(p.Issm),
			GSIUmad: charPath(p.GSIUmad), SMIUmad: charPath(p.SMIUmad),
			GSIPort: portName(p.GSIPort), SMIPort: portName(p.SMIPort),
			DefaultGID: p.DefaultGID().String(), SMDisabled: p.IsSMDisabled(),
			DirSuffix: filepath.ToSlash(strings.TrimPrefix(p.Dir, filepath.Dir(d.Dir))),
		}
		if p.Umad != nil {
			pv.UmadMajor, pv.UmadMinor = p.Umad.Major, p.Umad.Minor
		}
		if p.Issm != nil {
			pv.IssmMajor, pv.IssmMinor = p.Issm.Major, p.Issm.Minor
		}
		for _, g := range p.GIDs {
			s := g.GID.String()
			if g.Type != "" {
				s += " " + g.Type + " " + g.NetDev
			}
			pv.GIDs = append(pv.GIDs, s)
		}
		v.Ports = append(v.Ports, pv)
	}
	return v
}

func TestListFixtures(t *testing.T) {
	ibPort := portView{
		Name: "mlx5_0/1", State: PortActive, PhysState: PhysLinkUp, Rate: "100 Gb/sec (4X EDR)",
		RateGbps: 100, Width: 4, Speed: "EDR", LID: 5, SMLID: 1, LMC: 0, SMSL: 0, CapMask: 0xa651e848,
		LinkLayer: LinkLayerInfiniBand, PortGUID: 0x248a0703005d8e2a, GIDPrefix: 0xfe80000000000000,
		GIDs:  []string{"fe80::248a:703:5d:8e2a"},
		PKeys: []PKeyEntry{{0, 0xffff}, {1, 0x8001}},
		Umad:  "/fakedev/infiniband/umad0", Issm: "/fakedev/infiniband/issm0",
		GSIUmad: "/fakedev/infiniband/umad0", SMIUmad: "/fakedev/infiniband/umad0",
		GSIPort: "mlx5_0/1", SMIPort: "mlx5_0/1",
		UmadMajor: 231, UmadMinor: 0, IssmMajor: 231, IssmMinor: 64,
		DefaultGID: "fe80::248a:703:5d:8e2a", DirSuffix: "/mlx5_0/ports/1",
	}
	rocePort := portView{
		Name: "mlx5_0/1", State: PortActive, PhysState: PhysLinkUp, Rate: "25 Gb/sec (1X EDR)",
		RateGbps: 25, Width: 1, Speed: "EDR", CapMask: 0x04010000, LinkLayer: LinkLayerEthernet,
		PortGUID: 0x526b4bfffe123456, GIDPrefix: 0xfe80000000000000,
		GIDs: []string{
			"fe80::526b:4bff:fe12:3456 IB/RoCE v1 eth2", "fe80::526b:4bff:fe12:3456 RoCE v2 eth2",
			"::ffff:192.168.10.5 IB/RoCE v1 eth2", "::ffff:192.168.10.5 RoCE v2 eth2",
		},
		PKeys: []PKeyEntry{{0, 0xffff}},
		Umad:  "/fakedev/infiniband/umad0", Issm: "/fakedev/infiniband/issm0",
		GSIUmad: "/fakedev/infiniband/umad0", GSIPort: "mlx5_0/1",
		UmadMajor: 231, IssmMajor: 231, IssmMinor: 64,
		DefaultGID: "fe80::526b:4bff:fe12:3456", DirSuffix: "/mlx5_0/ports/1",
	}
	twoPort1 := portView{
		Name: "mlx4_0/1", State: PortDown, PhysState: PhysPolling, Rate: "10 Gb/sec (4X SDR)",
		RateGbps: 10, Width: 4, Speed: "SDR", CapMask: 0x02514868, LinkLayer: LinkLayerInfiniBand,
		PortGUID: 0x0002c90300001491, GIDPrefix: 0xfe80000000000000, GIDs: []string{"fe80::2:c903:0:1491"},
		PKeys: []PKeyEntry{{0, 0xffff}},
		Umad:  "/fakedev/infiniband/umad0", Issm: "/fakedev/infiniband/issm0",
		GSIUmad: "/fakedev/infiniband/umad0", SMIUmad: "/fakedev/infiniband/umad0",
		GSIPort: "mlx4_0/1", SMIPort: "mlx4_0/1", UmadMajor: 231, IssmMajor: 231, IssmMinor: 64,
		DefaultGID: "fe80::2:c903:0:1491", DirSuffix: "/mlx4_0/ports/1",
	}
	twoPort2 := portView{
		Name: "mlx4_0/2", State: PortActive, PhysState: PhysLinkUp, Rate: "56 Gb/sec (4X FDR)",
		RateGbps: 56, Width: 4, Speed: "FDR", LID: 12, SMLID: 1, LMC: 2, SMSL: 1, CapMask: 0x02514868,
		LinkLayer: LinkLayerInfiniBand, PortGUID: 0x0002c90300001492, GIDPrefix: 0xfe80000000000000,
		GIDs: []string{"fe80::2:c903:0:1492"}, PKeys: []PKeyEntry{{0, 0xffff}, {1, 0x7fff}},
		Umad: "/fakedev/infiniband/umad1", Issm: "/fakedev/infiniband/issm1",
		GSIUmad: "/fakedev/infiniband/umad1", SMIUmad: "/fakedev/infiniband/umad1",
		GSIPort: "mlx4_0/2", SMIPort: "mlx4_0/2", UmadMajor: 231, UmadMinor: 1, IssmMajor: 231, IssmMinor: 65,
		DefaultGID: "fe80::2:c903:0:1492", DirSuffix: "/mlx4_0/ports/2",
	}
	splitPort := func(name, umad string, minor uint32, capMask uint32, rate string, gbps float64, width int) portView {
		return portView{
			Name: name, State: PortActive, PhysState: PhysLinkUp, Rate: rate, RateGbps: gbps, Width: width,
			Speed: "NDR", LID: 7, SMLID: 1, CapMask: capMask, LinkLayer: LinkLayerInfiniBand,
			PortGUID: 0xb83fd203000a01c0, GIDPrefix: 0xfe80000000000000, GIDs: []string{"fe80::b83f:d203:a:1c0"},
			PKeys: []PKeyEntry{{0, 0xffff}}, Umad: "/fakedev/infiniband/" + umad,
			Issm:      "/fakedev/infiniband/issm" + strings.TrimPrefix(umad, "umad"),
			UmadMajor: 231, UmadMinor: minor, IssmMajor: 231, IssmMinor: 64 + minor,
			DefaultGID: "fe80::b83f:d203:a:1c0", DirSuffix: "/" + strings.TrimSuffix(name, "/1") + "/ports/1",
			SMDisabled: capMask&CapMaskIsSMDisabled != 0,
		}
	}
	plane0 := splitPort("mlx5_0/1", "umad0", 0, 0xa651ec48, "200 Gb/sec (2X NDR)", 200, 2)
	plane0.GSIUmad, plane0.GSIPort = plane0.Umad, "mlx5_0/1"
	plane0.SMIUmad, plane0.SMIPort = "/fakedev/infiniband/umad2", "smi1/1"
	plane1 := splitPort("mlx5_1/1", "umad1", 1, 0xa651ec48, "200 Gb/sec (2X NDR)", 200, 2)
	plane1.GSIUmad, plane1.GSIPort = plane1.Umad, "mlx5_1/1"
	plane1.SMIUmad, plane1.SMIPort = "/fakedev/infiniband/umad2", "smi1/1"
	smiPort := splitPort("smi1/1", "umad2", 2, 0xa651e848, "800 Gb/sec (8X NDR)", 800, 8)
	smiPort.GSIUmad, smiPort.GSIPort = "/fakedev/infiniband/umad0", "mlx5_0/1"
	smiPort.SMIUmad, smiPort.SMIPort = smiPort.Umad, "smi1/1"
	splitDev := func(name string, p portView, uverbs string) deviceView {
		return deviceView{
			Name: name, FWVersion: "40.44.1036", HWRev: "0x0", BoardID: "NVD0000000054", HCAType: "MT4131",
			NodeDesc: "gb01 HCA-1", NodeType: NodeCA, NodeGUID: 0xb83fd203000a01c0, SysImageGUID: 0xb83fd203000a01c0,
			Uverbs: uverbs, Ports: []portView{p},
		}
	}

	tests := []struct {
		fixture string
		want    []deviceView
	}{
		{"mlx5-ib", []deviceView{{
			Name: "mlx5_0", FWVersion: "16.35.2000", HWRev: "0x0", BoardID: "MT_0000000012", HCAType: "MT4119",
			NodeDesc: "node01 mlx5_0", NodeType: NodeCA, NodeGUID: 0x248a0703005d8e2a, SysImageGUID: 0x248a0703005d8e2a,
			Uverbs: "/fakedev/infiniband/uverbs0", Ports: []portView{ibPort},
		}}},
		{"roce", []deviceView{{
			Name: "mlx5_0", FWVersion: "22.36.1010", HWRev: "0x0", BoardID: "MT_0000000359", HCAType: "MT4125",
			NodeDesc: "roce01 mlx5_0", NodeType: NodeCA, NodeGUID: 0x506b4b0300123456, SysImageGUID: 0x506b4b0300123456,
			Uverbs: "/fakedev/infiniband/uverbs0", Ports: []portView{rocePort},
		}}},
		{"two-port", []deviceView{{
			Name: "mlx4_0", FWVersion: "2.42.5000", HWRev: "0xb0", BoardID: "MT_1090120019", HCAType: "MT4099",
			NodeDesc: "node02 HCA-1", NodeType: NodeCA, NodeGUID: 0x0002c90300001490, SysImageGUID: 0x0002c90300001493,
			Uverbs: "/fakedev/infiniband/uverbs0", Ports: []portView{twoPort1, twoPort2},
		}}},
		{"smi-split", []deviceView{
			splitDev("mlx5_0", plane0, "/fakedev/infiniband/uverbs0"),
			splitDev("mlx5_1", plane1, "/fakedev/infiniband/uverbs1"),
			splitDev("smi1", smiPort, ""),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			devs := mustList(t, fixture(tt.fixture))
			var got []deviceView
			for _, d := range devs {
				got = append(got, view(d))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRXE checks the tree captured from a real rdma_rxe device in the test
// VM (kernel 6.1): what the kernel prints there, not what we think it prints.
func TestRXE(t *testing.T) {
	devs := mustList(t, fixture("rxe"))
	if len(devs) != 1 {
		t.Fatalf("got %d devices, want 1", len(devs))
	}
	d := devs[0]
	if d.Name != "rxe0" || d.NodeType != NodeCA || d.NodeGUID != 0x143df9fffe58006c ||
		d.SysImageGUID != d.NodeGUID || d.FWVersion != "" || d.HWRev != "" || d.NodeDesc != "rxe" ||
		d.Uverbs == nil || d.Uverbs.Major != 231 || d.Uverbs.Minor != 192 {
		t.Errorf("device = %+v", *d)
	}
	if len(d.Ports) != 1 {
		t.Fatalf("got %d ports, want 1", len(d.Ports))
	}
	p := d.Ports[0]
	if p.State != PortActive || p.PhysState != PhysLinkUp || p.LinkLayer != LinkLayerEthernet {
		t.Errorf("port state %v/%v link layer %v, want ACTIVE/LinkUp/Ethernet", p.State, p.PhysState, p.LinkLayer)
	}
	if p.Umad == nil || p.Umad.Name != "umad0" || p.Issm == nil || p.Issm.Name != "issm0" {
		t.Errorf("umad %v issm %v, want umad0 and issm0", p.Umad, p.Issm)
	}
	if p.SMIUmad != nil || p.GSIUmad != p.Umad {
		t.Errorf("RoCE port: SMIUmad %v GSIUmad %v, want none and umad0", p.SMIUmad, p.GSIUmad)
	}
	if p.Rate != "2.5 Gb/sec (1X SDR)" || p.RateGbps != 2.5 || p.Width != 1 || p.Speed != "SDR" {
		t.Errorf("rate %q parsed as %v Gb/s, %dX %s", p.Rate, p.RateGbps, p.Width, p.Speed)
	}
	if p.LID != 0 || p.SMLID != 0 || p.CapMask != 0x00010000 || p.PortGUID != 0x143df9fffe58006c ||
		len(p.PKeys) != 1 || p.PKeys[0].PKey != 0xffff {
		t.Errorf("port = %+v", *p)
	}
	hw, err := p.HWCounters()
	if err != nil || len(hw) != 15 {
		t.Errorf("HWCounters = %v, %v; want the 15 rxe counters", hw, err)
	}
	if _, ok := hw["rcvd_pkts"]; !ok {
		t.Errorf("HWCounters has no rcvd_pkts: %v", hw)
	}
	want, _ := iba.ParseGID("::ffff:10.0.0.1")
	idx, ok := p.GIDIndex(want)
	if !ok || idx != 1 {
		t.Errorf("GID %v at index %d (found %v), want index 1; GIDs %v", want, idx, ok, p.GIDs)
	}
	if len(p.GIDs) != 2 {
		t.Errorf("GIDs %v, want 2 (link-local and IPv4)", p.GIDs)
	}
	for _, g := range p.GIDs {
		if g.Type != "RoCE v2" || g.NetDev != "dummy0" {
			t.Errorf("GID %d type %q netdev %q, want RoCE v2 on dummy0", g.Index, g.Type, g.NetDev)
		}
	}
}

func TestCounters(t *testing.T) {
	devs := mustList(t, fixture("mlx5-ib"))
	p := devs[0].Ports[0]
	c, err := p.Counters()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{
		"port_xmit_data": 123456789, "port_rcv_data": 987654321, "port_xmit_packets": 1000,
		"port_rcv_packets": 2000, "symbol_error": 0, "link_downed": 1, "port_rcv_errors": 0, "port_xmit_wait": 17,
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Counters (-want +got):\n%s", diff)
	}
	hw, err := p.HWCounters()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]uint64{"out_of_buffer": 3, "rx_write_requests": 42}, hw); diff != "" {
		t.Errorf("HWCounters (-want +got):\n%s", diff)
	}
	// A port without counter directories has no counters, not an error.
	p2 := mustList(t, fixture("two-port"))[0].Ports[0]
	if c, err := p2.HWCounters(); err != nil || len(c) != 0 {
		t.Errorf("HWCounters of a port without hw_counters = %v, %v; want empty, nil", c, err)
	}
}

func TestListNoRDMA(t *testing.T) {
	devs, err := List(t.TempDir())
	if err != nil || len(devs) != 0 {
		t.Errorf("List(empty sysfs) = %v, %v; want no devices and no error", devs, err)
	}
	_, err = SelectEndPort(devs, "", "")
	if !errors.Is(err, ErrNoDevices) {
		t.Errorf("SelectEndPort(no devices) = %v, want ErrNoDevices", err)
	}
}

// copyTree copies a fixture so a test can change files in it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestListMalformed(t *testing.T) {
	tests := []struct {
		file, content, wantErr string
	}{
		{"class/infiniband/mlx5_0/node_guid", "not-a-guid\n", "node_guid"},
		{"class/infiniband/mlx5_0/node_type", "CA\n", "node_type"},
		{"class/infiniband/mlx5_0/ports/1/lid", "0xfffff\n", "lid"},
		{"class/infiniband/mlx5_0/ports/1/state", "x: ACTIVE\n", "state"},
		{"class/infiniband/mlx5_0/ports/1/pkeys/0", "0xfffff\n", "pkeys/0"},
		{"class/infiniband_mad/umad0/dev", "231\n", "dev"},
		{"class/infiniband_mad/umad0/port", "one\n", "port"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", "mlx5-ib", "sys"))
			if err := os.WriteFile(filepath.Join(root, tt.file), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := List(root)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("List with bad %s: error %v, want one naming %q", tt.file, err, tt.wantErr)
			}
		})
	}
	t.Run("missing state", func(t *testing.T) {
		root := copyTree(t, filepath.Join("testdata", "mlx5-ib", "sys"))
		if err := os.Remove(filepath.Join(root, "class/infiniband/mlx5_0/ports/1/state")); err != nil {
			t.Fatal(err)
		}
		_, err := List(root)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "mlx5_0/1") {
			t.Errorf("List without state: %v, want ErrNotExist naming mlx5_0/1", err)
		}
	})
	t.Run("optional files and link_layer missing", func(t *testing.T) {
		root := copyTree(t, filepath.Join("testdata", "mlx5-ib", "sys"))
		for _, f := range []string{"fw_ver", "board_id", "hca_type", "hw_rev", "node_desc", "ports/1/link_layer", "ports/1/rate"} {
			if err := os.Remove(filepath.Join(root, "class/infiniband/mlx5_0", f)); err != nil {
				t.Fatal(err)
			}
		}
		devs, err := List(root)
		if err != nil {
			t.Fatal(err)
		}
		d, p := devs[0], devs[0].Ports[0]
		if d.FWVersion != "" || d.NodeDesc != "" || p.LinkLayer != LinkLayerInfiniBand || p.RateGbps != 0 {
			t.Errorf("got fw %q desc %q link layer %v rate %v; want empty, InfiniBand (libibumad's default), 0",
				d.FWVersion, d.NodeDesc, p.LinkLayer, p.RateGbps)
		}
	})
}

func TestReload(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "mlx5-ib", "sys"))
	devs, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	p := devs[0].Ports[0]
	dir := filepath.Join(root, "class/infiniband/mlx5_0/ports/1")
	for f, v := range map[string]string{"lid": "0x2a\n", "sm_lid": "0x3\n", "state": "2: INIT\n"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q, err := p.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if q.LID != 42 || q.SMLID != 3 || q.State != PortInit || q.Umad != p.Umad || q.SMIPort != p.SMIPort {
		t.Errorf("Reload: LID %d SM LID %d state %v umad %v; want 42, 3, INIT, %v", q.LID, q.SMLID, q.State, q.Umad, p.Umad)
	}
	if p.LID != 5 {
		t.Errorf("Reload changed the old snapshot: LID %d", p.LID)
	}
}

func TestLookup(t *testing.T) {
	f := fixture("smi-split")
	d, err := f.Lookup("mlx5_1")
	if err != nil || d.Name != "mlx5_1" {
		t.Errorf("Lookup(mlx5_1) = %v, %v", d, err)
	}
	_, err = f.Lookup("mlx5_9")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "have mlx5_0, mlx5_1, smi1") {
		t.Errorf("Lookup(mlx5_9) = %v, want ErrNotFound listing the devices", err)
	}
}

func TestMADABIVersion(t *testing.T) {
	v, err := fixture("mlx5-ib").MADABIVersion()
	if err != nil || v != 5 {
		t.Errorf("MADABIVersion = %d, %v; want 5", v, err)
	}
	_, err = FS{SysRoot: t.TempDir()}.MADABIVersion()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MADABIVersion without ib_umad = %v, want ErrNotExist", err)
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in    string
		gbps  float64
		width int
		speed string
	}{
		{"2.5 Gb/sec (1X SDR)", 2.5, 1, "SDR"},
		{"10 Gb/sec (4X SDR)", 10, 4, "SDR"},
		{"56 Gb/sec (4X FDR)", 56, 4, "FDR"},
		{"40 Gb/sec (4X FDR10)", 40, 4, "FDR10"},
		{"100 Gb/sec (4X EDR)", 100, 4, "EDR"},
		{"200 Gb/sec (2X NDR)", 200, 2, "NDR"},
		{"1600 Gb/sec (8X XDR)", 1600, 8, "XDR"},
		{"12.5 Gb/sec (1X DDR)", 12.5, 1, "DDR"},
		{"100 Gb/sec", 100, 0, ""},
		{"fast", 0, 0, ""},
		{"", 0, 0, ""},
		{"-1 Gb/sec (1X SDR)", 0, 0, ""},
		{"NaN Gb/sec (1X SDR)", 0, 0, ""},
		{"Inf Gb/sec (1X SDR)", 0, 0, ""},
		{"10 Gb/sec (zX SDR)", 10, 0, ""},
	}
	for _, tt := range tests {
		g, w, s := parseRate(tt.in)
		if g != tt.gbps || w != tt.width || s != tt.speed {
			t.Errorf("parseRate(%q) = %v, %d, %q; want %v, %d, %q", tt.in, g, w, s, tt.gbps, tt.width, tt.speed)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{NodeCA.String(), "CA"}, {NodeSwitch.String(), "switch"}, {NodeRouter.String(), "router"},
		{NodeRNIC.String(), "RNIC"}, {NodeUSNICUDP.String(), "usNIC UDP"}, {NodeType(9).String(), "NodeType(9)"},
		{PortDown.String(), "DOWN"}, {PortActive.String(), "ACTIVE"}, {PortActiveDefer.String(), "ACTIVE_DEFER"},
		{PortState(8).String(), "PortState(8)"},
		{PhysLinkUp.String(), "LinkUp"}, {PhysPolling.String(), "Polling"}, {PhysPhyTest.String(), "Phy Test"},
		{PhysState(12).String(), "<unknown>"},
		{LinkLayerInfiniBand.String(), "InfiniBand"}, {LinkLayerEthernet.String(), "Ethernet"},
		{LinkLayerUnknown.String(), "Unknown"}, {parseLinkLayer("Ethernet").String(), "Ethernet"},
		{parseLinkLayer("IB").String(), "Unknown"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
	if !NodeSwitch.IsIB() || NodeRNIC.IsIB() {
		t.Error("IsIB: switch must be IB, RNIC must not")
	}
}

func TestPKeyIndex(t *testing.T) {
	p := mustList(t, fixture("mlx5-ib"))[0].Ports[0] // P_Keys 0xffff, 0x8001
	tests := []struct {
		pkey uint16
		idx  int
		ok   bool
	}{{0xffff, 0, true}, {0x7fff, 0, true}, {0x8001, 1, true}, {0x0001, 1, true}, {0x8002, 0, false}}
	for _, tt := range tests {
		idx, ok := p.PKeyIndex(tt.pkey)
		if idx != tt.idx || ok != tt.ok {
			t.Errorf("PKeyIndex(%#x) = %d, %v; want %d, %v", tt.pkey, idx, ok, tt.idx, tt.ok)
		}
	}
}

// FuzzParseRate: no rate text may panic or give a negative or non-finite
// rate or width.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"2.5 Gb/sec (1X SDR)", "400 Gb/sec (4X NDR)", "12.5 Gb/sec (1X DDR)", "Gb/sec ()", "1 Gb/sec (X)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, w, sp := parseRate(s)
		if g < 0 || math.IsNaN(g) || math.IsInf(g, 0) || w < 0 {
			t.Fatalf("parseRate(%q) = %v, %d, %q", s, g, w, sp)
		}
	})
}

// TestAttrBound: a sysfs root whose attribute is an endless file is
// refused after a page, not read forever.
func TestAttrBound(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	if _, err := readAttr("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a sysfs attribute") {
		t.Errorf("readAttr(/dev/zero): %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "node_guid")
	if err := os.WriteFile(p, []byte("0002:c903:0000:0001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readAttr(p); err != nil || string(b) != "0002:c903:0000:0001\n" {
		t.Errorf("readAttr: %q %v", b, err)
	}
}
