package health

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/subnet"
)

// The fault tests stage one fault on a small leaf-spine (4 leaves, 2
// spines, 2 hosts a leaf; ibtool runs on hca1, where the built-in SM
// runs too) and check that every check runs and one finding comes back,
// from the check that names the fault.
const faultFabric = "leafspine:leaves=4,spines=2,hosts=2,uplinks=2"

// only runs every check and wants exactly one finding, from check.
func only(t *testing.T, f *fabric.Fabric, check string, o Options) Finding {
	t.Helper()
	r := run(t, f, o)
	if len(r.Findings) != 1 || r.Findings[0].Check != check {
		for _, fd := range r.Findings {
			t.Errorf("%v", fd)
		}
		t.Fatalf("%d findings, want one from %s", len(r.Findings), check)
	}
	t.Logf("%v", r.Findings[0])
	return r.Findings[0]
}

// tables discovers the subnet and reads the forwarding tables.
func tables(t *testing.T, f *fabric.Fabric) *subnet.Subnet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := Collect(ctx, f, NeedLFT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Subnet
}

func node(t *testing.T, s *subnet.Subnet, name string) *subnet.Node {
	t.Helper()
	l := s.NodesByName(name)
	if len(l) != 1 {
		t.Fatalf("%d nodes named %q", len(l), name)
	}
	return l[0]
}

func drTo(path subnet.DRPath) mad.Route {
	return mad.Route{DR: &mad.DirectedRoute{Path: append([]byte{0}, path...), DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}}
}

func smpSet(t *testing.T, f *fabric.Fabric, path subnet.DRPath, attr iba.Attribute, mod uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.MAD.SubnSet(ctx, drTo(path), attr, mod); err != nil {
		t.Fatal(err)
	}
}

func smpGet(t *testing.T, f *fabric.Fabric, path subnet.DRPath, attr iba.Attribute, mod uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.MAD.SubnGet(ctx, drTo(path), attr, mod); err != nil {
		t.Fatal(err)
	}
}

// portTo is n's port cabled to node m.
func portTo(t *testing.T, n, m *subnet.Node) int {
	t.Helper()
	for _, p := range n.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node == m {
			return p.Num
		}
	}
	t.Fatalf("%q has no port to %q", n.Description(), m.Description())
	return 0
}

func setLFT(t *testing.T, f *fabric.Fabric, n *subnet.Node, lid uint16, port int) {
	t.Helper()
	var lft iba.LinearForwardingTable
	smpGet(t, f, n.Path, &lft, uint32(lid/64))
	lft.PortBlock[lid%64] = uint8(port)
	smpSet(t, f, n.Path, &lft, uint32(lid/64))
}

func TestFaultCleanLeafSpine(t *testing.T) {
	f := openSim(t, faultFabric)
	r := run(t, f, Options{VLRouting: true})
	for _, fd := range r.Findings {
		t.Errorf("%v", fd)
	}
}

func TestFaultDuplicateNodeGUID(t *testing.T) {
	f := openSim(t, faultFabric)
	tp := f.Sim.Topology()
	var guid iba.GUID
	for i := range tp.Nodes {
		if tp.Nodes[i].ID == "hca7" {
			guid = tp.Nodes[i].NodeGUID
		}
	}
	if err := f.Sim.SetNodeGUID("hca3", guid); err != nil {
		t.Fatal(err)
	}
	fd := only(t, f, "duplicate-node-guids", Options{})
	if fd.GUID != guid {
		t.Fatalf("finding about %v, want %v", fd.GUID, guid)
	}
}

func TestFaultDuplicatePortGUID(t *testing.T) {
	f := openSim(t, faultFabric)
	tp := f.Sim.Topology()
	var guid iba.GUID
	for i := range tp.Nodes {
		if tp.Nodes[i].ID == "hca7" {
			guid = tp.Ports[tp.Nodes[i].PortBase+1].GUID
		}
	}
	if err := f.Sim.SetPortGUID("hca3", 1, guid); err != nil {
		t.Fatal(err)
	}
	fd := only(t, f, "duplicate-port-guids", Options{})
	if fd.GUID != guid || len(fd.Ports) != 2 {
		t.Fatalf("finding %+v", fd)
	}
}

func TestFaultDuplicateLID(t *testing.T) {
	f := openSim(t, faultFabric)
	s := tables(t, f)
	a, b := node(t, s, "hca3 HCA-1").Port(1), node(t, s, "hca7 HCA-1").Port(1)
	var pi iba.PortInfo
	path := portPath(s, b)
	smpGet(t, f, path, &pi, 0)
	pi.LID = a.BaseLID
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0, 0, 0
	smpSet(t, f, path, &pi, 0)
	fd := only(t, f, "duplicate-lids", Options{})
	if fd.LID != a.BaseLID {
		t.Fatalf("finding about LID %d, want %d", fd.LID, a.BaseLID)
	}
}

