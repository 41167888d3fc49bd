package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// upFabric builds a fabric, runs the SM (with its SA) and closes it at the
// end of the test.
func upFabric(t testing.TB, top *topo.Topology, cfg SMConfig) *Fabric {
	t.Helper()
	f, err := New(top)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.RunSM(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
	return f
}

func saClient(t testing.TB, f *Fabric, node string) (*sa.Client, *mad.Client) {
	t.Helper()
	c := client(t, f, node, 1)
	return sa.New(c), c
}

func ftTopo(t testing.TB, k, n int) *topo.Topology {
	t.Helper()
	top, err := topo.FatTree(topo.FatTreeConfig{K: k, N: n})
	if err != nil {
		t.Fatal(err)
	}
	return top
}

// Every record the SA gives of the subnet's objects is what an SMP read of
// the same object returns.
func TestSAAgreesWithSMPs(t *testing.T) {
	f := upFabric(t, ftTopo(t, 4, 2), SMConfig{})
	ctx := ctxT(t)
	sc, mc := saClient(t, f, "hca1")
	nodes, err := sa.GetTable(ctx, sc, &iba.NodeRecord{})
	if err != nil {
		t.Fatal(err)
	}
	s, ca, _ := f.Topology().Counts()
	if len(nodes) != s+ca {
		t.Fatalf("%d NodeRecords for %d switches and %d CAs", len(nodes), s, ca)
	}
	for _, r := range nodes {
		var ni iba.NodeInfo
		if err := mc.SubnGet(ctx, lid(r.LID), &ni, 0); err != nil {
			t.Fatal(err)
		}
		if ni != r.NodeInfo {
			t.Fatalf("LID %d: NodeRecord %+v, SMP %+v", r.LID, r.NodeInfo, ni)
		}
		var nd iba.NodeDescription
		if err := mc.SubnGet(ctx, lid(r.LID), &nd, 0); err != nil {
			t.Fatal(err)
		}
		if nd != r.NodeDescription {
			t.Fatalf("LID %d: NodeDescription differs", r.LID)
		}
	}
	pis, err := sa.GetTable(ctx, sc, &iba.PortInfoRecord{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pis) < len(nodes) {
		t.Fatalf("%d PortInfoRecords", len(pis))
	}
	for _, r := range pis {
		var pi iba.PortInfo
		mod := uint32(r.PortNum)
		var ni iba.NodeInfo
		if err := mc.SubnGet(ctx, lid(r.EndportLID), &ni, 0); err != nil {
			t.Fatal(err)
		}
		if ni.NodeType != iba.NodeTypeSwitch {
			mod = 0
		}
		if err := mc.SubnGet(ctx, lid(r.EndportLID), &pi, mod); err != nil {
			t.Fatal(err)
		}
		if pi != r.PortInfo {
			t.Fatalf("LID %d port %d: PortInfoRecord %+v\nSMP %+v", r.EndportLID, r.PortNum, r.PortInfo, pi)
		}
	}
	sws, err := sa.GetTable(ctx, sc, &iba.SwitchInfoRecord{})
	if err != nil || len(sws) != s {
		t.Fatalf("%d SwitchInfoRecords, %v", len(sws), err)
	}
	for _, r := range sws {
		var si iba.SwitchInfo
		if err := mc.SubnGet(ctx, lid(r.LID), &si, 0); err != nil || si != r.SwitchInfo {
			t.Fatalf("LID %d: SwitchInfo %+v vs %+v (%v)", r.LID, r.SwitchInfo, si, err)
		}
		lfts, err := sa.GetTable(ctx, sc, &iba.LinearForwardingTableRecord{LID: r.LID})
		if err != nil || len(lfts) != int(si.LinearFDBTop)/64+1 {
			t.Fatalf("LID %d: %d LFT records, %v %+v", r.LID, len(lfts), err, lfts)
		}
		for _, l := range lfts {
			var b iba.LinearForwardingTable
			if err := mc.SubnGet(ctx, lid(r.LID), &b, uint32(l.BlockNum)); err != nil || b != l.LinearForwardingTable {
				t.Fatalf("LID %d block %d differs (%v)", r.LID, l.BlockNum, err)
			}
		}
	}
	for _, q := range []iba.Attribute{&iba.PKeyTableRecord{}, &iba.GUIDInfoRecord{}, &iba.SLtoVLMappingTableRecord{}, &iba.VLArbitrationTableRecord{}, &iba.LinkRecord{}} {
		tb, err := sc.Table(ctx, q)
		if err != nil || len(tb.Records) == 0 {
			t.Fatalf("%s: %d records, %v", q.Desc().Name, len(tb.Records), err)
		}
	}
	// One P_Key block and one GUID block against SMPs.
	l2 := nodes[len(nodes)-1].LID
	pk := iba.PKeyTableRecord{LID: l2, PortNum: 1}
	if err := sc.Get(ctx, &pk, sa.Components("blockNum")); err != nil {
		t.Fatal(err)
	}
	var pt iba.PKeyTable
	if err := mc.SubnGet(ctx, lid(l2), &pt, 0); err != nil || pt != pk.PKeyTable {
		t.Fatalf("P_Keys: %v %v vs %v", err, pt, pk.PKeyTable)
	}
	var smi iba.SMInfoRecord
	if err := sc.Get(ctx, &smi); err != nil || smi.SMInfo.SMState != iba.SMStateMaster {
		t.Fatalf("SMInfoRecord %+v %v", smi, err)
	}
	links, err := sa.GetTable(ctx, sc, &iba.LinkRecord{})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, p := range f.Topology().Ports {
		if p.Peer >= 0 {
			want++
		}
	}
	if len(links) != want {
		t.Fatalf("%d LinkRecords, want %d", len(links), want)
	}
}

func TestSAStatusCodes(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{})
	ctx := ctxT(t)
	sc, mc := saClient(t, f, "hca1")
	var cpi iba.ClassPortInfo
	if _, err := mc.Do(ctx, mad.Request{Target: saTarget(t, sc), Class: iba.ClassSubnAdm, Method: iba.MethodGet, AttrID: 1}); err != nil {
		t.Fatalf("ClassPortInfo: %v %v", err, cpi)
	}
	if err := sc.Get(ctx, &iba.NodeRecord{LID: 999}); !errors.Is(err, mad.ErrSANoRecords) {
		t.Fatalf("NodeRecord of LID 999: %v", err)
	}
	if err := sc.Get(ctx, &iba.NodeRecord{}); !errors.Is(err, mad.ErrSATooManyRecords) {
		t.Fatalf("NodeRecord Get of everything: %v", err)
	}
	rec := iba.ServiceRecord{ServiceID: 7}
	if err := sc.MAD().SubnAdmSet(ctx, saTarget(t, sc), &rec, 1); !errors.Is(err, mad.ErrSAReqInsufficientComponents) {
		t.Fatalf("ServiceRecord Set without a GID: %v", err)
	}
	// A table of nothing is empty, not an error (as OpenSM answers).
	tb, err := sc.Table(ctx, &iba.NodeRecord{LID: 999})
	if err != nil || len(tb.Records) != 0 {
		t.Fatalf("empty table: %v %v", tb, err)
	}
	// Unknown attribute.
	if _, err := mc.Do(ctx, mad.Request{Target: saTarget(t, sc), Class: iba.ClassSubnAdm, Method: iba.MethodGet, AttrID: 0x7777, Unchecked: true}); !errors.Is(err, mad.ErrMethodAttrUnsupported) {
		t.Fatalf("attribute 0x7777: %v", err)
	}
}

func saTarget(t testing.TB, sc *sa.Client) mad.Target {
	t.Helper()
	tg, err := sc.Target(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func gidOf(f *Fabric, node string, port int) iba.GID {
	i, _ := f.portIndex(node, port)
	var g iba.GID
	binary.BigEndian.PutUint64(g[:], 0xfe80000000000000)
	binary.BigEndian.PutUint64(g[8:], uint64(f.ports[i].guid))
	return g
}

func TestSAPathServiceMulticast(t *testing.T) {
	f := upFabric(t, ftTopo(t, 4, 2), SMConfig{})
	ctx := ctxT(t)
	sc, mc := saClient(t, f, "hca1")
	_, _, l1, _, _ := f.PortState("hca1", 1)
	_, _, l2, _, _ := f.PortState("hca8", 1)
	pr, err := sc.PathRecord(ctx, gidOf(f, "hca1", 1), gidOf(f, "hca8", 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	if pr.SLID != l1 || pr.DLID != l2 || pr.MTU != iba.MTU2048 || pr.Rate == 0 || pr.PKey != 0xFFFF {
		t.Fatalf("path %+v", pr)
	}
	paths, err := sa.GetTable(ctx, sc, &iba.PathRecord{SLID: l1})
	if err != nil || len(paths) != 16+8 {
		t.Fatalf("%d paths from LID %d: %v", len(paths), l1, err)
	}
	// An MTU above what the path has, "greater than" selector: none.
	if _, err := sa.GetTable(ctx, sc, &iba.PathRecord{SLID: l1, DLID: l2, MTU: iba.MTU2048}, sa.Components("MTUSelector")); err != nil {
		t.Fatal(err)
	}
	if err := sc.Get(ctx, &iba.PathRecord{SGID: iba.GID{1}, DLID: l2}); !errors.Is(err, mad.ErrSAReqInvalidGID) {
		t.Fatalf("bad SGID prefix: %v", err)
	}

	// ServiceRecord: register, find, delete.
	svc := iba.ServiceRecord{ServiceID: 0x1234, ServiceGID: gidOf(f, "hca1", 1), ServiceLease: 0xFFFFFFFF}
	copy(svc.ServiceName[:], "rdmakit test")
	if err := mc.SubnAdmSet(ctx, saTarget(t, sc), &svc, 0x1|0x2|0x10|0x40); err != nil {
		t.Fatal(err)
	}
	got := iba.ServiceRecord{ServiceID: 0x1234}
	if err := sc.Get(ctx, &got); err != nil || !bytes.Equal(got.ServiceName[:12], []byte("rdmakit test")) {
		t.Fatalf("service %+v %v", got, err)
	}
	if err := mc.SubnAdmDelete(ctx, saTarget(t, sc), &iba.ServiceRecord{ServiceID: 0x1234}, 1); err != nil {
		t.Fatal(err)
	}
	if err := sc.Get(ctx, &iba.ServiceRecord{ServiceID: 0x1234}); !errors.Is(err, mad.ErrSANoRecords) {
		t.Fatalf("deleted service: %v", err)
	}

	// Multicast: two ports join a new group; the switches' MFTs forward
	// its MLID between them; both leave and the entries go.
	join := func(node string) iba.MCMemberRecord {
		r := iba.MCMemberRecord{PortGID: gidOf(f, node, 1), QKey: 0x11, PKey: 0xFFFF, JoinState: 1}
		if err := mc.SubnAdmSet(ctx, saTarget(t, sc), &r, mcMask(t, "portGID", "QKey", "PKey", "SL", "flowLabel", "TClass", "joinState", "MGID")); err != nil {
			t.Fatalf("join %s: %v", node, err)
		}
		return r
	}
	r1 := join("hca1")
	if r1.MLID < 0xC001 || r1.MGID[0] != 0xff {
		t.Fatalf("created group %+v", r1)
	}
	r2 := iba.MCMemberRecord{MGID: r1.MGID, PortGID: gidOf(f, "hca8", 1), JoinState: 1}
	if err := mc.SubnAdmSet(ctx, saTarget(t, sc), &r2, mcMask(t, "MGID", "portGID", "joinState")); err != nil || r2.MLID != r1.MLID {
		t.Fatalf("second join: %+v %v", r2, err)
	}
	members, err := sa.GetTable(ctx, sc, &iba.MCMemberRecord{MGID: r1.MGID})
	if err != nil || len(members) != 2 {
		t.Fatalf("members %+v %v", members, err)
	}
	// The leaf switch of hca1 forwards the MLID out of hca1's port.
	leaf, lport := f.peerOf("hca1", 1)
	_, _, ll, _, _ := f.PortState(leaf, 0)
	var mft iba.MulticastForwardingTable
	blk := uint32(r1.MLID-0xC000) / 32
	if err := mc.SubnGet(ctx, lid(ll), &mft, blk); err != nil {
		t.Fatal(err)
	}
	if mft.PortMaskBlock[(r1.MLID-0xC000)%32]&(1<<lport) == 0 {
		t.Fatalf("MFT of %s: %x, port %d not set", leaf, mft.PortMaskBlock, lport)
	}
	mfts, err := sa.GetTable(ctx, sc, &iba.MulticastForwardingTableRecord{})
	if err != nil || len(mfts) == 0 {
		t.Fatalf("%d MFT records %v", len(mfts), err)
	}
	for _, n := range []string{"hca1", "hca8"} {
		r := iba.MCMemberRecord{MGID: r1.MGID, PortGID: gidOf(f, n, 1), JoinState: 1}
		if err := mc.SubnAdmDelete(ctx, saTarget(t, sc), &r, mcMask(t, "MGID", "portGID", "joinState")); err != nil {
			t.Fatalf("leave %s: %v", n, err)
		}
	}
	if err := mc.SubnGet(ctx, lid(ll), &mft, blk); err != nil {
		t.Fatal(err)
	}
	if mft.PortMaskBlock[(r1.MLID-0xC000)%32] != 0 {
		t.Fatalf("MFT after the leaves: %x", mft.PortMaskBlock)
	}
	// The broadcast group stays.
	groups, err := sa.GetTable(ctx, sc, &iba.MCMemberRecord{})
	if err != nil || len(groups) != 1 || groups[0].MLID != 0xC000 {
		t.Fatalf("groups %+v %v", groups, err)
	}
}

func mcMask(t testing.TB, names ...string) uint64 {
	m, err := sa.ComponentMask(&iba.MCMemberRecord{}, names...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// peerOf names the node and port at the other end of a cable.
func (f *Fabric) peerOf(node string, port int) (string, int) {
	i, _ := f.portIndex(node, port)
	p := &f.ports[f.ports[i].peer]
	return f.topo.Nodes[p.node].ID, int(p.num)
}

// A large generated fabric: GetTable returns thousands of records through
// RMPP.
func TestSALargeTables(t *testing.T) {
	if testing.Short() {
		t.Skip("large fabric")
	}
	top, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 64, Spines: 16, HostsPerLeaf: 32, Uplinks: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := upFabric(t, top, SMConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc, _ := saClient(t, f, "hca1")
	start := time.Now()
	nodes, err := sa.GetTable(ctx, sc, &iba.NodeRecord{})
	if err != nil || len(nodes) != 64*32+80 {
		t.Fatalf("%d NodeRecords %v", len(nodes), err)
	}
	pis, err := sa.GetTable(ctx, sc, &iba.PortInfoRecord{})
	if err != nil || len(pis) < 5000 {
		t.Fatalf("%d PortInfoRecords %v", len(pis), err)
	}
	t.Logf("%d NodeRecords and %d PortInfoRecords in %v", len(nodes), len(pis), time.Since(start))
}
