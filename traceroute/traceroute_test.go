package traceroute_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
	"github.com/rdmakit/rdmakit/subnet"
	"github.com/rdmakit/rdmakit/traceroute"
)

func open(t *testing.T, gen string) (*fabric.Fabric, *subnet.Subnet) {
	t.Helper()
	ctx := context.Background()
	f, err := fabric.Open(ctx, gen, fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	return f, discovered(t, f)
}

// discovered discovers f's subnet and reads its switches' whole LFTs and
// MFTs; f is closed when the test ends.
func discovered(t *testing.T, f *fabric.Fabric) *subnet.Subnet {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() { f.Close() })
	sn, _, err := subnet.Discover(ctx, f.MAD, subnet.DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{LFT: subnet.WholeLFT, MFT: subnet.WholeMFT})
	if err != nil || len(failed) > 0 {
		t.Fatal(failed, err)
	}
	return sn
}

// lftRoute is the route from port a to LID dst as the discovered subnet's
// tables give it: the node GUIDs in order.
func lftRoute(t *testing.T, sn *subnet.Subnet, a *subnet.Port, dst uint16) []iba.GUID {
	t.Helper()
	route := []iba.GUID{a.Node.GUID}
	n := a.Node
	if a.BaseLID == dst {
		return route
	}
	if n.Type != iba.NodeTypeSwitch {
		n = a.Remote.Node
		route = append(route, n.GUID)
	}
	for n.Type == iba.NodeTypeSwitch && len(route) < traceroute.MaxHops {
		out, ok := n.LFTPort(dst)
		if !ok {
			t.Fatalf("no LFT entry for %d on %v", dst, n.GUID)
		}
		if out == 0 {
			return route
		}
		n = n.Port(int(out)).Remote.Node
		route = append(route, n.GUID)
	}
	return route
}

// TestUnicastFollowsTheTables: between every pair of end ports of two
// fabrics (and from the local port), the traced route is the one the
// switches' LFTs, read whole after a discovery, give; its hops chain
// through the subnet's links.
func TestUnicastFollowsTheTables(t *testing.T) {
	ctx := context.Background()
	for _, gen := range []string{"sim:fattree:k=4,n=2", "sim:dragonfly:a=4,p=2,h=2"} {
		t.Run(gen, func(t *testing.T) {
			f, sn := open(t, gen)
			tr := &traceroute.Tracer{Getter: f}
			var ends []*subnet.Port
			for _, n := range sn.Nodes() {
				if p := n.EndPort(); p != nil && n.Type == iba.NodeTypeCA {
					ends = append(ends, p)
				}
			}
			ends = append(ends, sn.NodesOfType(iba.NodeTypeSwitch)[0].EndPort())
			for i, a := range ends {
				for _, b := range ends[max(0, i-3):min(len(ends), i+4)] {
					r, err := tr.Unicast(ctx, a.BaseLID, b.BaseLID)
					if err != nil {
						t.Fatalf("%d -> %d: %v %v", a.BaseLID, b.BaseLID, err, r.Warnings)
					}
					checkRoute(t, sn, r, a, b)
				}
			}
			local := sn.Nodes()[0].EndPort()
			r, err := tr.Unicast(ctx, 0, ends[len(ends)-1].BaseLID)
			if err != nil {
				t.Fatal(err)
			}
			checkRoute(t, sn, r, local, ends[len(ends)-1])
		})
	}
}

func checkRoute(t *testing.T, sn *subnet.Subnet, r *traceroute.Route, a, b *subnet.Port) {
	t.Helper()
	want := lftRoute(t, sn, a, b.BaseLID)
	var got []iba.GUID
	for i, h := range r.Hops {
		switch {
		case i == 0 && h.Kind != traceroute.From, i == len(r.Hops)-1 && h.Kind != traceroute.To:
			t.Fatalf("%d -> %d: hop %d is %v", a.BaseLID, b.BaseLID, i, h.Kind)
		case h.Kind == traceroute.Through:
			prev := sn.Node(got[len(got)-1])
			p := prev.Port(h.OutPort)
			if p == nil || p.Remote == nil || p.Remote.Node.GUID != h.NodeGUID || p.Remote.Num != h.PortNum {
				t.Fatalf("%d -> %d: hop %d: port %d of %v does not lead to port %d of %v", a.BaseLID, b.BaseLID, i, h.OutPort, prev.GUID, h.PortNum, h.NodeGUID)
			}
		}
		if h.Kind != traceroute.To {
			got = append(got, h.NodeGUID)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d -> %d: route %v, the LFTs give %v", a.BaseLID, b.BaseLID, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%d -> %d: route %v, the LFTs give %v", a.BaseLID, b.BaseLID, got, want)
		}
	}
	last := r.Hops[len(r.Hops)-1]
	if last.NodeGUID != b.Node.GUID || last.LID != int(b.BaseLID) || last.Desc != b.Node.Description() {
		t.Fatalf("%d -> %d: ends at %+v", a.BaseLID, b.BaseLID, last)
	}
}