func TestFaultLFTLoop(t *testing.T) {
	f := openSim(t, faultFabric)
	s := tables(t, f)
	dest := node(t, s, "hca3 HCA-1").Port(1).BaseLID
	leaf1, leaf3 := node(t, s, "leaf1"), node(t, s, "leaf3")
	// The spine hca1's route to dest does not cross takes the loop.
	used, _ := leaf1.LFTPort(dest)
	spine := node(t, s, "spine1")
	if leaf1.Port(int(used)).Remote.Node == spine {
		spine = node(t, s, "spine2")
	}
	setLFT(t, f, leaf3, dest, portTo(t, leaf3, spine))
	setLFT(t, f, spine, dest, portTo(t, spine, leaf3))
	fd := only(t, f, "routing", Options{})
	if fd.LID != dest || !strings.Contains(fd.Message, "loops") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestFaultLFTHole(t *testing.T) {
	f := openSim(t, faultFabric)
	s := tables(t, f)
	dest := node(t, s, "hca5 HCA-1").Port(1).BaseLID
	setLFT(t, f, node(t, s, "leaf4"), dest, 0xff) // no route of hca1's crosses leaf4
	fd := only(t, f, "routing", Options{})
	if !strings.Contains(fd.Message, "no route for 1 LIDs") {
		t.Fatalf("finding %+v", fd)
	}
}

// A ring of five switches, a host on each: minimum-hop routes go both
// ways round, and their channels wait on each other in a cycle.
const ringTopo = `
Switch 3 "sw1"
[1] "h1"[1]
[2] "sw2"[3]
[3] "sw5"[2]

Switch 3 "sw2"
[1] "h2"[1]
[2] "sw3"[3]
[3] "sw1"[2]

Switch 3 "sw3"
[1] "h3"[1]
[2] "sw4"[3]
[3] "sw2"[2]

Switch 3 "sw4"
[1] "h4"[1]
[2] "sw5"[3]
[3] "sw3"[2]

Switch 3 "sw5"
[1] "h5"[1]
[2] "sw1"[3]
[3] "sw4"[2]

Hca 1 "h1"
[1] "sw1"[1]
Hca 1 "h2"
[1] "sw2"[1]
Hca 1 "h3"
[1] "sw3"[1]
Hca 1 "h4"
[1] "sw4"[1]
Hca 1 "h5"
[1] "sw5"[1]
`

func TestFaultCreditLoop(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ring.topo")
	if err := os.WriteFile(file, []byte(ringTopo), 0o644); err != nil {
		t.Fatal(err)
	}
	f := openSim(t, file)
	r := run(t, f, Options{VLRouting: true})
	var loops []Finding
	for _, fd := range r.Findings {
		if fd.Check == "credit-loops" {
			loops = append(loops, fd)
		} else {
			t.Errorf("%v", fd)
		}
	}
	// The two directions round the ring are two cycles.
	if len(loops) != 2 {
		t.Fatalf("%d credit loops, want 2 (one each way round): %v", len(loops), loops)
	}
	for _, l := range loops {
		if len(l.Ports) != 5 {
			t.Errorf("a loop of %d channels, want 5: %v", len(l.Ports), l)
		}
	}
}

func TestFaultLinkAt1x(t *testing.T) {
	f := openSim(t, faultFabric)
	if err := f.Sim.SetCableWidths("hca5", 1, iba.LinkWidth1X); err != nil {
		t.Fatal(err)
	}
	fd := only(t, f, "link-width", Options{})
	if !strings.Contains(fd.Message, "1x although both ends enable 4x") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestFaultExpectedWidth(t *testing.T) {
	f := openSim(t, faultFabric)
	r := run(t, f, Options{ExpectedWidth: 12, Checks: []string{"link-width"}})
	if len(r.Findings) != 16 {
		t.Fatalf("%d findings with -lw 12x on 16 links of 4x", len(r.Findings))
	}
}

func TestFaultCountersRise(t *testing.T) {
	f := openSim(t, faultFabric)
	o := Options{Interval: 200 * time.Millisecond}
	o.Progress = func(stage string) {
		if stage == "counter interval" {
			if err := f.Sim.InjectErrors("hca6", 1, sim.PortErrors{SymbolErrors: 5, XmitDiscards: 3}); err != nil {
				t.Error(err)
			}
		}
	}
	fd := only(t, f, "counters", o)
	if !strings.Contains(fd.Message, "SymbolErrorCounter rose by 5") || strings.Contains(fd.Message, "PortXmitDiscards") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestFaultTwoMasters(t *testing.T) {
	f := openSim(t, faultFabric)
	if err := f.Sim.SetSMInfo("hca8", 1, &iba.SMInfo{Priority: 3, SMState: iba.SMStateMaster}); err != nil {
		t.Fatal(err)
	}
	fd := only(t, f, "sm", Options{})
	if !strings.Contains(fd.Message, "2 master SMs") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestStandbySMIsNoFault(t *testing.T) {
	f := openSim(t, faultFabric)
	if err := f.Sim.SetSMInfo("hca8", 1, &iba.SMInfo{Priority: 3, SMState: iba.SMStateStandby}); err != nil {
		t.Fatal(err)
	}
	r := run(t, f, Options{})
	if len(r.Findings) != 0 || r.Summary.Masters != 1 || r.Summary.Standbys != 1 {
		t.Fatalf("findings %v, summary %+v", r.Findings, r.Summary)
	}
}

func TestFaultPKeyMismatch(t *testing.T) {
	f := openSim(t, faultFabric)
	s := tables(t, f)
	leaf := node(t, s, "leaf2")
	p := portTo(t, leaf, node(t, s, "hca4 HCA-1"))
	// The switch port enforces partitions and has only a partition the
	// CA (default table: 0xffff) is not in.
	var pk iba.PKeyTable
	pk.PKeyBlock[0] = 0x8001
	smpSet(t, f, leaf.Path, &pk, uint32(p)<<16)
	var pi iba.PortInfo
	smpGet(t, f, leaf.Path, &pi, uint32(p))
	pi.PartitionEnforcementInbound, pi.PartitionEnforcementOutbound = 1, 1
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0, 0, 0
	smpSet(t, f, leaf.Path, &pi, uint32(p))
	fd := only(t, f, "pkeys", Options{})
	if !strings.Contains(fd.Message, "P_Key 0xffff of the CA port is missing at the switch port") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestFaultLossyLink(t *testing.T) {
	f := openSim(t, faultFabric)
	// One SMP in five into hca6 is lost: the discovery's retries still
	// get through, 40 single tries cannot all.
	if err := f.Sim.SetDropRate("hca6", 1, 20); err != nil {
		t.Fatal(err)
	}
	r := run(t, f, Options{LossyCount: 40, LossyTimeout: 20 * time.Millisecond, Checks: []string{"lossy-links"}})
	if len(r.Findings) != 1 || !strings.Contains(r.Findings[0].Port.Desc+r.Findings[0].Peer.Desc, "hca6") {
		t.Fatalf("findings %v", r.Findings)
	}
}

func TestFaultMulticastMember(t *testing.T) {
	f := openSim(t, faultFabric)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Two members join the broadcast group; then a leaf forgets one.
	for _, h := range []string{"hca3", "hca7"} {
		joinBroadcast(t, ctx, f, h)
	}
	s := tables(t, f)
	d, err := Collect(ctx, f, NeedGroups|NeedMFT, Options{Subnet: s})
	if err != nil || d.GroupsErr != nil {
		t.Fatal(err, d.GroupsErr)
	}
	leaf := node(t, s, "leaf4")
	var mft iba.MulticastForwardingTable
	smpGet(t, f, leaf.Path, &mft, 0)
	mft.PortMaskBlock[0] &^= 1 << portTo(t, leaf, node(t, s, "hca7 HCA-1"))
	smpSet(t, f, leaf.Path, &mft, 0)
	fd := only(t, f, "multicast", Options{})
	if !strings.Contains(fd.Message, "member pairs not connected") {
		t.Fatalf("finding %+v", fd)
	}
}

// joinBroadcast makes host's port 1 a full member of the IPoIB broadcast
// group (the SA programs the switches' multicast tables).
func joinBroadcast(t *testing.T, ctx context.Context, f *fabric.Fabric, host string) {
	t.Helper()
	tp := f.Sim.Topology()
	var guid iba.GUID
	for i := range tp.Nodes {
		if tp.Nodes[i].ID == host {
			guid = tp.Ports[tp.Nodes[i].PortBase+1].GUID
		}
	}
	sc := f.SA()
	tg, err := sc.Target(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := iba.MCMemberRecord{MGID: iba.GID{0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
		PortGID: iba.MakeGID(0xfe80000000000000, guid), JoinState: 1}
	mask, err := sa.ComponentMask(&r, "MGID", "portGID", "joinState")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.MAD.SubnAdmSet(ctx, tg, &r, mask); err != nil {
		t.Fatalf("join %s: %v", host, err)
	}
}

func TestFaultDeadNode(t *testing.T) {
	f := openSim(t, faultFabric)
	if err := f.Sim.SetNodeDead("hca5", true); err != nil {
		t.Fatal(err)
	}
	fd := only(t, f, "discovery", Options{})
	if fd.Port == nil || fd.Port.Desc != "leaf3" || !strings.Contains(fd.Message, "no node answers behind this port") {
		t.Fatalf("finding %+v", fd)
	}
}
