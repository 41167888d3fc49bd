package subnet_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/subnet"
)

// openTables opens a simulated fat tree (8 switches, 16 CAs) and discovers
// it.
func openTables(t *testing.T) (*fabric.Fabric, *subnet.Subnet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sn, _, err := subnet.Discover(ctx, f.MAD, subnet.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f, sn
}

// TestReadTablesRoutes reads every switch's LFT and checks it against the
// fabric: from every switch, following the tables hop by hop over the
// discovered links reaches the port of every CA LID; and a block read on
// its own by SubnGet equals what was recorded.
func TestReadTablesRoutes(t *testing.T) {
	f, sn := openTables(t)
	ctx := context.Background()
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{LFT: subnet.WholeLFT})
	if err != nil || len(failed) != 0 {
		t.Fatalf("ReadTables: %v %v", failed, err)
	}
	switches := sn.NodesOfType(iba.NodeTypeSwitch)
	if len(switches) != 8 {
		t.Fatalf("%d switches", len(switches))
	}
	for _, ca := range sn.NodesOfType(iba.NodeTypeCA) {
		p := ca.EndPort()
		if p == nil || p.BaseLID == 0 {
			t.Fatalf("CA %s has no LID", ca.Description())
		}
		for _, sw := range switches {
			n, hops := sw, 0
			for n != ca {
				if hops++; hops > 6 {
					t.Fatalf("LID %d from %s: no arrival after 6 hops", p.BaseLID, sw.Description())
				}
				out, ok := n.LFTPort(p.BaseLID)
				if !ok || n.Port(int(out)) == nil || n.Port(int(out)).Remote == nil {
					t.Fatalf("LID %d at %s: out port %d (%v) leads nowhere", p.BaseLID, n.Description(), out, ok)
				}
				n = n.Port(int(out)).Remote.Node
			}
		}
	}
	sw := switches[3]
	var lft iba.LinearForwardingTable
	dr := ibpath.NewDR(append([]byte{0}, sw.Path...)...)
	if err := f.SubnGet(ctx, dr, &lft, 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lft.PortBlock[:], sw.LFT[:64]) {
		t.Errorf("block 0 of %s: read alone %v, recorded %v", sw.Description(), lft.PortBlock, sw.LFT[:64])
	}
	if want := subnet.WholeLFT(sw).End * subnet.LIDsPerLFTBlock; len(sw.LFT) != want {
		t.Errorf("LFT of %d entries, want %d", len(sw.LFT), want)
	}
}

// TestReadTablesMulticast joins two CAs to a new group and finds its MLID
// in the MFTs: the members' leaf switches forward it out of the members'
// ports, and every switch's masks equal a block read by SubnGet.
func TestReadTablesMulticast(t *testing.T) {
	f, sn := openTables(t)
	ctx := context.Background()
	sc := sa.New(f.MAD)
	st, err := sc.Target(ctx)
	if err != nil {
		t.Fatal(err)
	}
	members := []*subnet.Node{sn.NodesOfType(iba.NodeTypeCA)[0], sn.NodesOfType(iba.NodeTypeCA)[9]}
	var mgid iba.GID
	var mlid uint16
	for i, ca := range members {
		var gid iba.GID
		binary.BigEndian.PutUint64(gid[:], 0xfe80000000000000)
		binary.BigEndian.PutUint64(gid[8:], uint64(ca.EndPort().GUID))
		r := iba.MCMemberRecord{MGID: mgid, PortGID: gid, QKey: 0x11, PKey: 0xFFFF, JoinState: 1}
		names := []string{"MGID", "portGID", "joinState"}
		if i == 0 {
			names = append(names, "QKey", "PKey", "SL", "flowLabel", "TClass")
		}
		mask, err := sa.ComponentMask(&r, names...)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.MAD.SubnAdmSet(ctx, st, &r, mask); err != nil {
			t.Fatalf("join %s: %v", ca.Description(), err)
		}
		mgid, mlid = r.MGID, r.MLID
	}
	if mlid < subnet.MinMulticastLID {
		t.Fatalf("group MLID %#x", mlid)
	}
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{MFT: subnet.WholeMFT, Switches: 3, PerSwitch: 2})
	if err != nil || len(failed) != 0 {
		t.Fatalf("ReadTables: %v %v", failed, err)
	}
	for _, ca := range members {
		leaf := ca.EndPort().Remote
		if ports := leaf.Node.MFTPorts(mlid); !slices.Contains(ports, leaf.Num) {
			t.Errorf("leaf %s forwards MLID %#x to %v, not to member port %d", leaf.Node.Description(), mlid, ports, leaf.Num)
		}
	}
	for _, sw := range sn.NodesOfType(iba.NodeTypeSwitch) {
		blk := int(mlid-subnet.MinMulticastLID) / subnet.MLIDsPerMFTBlock
		for pos := range subnet.MFTPositions(sw) {
			var mft iba.MulticastForwardingTable
			if err := f.SubnGet(ctx, ibpath.NewDR(append([]byte{0}, sw.Path...)...), &mft, subnet.MFTModifier(blk, pos)); err != nil {
				t.Fatal(err)
			}
			if got := sw.MFT[pos][blk*32 : blk*32+32]; !slices.Equal(got, mft.PortMaskBlock[:]) {
				t.Errorf("%s position %d: recorded %x, read alone %x", sw.Description(), pos, got, mft.PortMaskBlock)
			}
		}
	}
}

