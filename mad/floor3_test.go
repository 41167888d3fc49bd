package mad_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

// Floor 3 (docs/design.md, "Tests: four floors"): ibsim and OpenSM on a generated
// fat tree; our client through package ibsim's transport reads what the C
// infiniband-diags read on the same fabric, and the values must agree.

// dotted parses the "Key:.....value" and "\t\tkey....value" lines that
// libibmad's dumps and saquery print.
func dotted(out string) map[string]string {
	re := regexp.MustCompile(`^\s*([A-Za-z_0-9]+):?\.{2,}(.*)$`)
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if s := re.FindStringSubmatch(line); s != nil {
			if _, dup := m[s[1]]; !dup {
				m[s[1]] = strings.TrimSpace(s[2])
			}
		}
	}
	return m
}

// num reads a value the C tools print in decimal or 0x hex.
func num(t *testing.T, what, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(strings.ToLower(s), "0x")], 64)
	if err != nil {
		t.Fatalf("%s: %q is not a number", what, s)
	}
	return v
}

// movedLittle compares a traffic counter we read with what the C tool read
// just after: ibsim counts the MADs themselves, so it may have grown, by
// no more than the MADs sent in between.
func movedLittle(ours, theirs, slack uint64) bool { return theirs >= ours && theirs-ours <= slack }

type drNode struct {
	node *testbed.Node
	path []byte
}

// drPaths walks the fabric from port 1 of CA start: the shortest directed
// route to every node (only switches forward).
func drPaths(f *testbed.Fabric, start string) []drNode {
	seen := map[string]bool{start: true}
	out := []drNode{{f.Node(start), []byte{0}}}
	for i := 0; i < len(out); i++ {
		n := out[i]
		if n.node.Type != testbed.Switch && i > 0 {
			continue
		}
		for p := 1; p <= n.node.Ports; p++ {
			if i == 0 && p != 1 {
				break
			}
			peer, _, ok := f.Peer(n.node.Name, p)
			if !ok || seen[peer] {
				continue
			}
			seen[peer] = true
			out = append(out, drNode{f.Node(peer), append(append([]byte(nil), n.path...), byte(p))})
		}
	}
	return out
}

func hops(p []byte) string {
	s := make([]string, len(p))
	for i, h := range p {
		s[i] = strconv.Itoa(int(h))
	}
	if len(s) == 1 {
		return "0,"
	}
	return strings.Join(s, ",")
}