// TestMulticast: the route of a group two hosts joined goes along ports
// the switches' MFTs forward its MLID to, and ends at the destination
// port.
func TestMulticast(t *testing.T) {
	ctx := context.Background()
	f, sn := open(t, "sim:fattree:k=4,n=2")
	sc := f.SA()
	sat, err := sc.Target(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cas := sn.NodesOfType(iba.NodeTypeCA)
	a, b := cas[1].EndPort(), cas[len(cas)-1].EndPort()
	var mlid uint16
	var mgid iba.GID
	for _, p := range []*subnet.Port{a, b} {
		var gid iba.GID
		binary.BigEndian.PutUint64(gid[:], 0xfe80000000000000)
		binary.BigEndian.PutUint64(gid[8:], uint64(p.GUID))
		rec := iba.MCMemberRecord{PortGID: gid, QKey: 0x11, PKey: 0xFFFF, JoinState: 1}
		names := []string{"portGID", "QKey", "PKey", "SL", "flowLabel", "TClass", "joinState", "MGID"}
		if mlid != 0 {
			rec = iba.MCMemberRecord{MGID: mgid, PortGID: gid, JoinState: 1}
			names = []string{"MGID", "portGID", "joinState"}
		}
		mask, err := sa.ComponentMask(&rec, names...)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.MAD.SubnAdmSet(ctx, sat, &rec, mask); err != nil {
			t.Fatal(err)
		}
		mlid, mgid = rec.MLID, rec.MGID
	}
	// The MFTs again, with the group.
	failed, err := sn.ReadTables(ctx, f, nil, subnet.TableOptions{MFT: subnet.WholeMFT})
	if err != nil || len(failed) > 0 {
		t.Fatal(failed, err)
	}
	tr := &traceroute.Tracer{Getter: f}
	r, err := tr.Multicast(ctx, a.BaseLID, b.BaseLID, int(mlid))
	if err != nil {
		t.Fatal(err, r.Warnings)
	}
	if r.MLID != int(mlid) || len(r.Hops) < 3 || r.Hops[0].Kind != traceroute.From || r.Hops[0].NodeGUID != a.Node.GUID {
		t.Fatalf("route %+v", r)
	}
	end := r.Hops[len(r.Hops)-1]
	if end.Kind != traceroute.To || end.PortGUID != b.GUID {
		t.Fatalf("ends at %+v, want port %v", end, b.GUID)
	}
	for i := 1; i < len(r.Hops)-1; i++ {
		prev, h := sn.Node(r.Hops[i-1].NodeGUID), r.Hops[i]
		if h.Kind != traceroute.Through {
			t.Fatalf("hop %d is %v", i, h.Kind)
		}
		if prev.Type == iba.NodeTypeSwitch {
			if ports := prev.MFTPorts(mlid); !contains(ports, h.OutPort) {
				t.Fatalf("hop %d: %v forwards %#x to %v, not port %d", i, prev.GUID, mlid, ports, h.OutPort)
			}
		}
		if p := prev.Port(h.OutPort); p == nil || p.Remote == nil || p.Remote.Node.GUID != h.NodeGUID {
			t.Fatalf("hop %d: port %d of %v does not lead to %v", i, h.OutPort, prev.GUID, h.NodeGUID)
		}
	}
}

func contains(ports []int, p int) bool {
	for _, q := range ports {
		if q == p {
			return true
		}
	}
	return false
}

// TestFailures: each way a trace fails returns an *Error wrapping
// ErrNoRoute, the warning that says why, and the hops traced before.
func TestFailures(t *testing.T) {
	ctx := context.Background()
	f, sn := open(t, "sim:fattree:k=4,n=2")
	cas := sn.NodesOfType(iba.NodeTypeCA)
	a, b := cas[0].EndPort(), cas[len(cas)-1].EndPort()
	tr := &traceroute.Tracer{Getter: f, Timeout: 20 * time.Millisecond}
	check := func(name string, r *traceroute.Route, err error, warn string) {
		t.Helper()
		var te *traceroute.Error
		if !errors.As(err, &te) || !errors.Is(err, traceroute.ErrNoRoute) {
			t.Fatalf("%s: error %v", name, err)
		}
		var all []string
		for _, w := range r.Warnings {
			all = append(all, w.String())
		}
		if !strings.Contains(strings.Join(all, "\n"), warn) || r.Warnings[len(r.Warnings)-1].Msg != te.Msg {
			t.Fatalf("%s: warnings %q, want one with %q ending with %q", name, all, warn, te.Msg)
		}
	}
	r, err := tr.Unicast(ctx, a.BaseLID, 999)
	check("no such LID", r, err, "find_route: can't reach to/from ports")
	r, err = tr.Unicast(ctx, 999, b.BaseLID)
	check("no such source", r, err, "get_route: can't find a route to the src port")
	r, err = tr.Multicast(ctx, a.BaseLID, b.BaseLID, 0xC001)
	check("no such group", r, err, "can't find a multicast route from src to dest")
	r, err = tr.Multicast(ctx, a.BaseLID, b.BaseLID, 5)
	check("not an MLID", r, err, "get_route: invalid MLID; must be 0xc000 or larger")

	// A loop: the leaf switch of the source sends the destination's LID
	// up, and the switch above sends it back down.
	leaf := a.Remote
	up := 0
	for _, p := range leaf.Node.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.Type == iba.NodeTypeSwitch {
			up = p.Num
			break
		}
	}
	tr.Force = true // the destination is not reachable by its LID either
	setLFT(t, f, leaf.Node, b.BaseLID, up)
	setLFT(t, f, leaf.Node.Port(up).Remote.Node, b.BaseLID, leaf.Node.Port(up).Remote.Num)
	r, err = tr.Unicast(ctx, a.BaseLID, b.BaseLID)
	check("loop", r, err, "find_route: Direct path too long!")
	if len(r.Hops) < 10 || r.Hops[0].Kind != traceroute.From {
		t.Fatalf("loop: %d hops traced", len(r.Hops))
	}
	// An entry past the switch's ports.
	setLFT(t, f, leaf.Node, b.BaseLID, 200)
	r, err = tr.Unicast(ctx, a.BaseLID, b.BaseLID)
	check("bad entry", r, err, fmt.Sprintf("lid entry %d is 200", b.BaseLID))
	// DirectedRoute meets the same entry, and a LID no port has.
	for lid, want := range map[uint16]string{b.BaseLID: fmt.Sprintf("lid entry %d is 200", b.BaseLID), 999: "lid entry 999 is"} {
		var te *traceroute.Error
		if path, err := tr.DirectedRoute(ctx, lid); !errors.As(err, &te) || !strings.Contains(te.Msg, want) {
			t.Fatalf("DirectedRoute(%d): %v, %v; want %q", lid, path, err, want)
		}
	}
	// A LID past the leaf's LinearFDBTop (IBA 14.2.5.4) has no entry.
	tg := mad.Route{Addr: mad.Addr{LID: leaf.Node.EndPort().BaseLID}}
	var si iba.SwitchInfo
	if err := f.MAD.SubnGet(ctx, tg, &si, 0); err != nil {
		t.Fatal(err)
	}
	si.LinearFDBTop = b.BaseLID - 1
	if err := f.MAD.SubnSet(ctx, tg, &si, 0); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("lid entry %d is -1 (top %d)", b.BaseLID, b.BaseLID-1)
	if path, err := tr.DirectedRoute(ctx, b.BaseLID); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("DirectedRoute(%d) past the top: %v, %v; want %q", b.BaseLID, path, err, want)
	}
}