// TestReadTablesFailures: a dead switch is reported with every block it
// did not answer while the others are read; a node that is not a switch
// is refused; a cancelled context ends the read with its error.
func TestReadTablesFailures(t *testing.T) {
	f, sn := openTables(t)
	ctx := context.Background()
	switches := sn.NodesOfType(iba.NodeTypeSwitch)
	dead := switches[5]
	if err := f.Sim.SetNodeDead(dead.Description(), true); err != nil {
		t.Fatal(err)
	}
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{LFT: subnet.WholeLFT, MFT: subnet.WholeMFT})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].Node != dead {
		t.Fatalf("failed %v, want only %s", failed, dead.Description())
	}
	want := subnet.WholeLFT(dead).Len() + subnet.WholeMFT(dead).Len()*subnet.MFTPositions(dead)
	if len(failed[0].Failed) != want {
		t.Errorf("%d failed reads, want %d", len(failed[0].Failed), want)
	}
	if ae := failed[0].Failed[0]; ae.Attr != iba.AttrIDLinearForwardingTable || ae.Mod != 0 || !errors.Is(ae.Err, mad.ErrTimeout) {
		t.Errorf("first failure %v", ae)
	}
	var ae *subnet.AttrError
	if !errors.As(failed[0], &ae) {
		t.Errorf("TableError does not unwrap to its reads")
	}
	for _, sw := range switches {
		if sw != dead && len(sw.LFT) == 0 {
			t.Errorf("switch %s: LFT not read", sw.Description())
		}
	}
	if len(dead.LFT) != 0 {
		t.Errorf("dead switch has an LFT of %d entries", len(dead.LFT))
	}

	ca := sn.NodesOfType(iba.NodeTypeCA)[0]
	if _, err := sn.ReadTables(ctx, f, []*subnet.Node{ca}, subnet.TableOptions{LFT: subnet.WholeLFT}); !errors.Is(err, subnet.ErrNotSwitch) {
		t.Errorf("ReadTables on a CA: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := sn.ReadSwitchTables(cctx, f, switches[0], subnet.TableOptions{LFT: subnet.WholeLFT}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestReadSwitch is ibroute's check_switch: a switch by LID is recorded
// with its description and SwitchInfo, read tables and all; a CA is not a
// switch; a LID nobody has fails on NodeInfo.
func TestReadSwitch(t *testing.T) {
	f, sn := openTables(t)
	ctx := context.Background()
	want := sn.NodesOfType(iba.NodeTypeSwitch)[2]
	db := subnet.New()
	n, err := db.ReadSwitch(ctx, f, ibpath.NewLID(want.SMALID), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.GUID != want.GUID || n.Description() != want.Description() || !n.HasSwitchInfo || n.SwitchInfo != want.SwitchInfo {
		t.Fatalf("read %v %q, want %v %q", n.GUID, n.Description(), want.GUID, want.Description())
	}
	lid := sn.NodesOfType(iba.NodeTypeCA)[3].EndPort().BaseLID
	if err := db.ReadSwitchTables(ctx, f, n, subnet.TableOptions{LFT: func(*subnet.Node) subnet.BlockRange { return subnet.LFTRange(int(lid), int(lid)) },
		Target: func(*subnet.Node) mad.Target { return ibpath.NewLID(want.SMALID) }}); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.LFTPort(lid); !ok {
		t.Errorf("no route to LID %d after reading its block", lid)
	}

	ca := sn.NodesOfType(iba.NodeTypeCA)[0]
	if _, err := db.ReadSwitch(ctx, f, ibpath.NewLID(ca.EndPort().BaseLID), nil); !errors.Is(err, subnet.ErrNotSwitch) {
		t.Errorf("ReadSwitch of a CA: %v", err)
	}
	var ae *subnet.AttrError
	if _, err := db.ReadSwitch(ctx, f, ibpath.NewLID(0x3000), nil); !errors.As(err, &ae) || ae.Attr != iba.AttrIDNodeInfo {
		t.Errorf("ReadSwitch of a LID nobody has: %v", err)
	}
	if db.Len() != 1 {
		t.Errorf("%d nodes recorded, want the switch alone", db.Len())
	}
}

func TestTableRanges(t *testing.T) {
	for _, c := range []struct {
		got, want subnet.BlockRange
	}{
		{subnet.LFTRange(0, 0), subnet.BlockRange{First: 0, End: 1}},
		{subnet.LFTRange(0, 63), subnet.BlockRange{First: 0, End: 1}},
		{subnet.LFTRange(0, 64), subnet.BlockRange{First: 0, End: 2}},
		{subnet.LFTRange(70, 200), subnet.BlockRange{First: 1, End: 4}},
		{subnet.LFTRange(5, 4), subnet.BlockRange{}},
		{subnet.LFTRange(0, 0xffff), subnet.BlockRange{First: 0, End: 768}},
		{subnet.MFTRange(0xc000, 0xc000), subnet.BlockRange{First: 0, End: 1}},
		{subnet.MFTRange(0, 0xc020), subnet.BlockRange{First: 0, End: 2}},
		{subnet.MFTRange(0xc040, 0xffff), subnet.BlockRange{First: 2, End: 512}},
		{subnet.MFTRange(0, 0xbfff), subnet.BlockRange{}},
	} {
		if c.got != c.want {
			t.Errorf("got %+v, want %+v", c.got, c.want)
		}
	}
	sw := &subnet.Node{Type: iba.NodeTypeSwitch, NumPorts: 36}
	si := iba.SwitchInfo{LinearFDBTop: 130, MulticastFDBCap: 1024, MulticastFDBTop: 0xc041}
	_ = si.MarshalTo(sw.SwitchInfo[:])
	if got := subnet.WholeLFT(sw); got != (subnet.BlockRange{First: 0, End: 3}) {
		t.Errorf("WholeLFT %+v", got)
	}
	if got := subnet.WholeMFT(sw); got != (subnet.BlockRange{First: 0, End: 3}) {
		t.Errorf("WholeMFT %+v", got)
	}
	si.MulticastFDBTop = 0 // not supported: the capacity counts
	_ = si.MarshalTo(sw.SwitchInfo[:])
	if got := subnet.WholeMFT(sw); got != (subnet.BlockRange{First: 0, End: 32}) {
		t.Errorf("WholeMFT without a top %+v", got)
	}
	si.MulticastFDBTop = 0xbfff // an empty table
	_ = si.MarshalTo(sw.SwitchInfo[:])
	if got := subnet.WholeMFT(sw); got.Len() != 0 {
		t.Errorf("WholeMFT of an empty table %+v", got)
	}
	if got := subnet.MFTPositions(sw); got != 3 {
		t.Errorf("MFTPositions of 36 ports: %d", got)
	}
	if got := subnet.MFTModifier(7, 2); got != 0x20000007 {
		t.Errorf("MFTModifier %#x", got)
	}
}

// The route a switch's forwarding table gives every CA: discover the
// fabric, read every switch's LFT, and print where one switch sends each
// CA's LID (python-rdma's Switch.get_switch_fdb, ibroute's table).
func ExampleSubnet_ReadTables() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	sn, _, err := subnet.Discover(ctx, f.MAD, subnet.DiscoverOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{LFT: subnet.WholeLFT})
	if err != nil || len(failed) > 0 {
		fmt.Println(failed, err)
		return
	}
	sw := sn.NodesByName("ft-l1-0")[0]
	for _, ca := range sn.NodesOfType(iba.NodeTypeCA)[:6] {
		lid := ca.EndPort().BaseLID
		out, _ := sw.LFTPort(lid)
		fmt.Printf("%s: LID %d to %s via port %d\n", sw.Description(), lid, ca.Description(), out)
	}
	// Output:
	// ft-l1-0: LID 9 to hca1 HCA-1 via port 1
	// ft-l1-0: LID 10 to hca2 HCA-1 via port 1
	// ft-l1-0: LID 11 to hca3 HCA-1 via port 1
	// ft-l1-0: LID 12 to hca4 HCA-1 via port 1
	// ft-l1-0: LID 13 to hca5 HCA-1 via port 2
	// ft-l1-0: LID 14 to hca6 HCA-1 via port 2
}