func TestFloor3AgainstCTools(t *testing.T) {
	if testing.Short() {
		t.Skip("floor 3 starts ibsim and OpenSM")
	}
	const me = "H-2"
	f, err := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := testbed.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, "H-1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: me})
	if err != nil {
		t.Fatal(err)
	}
	c := mad.NewClient(tr)
	defer c.Close()
	lp, err := c.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lp.LID == 0 || lp.SMLID == 0 {
		t.Fatalf("local port %+v: the subnet is not up", lp)
	}

	lids := map[string]uint16{}
	for _, n := range drPaths(f, me) {
		dr := mad.Route{DR: &mad.DirectedRoute{Path: n.path, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}}
		var ni iba.NodeInfo
		if err := c.SubnGet(ctx, dr, &ni, 0); err != nil {
			t.Fatalf("%s by DR %s: %v", n.node.Name, hops(n.path), err)
		}
		cOut, _, code := testbed.RunC(t, sim, me, "smpquery", "-D", "nodeinfo", hops(n.path))
		if code != 0 {
			t.Fatalf("smpquery -D nodeinfo %s: exit %d", hops(n.path), code)
		}
		cv := dotted(cOut)
		if ni.NodeGUID != n.node.GUID || uint64(ni.NodeGUID) != num(t, "Guid", cv["Guid"]) ||
			uint64(ni.NumPorts) != num(t, "NumPorts", cv["NumPorts"]) ||
			uint64(ni.LocalPortNum) != num(t, "LocalPort", cv["LocalPort"]) ||
			uint64(ni.PortGUID) != num(t, "PortGuid", cv["PortGuid"]) ||
			uint64(ni.VendorID) != num(t, "VendorId", cv["VendorId"]) ||
			uint64(ni.DeviceID) != num(t, "DevId", cv["DevId"]) {
			t.Errorf("%s NodeInfo by DR: ours %+v, smpquery %v", n.node.Name, ni, cv)
		}
		port := uint32(ni.LocalPortNum)
		if ni.NodeType == iba.NodeTypeSwitch {
			port = 0
		}
		var pi iba.PortInfo
		if err := c.SubnGet(ctx, dr, &pi, port); err != nil {
			t.Fatalf("%s PortInfo by DR: %v", n.node.Name, err)
		}
		lids[n.node.Name] = pi.LID

		var byLID iba.NodeInfo
		if err := c.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: pi.LID}}, &byLID, 0); err != nil {
			t.Fatalf("%s NodeInfo by LID %d: %v", n.node.Name, pi.LID, err)
		}
		if byLID.NodeGUID != ni.NodeGUID || byLID.NodeType != ni.NodeType {
			t.Errorf("%s: NodeInfo by LID %d differs from by DR", n.node.Name, pi.LID)
		}
	}
	if len(lids) != len(f.Nodes) {
		t.Fatalf("reached %d of %d nodes", len(lids), len(f.Nodes))
	}

	states := map[string]iba.PortState{"Down": 1, "Initialize": 2, "Armed": 3, "Active": 4}
	for _, node := range f.Nodes {
		lid := lids[node.Name]
		for port := 1; port <= node.Ports; port++ {
			var pi iba.PortInfo
			target := mad.Route{Addr: mad.Addr{LID: lid}}
			if err := c.SubnGet(ctx, target, &pi, uint32(port)); err != nil {
				t.Fatalf("%s port %d PortInfo: %v", node.Name, port, err)
			}
			cOut, _, code := testbed.RunC(t, sim, me, "smpquery", "portinfo", strconv.Itoa(int(lid)), strconv.Itoa(port))
			if code != 0 {
				t.Fatalf("smpquery portinfo %d %d: exit %d", lid, port, code)
			}
			cv := dotted(cOut)
			state := strings.Fields(cv["LinkState"])
			if len(state) == 0 || states[state[0]] != pi.PortState ||
				uint64(pi.LID) != num(t, "Lid", cv["Lid"]) || uint64(pi.MasterSMLID) != num(t, "SMLid", cv["SMLid"]) ||
				uint64(pi.LocalPortNum) != num(t, "LocalPort", cv["LocalPort"]) || uint64(pi.CapabilityMask) != num(t, "CapMask", strings.Fields(cv["CapMask"])[0]) ||
				uint64(pi.LMC) != num(t, "LMC", cv["LMC"]) {
				t.Errorf("%s port %d PortInfo: ours LID %d SM %d state %v local %d cap %#x, smpquery %v", node.Name, port, pi.LID, pi.MasterSMLID, pi.PortState, pi.LocalPortNum, pi.CapabilityMask, cv)
			}
			if pi.PortState != iba.PortStateActive {
				continue
			}
			pc := iba.PortCounters{PortSelect: uint8(port)}
			if err := c.PerformanceGet(ctx, target, &pc, 0); err != nil {
				t.Fatalf("%s port %d PortCounters: %v", node.Name, port, err)
			}
			cOut, _, code = testbed.RunC(t, sim, me, "perfquery", strconv.Itoa(int(lid)), strconv.Itoa(port))
			if code != 0 {
				t.Fatalf("perfquery %d %d: exit %d", lid, port, code)
			}
			cv = dotted(cOut)
			if uint64(pc.PortSelect) != num(t, "PortSelect", cv["PortSelect"]) ||
				uint64(pc.SymbolErrorCounter) != num(t, "SymbolErrorCounter", cv["SymbolErrorCounter"]) ||
				uint64(pc.LinkDownedCounter) != num(t, "LinkDownedCounter", cv["LinkDownedCounter"]) ||
				uint64(pc.PortRcvErrors) != num(t, "PortRcvErrors", cv["PortRcvErrors"]) ||
				uint64(pc.PortXmitDiscards) != num(t, "PortXmitDiscards", cv["PortXmitDiscards"]) ||
				!movedLittle(uint64(pc.PortXmitData), num(t, "PortXmitData", cv["PortXmitData"]), 64*72) ||
				!movedLittle(uint64(pc.PortRcvPkts), num(t, "PortRcvPkts", cv["PortRcvPkts"]), 64) {
				t.Errorf("%s port %d PortCounters: ours %+v, perfquery %v", node.Name, port, pc, cv)
			}
			if testing.Verbose() && node.Name == "H-3" {
				t.Logf("perfquery %d %d agrees: PortXmitData ours %d, C %s", lid, port, pc.PortXmitData, cv["PortXmitData"])
			}
		}
	}

	// The SA: a NodeRecord and a PathRecord, against saquery.
	s := sa.New(c)
	target := "H-3"
	nr := iba.NodeRecord{LID: lids[target]}
	if err := s.Get(ctx, &nr); err != nil {
		t.Fatalf("NodeRecord of %s: %v", target, err)
	}
	cOut, _, code := testbed.RunC(t, sim, me, "saquery", "NR", strconv.Itoa(int(lids[target])))
	if code != 0 {
		t.Fatalf("saquery -N: exit %d", code)
	}
	cv := dotted(cOut)
	if uint64(nr.LID) != num(t, "lid", cv["lid"]) || uint64(nr.NodeInfo.NodeGUID) != num(t, "node_guid", cv["node_guid"]) ||
		uint64(nr.NodeInfo.PortGUID) != num(t, "port_guid", cv["port_guid"]) || !strings.HasPrefix(cv["NodeDescription"], target) {
		t.Errorf("NodeRecord: ours LID %d GUID %v, saquery %v", nr.LID, nr.NodeInfo.NodeGUID, cv)
	}
	pr, err := s.PathRecord(ctx, iba.MakeGID(lp.GIDPrefix, lp.PortGUID), iba.GID{}, lids[target])
	if err != nil {
		t.Fatalf("PathRecord to %s: %v", target, err)
	}
	cOut, _, code = testbed.RunC(t, sim, me, "saquery", "-p", "--slid", strconv.Itoa(int(lp.LID)), "--dlid", strconv.Itoa(int(lids[target])))
	if code != 0 {
		t.Fatalf("saquery -p: exit %d", code)
	}
	cv = dotted(cOut)
	if uint64(pr.DLID) != num(t, "dlid", cv["dlid"]) || uint64(pr.SLID) != num(t, "slid", cv["slid"]) ||
		uint64(pr.SL) != num(t, "sl", cv["sl"]) || uint64(pr.PKey) != num(t, "pkey", cv["pkey"]) ||
		uint64(pr.MTU) != num(t, "mtu", cv["mtu"])&0x3f || uint64(pr.Rate) != num(t, "rate", cv["rate"])&0x3f ||
		pr.DGID.String() != cv["dgid"] || pr.SGID.String() != cv["sgid"] {
		t.Errorf("PathRecord: ours %+v, saquery %v", pr, cv)
	}

	// ibpath: a DR target resolved for a GMP (SMPs for the LID, then an SA
	// PathRecord), and a GUID target.
	res := &ibpath.Resolver{MAD: c, SA: s}
	g, err := res.GMP(ctx, ibpath.NewDR(0, 1))
	if err != nil || g.DLID != lids["S-leaf-1"] || g.SLID != lp.LID {
		t.Errorf("resolving DR 0,1 for a GMP: %v %v", g, err)
	}
	pt, err := ibpath.Parse(f.Node(target).PortGUID(1).Colon(), ibpath.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := res.GMP(ctx, pt); err != nil || g.DLID != lids[target] {
		t.Errorf("resolving port GUID of %s: %v %v", target, g, err)
	}

	// The SMP-to-SA adapter agrees with the SMA.
	a := sa.NewSMP(s)
	var viaSA, viaSMP iba.NodeInfo
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: lids["S-leaf-2"]}}, &viaSA, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: lids["S-leaf-2"]}}, &viaSMP, 0); err != nil {
		t.Fatal(err)
	}
	if viaSA != viaSMP {
		t.Errorf("NodeInfo through the SA %+v, by SMP %+v", viaSA, viaSMP)
	}
}