// setLFT points lid at port on a switch, as an SM would.
func setLFT(t *testing.T, f *fabric.Fabric, sw *subnet.Node, lid uint16, port int) {
	t.Helper()
	ctx := context.Background()
	tg := mad.Route{Addr: mad.Addr{LID: sw.EndPort().BaseLID}}
	var lft iba.LinearForwardingTable
	if err := f.MAD.SubnGet(ctx, tg, &lft, uint32(lid/64)); err != nil {
		t.Fatal(err)
	}
	lft.PortBlock[lid%64] = uint8(port)
	if err := f.MAD.SubnSet(ctx, tg, &lft, uint32(lid/64)); err != nil {
		t.Fatal(err)
	}
}

// drOnly is a subnet that routes no LID-addressed SMP (as XDR fabrics need
// not): it refuses them, and counts those refused.
type drOnly struct {
	mad.SubnGetter
	refused int
}

func (d *drOnly) SubnGet(ctx context.Context, t mad.Target, a iba.Attribute, mod uint32) error {
	if rt, ok := t.(mad.Route); ok && rt.DR == nil {
		d.refused++
		return errors.New("no LID-routed SMPs on this subnet")
	}
	return d.SubnGetter.SubnGet(ctx, t, a, mod)
}

// TestDirectedRoute: for every LID of a subnet with LMC 2 (each CA port
// owning four), the directed route found reaches the port owning it, with
// one hop per link of the route the LFTs give, and no SMP ever went to a
// LID.
func TestDirectedRoute(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		gen string
		lmc uint8
	}{{"fattree:k=4,n=2", 2}, {"dragonfly:a=4,p=2,h=2", 0}, {"random:switches=10,radix=8,hosts=16,extra=6,seed=5", 1}} {
		t.Run(c.gen, func(t *testing.T) {
			top, err := topo.Load(c.gen)
			if err != nil {
				t.Fatal(err)
			}
			sf, err := sim.New(top)
			if err != nil {
				t.Fatal(err)
			}
			var local string
			for _, n := range top.Nodes {
				if n.Type == iba.NodeTypeCA {
					local = n.ID
					break
				}
			}
			if _, err := sf.RunSM(ctx, sim.SMConfig{Node: local, Port: 1, LMC: c.lmc}); err != nil {
				t.Fatal(err)
			}
			tp, err := sf.Attach(local, 1)
			if err != nil {
				t.Fatal(err)
			}
			f, err := fabric.New(ctx, tp, fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
			if err != nil {
				t.Fatal(err)
			}
			sn := discovered(t, f)
			g := &drOnly{SubnGetter: f}
			tr := &traceroute.Tracer{Getter: g}
			local0 := sn.Nodes()[0].EndPort()
			checked := 0
			for _, n := range sn.Nodes() {
				for _, p := range n.Ports {
					if p == nil || p.BaseLID == 0 || (n.Type == iba.NodeTypeSwitch && p.Num != 0) {
						continue
					}
					for k := uint16(0); k < 1<<p.LMC; k++ {
						lid := p.BaseLID + k
						path, err := tr.DirectedRoute(ctx, lid)
						if err != nil {
							t.Fatalf("LID %d: %v", lid, err)
						}
						var ni iba.NodeInfo
						if err := f.SubnGet(ctx, ibpath.NewDR(append([]byte{0}, path...)...).Route(), &ni, 0); err != nil {
							t.Fatalf("LID %d: path %v: %v", lid, path, err)
						}
						if ni.NodeGUID != n.GUID || (n.Type != iba.NodeTypeSwitch && ni.PortGUID != p.GUID) {
							t.Fatalf("LID %d: path %v reaches %v port %v, want %v port %v", lid, path, ni.NodeGUID, ni.PortGUID, n.GUID, p.GUID)
						}
						if want := len(lftRoute(t, sn, local0, p.BaseLID)) - 1; len(path) != want {
							t.Fatalf("LID %d: path %v, the LFTs give %d hops", lid, path, want)
						}
						checked++
					}
				}
			}
			if g.refused != 0 || checked < len(sn.Nodes()) {
				t.Fatalf("%d LID-routed SMPs, %d LIDs checked", g.refused, checked)
			}
			for _, lid := range []uint16{0, 0xC000, 0xBFFF} {
				var te *traceroute.Error
				if path, err := tr.DirectedRoute(ctx, lid); !errors.As(err, &te) || !errors.Is(err, traceroute.ErrNoRoute) {
					t.Fatalf("LID %#x: %v, %v", lid, path, err)
				}
			}
		})
	}
}