// TestFloor3Drops: with ibsim dropping 30% of the MADs reaching a node,
// RPCs retry and succeed or fail with a timeout naming the target; nothing
// hangs.
func TestFloor3Drops(t *testing.T) {
	if testing.Short() {
		t.Skip("floor 3 starts ibsim")
	}
	f, err := testbed.FatTree{Leaves: 1, Spines: 0, HCAsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := testbed.StartIBSim(t, topo)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-1"})
	if err != nil {
		t.Fatal(err)
	}
	c := mad.NewClient(tr, mad.WithTimeout(100*time.Millisecond), mad.WithRetries(3))
	defer c.Close()
	if err := sim.SetErrorRate("S-leaf-1", -1, 30, 0); err != nil {
		t.Fatal(err)
	}
	dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1}, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}}
	var ok, timedOut int
	start := time.Now()
	for i := 0; i < 100; i++ {
		var ni iba.NodeInfo
		err := c.SubnGet(ctx, dr, &ni, 0)
		switch {
		case err == nil && ni.NodeGUID == f.Node("S-leaf-1").GUID:
			ok++
		case errors.Is(err, mad.ErrTimeout):
			timedOut++
			if !strings.Contains(err.Error(), "DR Path (0, 1)") {
				t.Errorf("timeout does not name the target: %v", err)
			}
		default:
			t.Fatalf("try %d: %v", i, err)
		}
	}
	t.Logf("30%% drops at the switch: %d succeeded, %d timed out in %v; transport %+v", ok, timedOut, time.Since(start), tr.Stats())
	if ok < 50 {
		t.Errorf("only %d of 100 succeeded", ok)
	}
	if err := sim.SetErrorRate("S-leaf-1", -1, 0, 0); err != nil {
		t.Fatal(err)
	}
}
