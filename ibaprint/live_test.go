package ibaprint

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// liveFabric is a small fat tree with dual-port HCAs and EDR uplinks, so
// the speeds and widths of PortInfo vary, on release rel's ibsim and
// OpenSM; testbed.RunC runs rel's C tools on it.
func liveFabric(t *testing.T, rel *testbed.Release) (*testbed.Fabric, *testbed.IBSim) {
	t.Helper()
	rel.Require(t)
	f, err := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2, DualPortHCAs: true,
		UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := rel.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, testbed.HCAName(1))
	return f, sim
}

// drPaths finds a directed route from H-1 (attached at its port 1) to
// every node the fabric reaches.
func drPaths(f *testbed.Fabric) map[string]string {
	start := testbed.HCAName(1)
	paths := map[string]string{start: "0"}
	queue := []string{}
	if peer, _, ok := f.Peer(start, 1); ok {
		paths[peer] = "0,1"
		queue = append(queue, peer)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		node := f.Node(n)
		for p := 1; p <= node.Ports; p++ {
			peer, _, ok := f.Peer(n, p)
			if !ok {
				continue
			}
			if _, seen := paths[peer]; seen {
				continue
			}
			paths[peer] = paths[n] + "," + strconv.Itoa(p)
			if f.Node(peer).Type == testbed.Switch {
				// Only switches forward a directed-route SMP.
				queue = append(queue, peer)
			}
		}
	}
	return paths
}

// smpdump fetches one attribute's raw 64 data bytes with the C smpdump.
func smpdump(t *testing.T, sim *testbed.IBSim, path string, attr uint16, mod uint32) []byte {
	t.Helper()
	out, errOut, code := testbed.RunC(t, sim, testbed.HCAName(1), "smpdump", "-D", path,
		fmt.Sprintf("0x%x", attr), fmt.Sprintf("0x%x", mod))
	if code != 0 {
		t.Fatalf("smpdump -D %s 0x%x 0x%x: exit %d\n%s%s", path, attr, mod, code, out, errOut)
	}
	var h strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if st, ok := strings.CutPrefix(line, "SMP status: "); ok {
			// A directed-route reply carries the D bit in its status.
			if v, err := strconv.ParseUint(st, 0, 16); err != nil || v&0x7fff != 0 {
				t.Fatalf("smpdump -D %s 0x%x 0x%x: %s", path, attr, mod, line)
			}
			continue
		}
		h.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(h.String())
	if err != nil || len(b) != 64 {
		t.Fatalf("smpdump output is not 64 bytes of hex (%v):\n%s", err, out)
	}
	return b
}

// smpquery runs the C smpquery and drops its "# ..." header line. What it
// prints is normalised to infiniband-diags 56's (Release.Normalise).
func smpquery(t *testing.T, sim *testbed.IBSim, args ...string) string {
	t.Helper()
	argv := append([]string{"smpquery", "-D"}, args...)
	out, errOut, code := testbed.RunC(t, sim, testbed.HCAName(1), argv...)
	out = sim.Release.Normalise(argv, out)
	if code != 0 {
		t.Fatalf("smpquery -D %v: exit %d\n%s%s", args, code, out, errOut)
	}
	if strings.HasPrefix(out, "# ") {
		if i := strings.IndexByte(out, '\n'); i >= 0 && !strings.HasPrefix(out, "#                 SL") {
			out = out[i+1:]
		}
	}
	return out
}

func render(t *testing.T, f func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sameOutput(t *testing.T, what, c, ours string) {
	t.Helper()
	if c != ours {
		t.Errorf("%s: ours differs from the C tool's\n--- C\n%s--- ours\n%s", what, c, ours)
	}
}

// TestLiveSMPQuery feeds the raw SMP data that the C smpdump fetches to the
// dotted renderers and compares with what the C smpquery prints for the same
// object, for every node and port of the fabric, with each release.
func TestLiveSMPQuery(t *testing.T) { testbed.EachRelease(t, testLiveSMPQuery) }

func testLiveSMPQuery(t *testing.T, rel *testbed.Release) {
	f, sim := liveFabric(t, rel)
	paths := drPaths(f)
	if len(paths) != len(f.Nodes) {
		t.Fatalf("reached %d of %d nodes", len(paths), len(f.Nodes))
	}
	compared := 0
	for _, n := range f.Nodes {
		path := paths[n.Name]
		ni := smpdump(t, sim, path, 0x11, 0)
		sameOutput(t, n.Name+" nodeinfo", smpquery(t, sim, "nodeinfo", path),
			render(t, func(w *bytes.Buffer) error { return SMPNodeInfo(w, ni) }))
		nd := smpdump(t, sim, path, 0x10, 0)
		sameOutput(t, n.Name+" nodedesc", smpquery(t, sim, "nodedesc", path),
			render(t, func(w *bytes.Buffer) error { return SMPNodeDesc(w, nd) }))
		compared += 2
		first, pcap := 1, int(binary.BigEndian.Uint16(ni[28:30]))
		if n.Type == testbed.Switch {
			first = 0
			si := smpdump(t, sim, path, 0x12, 0)
			sameOutput(t, n.Name+" switchinfo", smpquery(t, sim, "switchinfo", path),
				render(t, func(w *bytes.Buffer) error { return SMPSwitchInfo(w, si) }))
			compared++
		}
		for p := first; p <= n.Ports; p++ {
			what := fmt.Sprintf("%s port %d", n.Name, p)
			pi := smpdump(t, sim, path, 0x15, uint32(p))
			sameOutput(t, what+" portinfo", smpquery(t, sim, "portinfo", path, strconv.Itoa(p)),
				render(t, func(w *bytes.Buffer) error { return SMPPortInfo(w, pi) }))
			compared++
			if p > 1 && n.Type == testbed.Switch {
				continue // one switch port's tables stand for the rest
			}
			c := pcap
			if n.Type == testbed.Switch && p != 0 {
				si := smpdump(t, sim, path, 0x12, 0)
				c = int(binary.BigEndian.Uint16(si[14:16]))
			}
			var blocks [][]byte
			for i := 0; i < (c+31)/32; i++ {
				blocks = append(blocks, smpdump(t, sim, path, 0x16, uint32(i)|uint32(p)<<16))
			}
			sameOutput(t, what+" pkeys", smpquery(t, sim, "pkeys", path, strconv.Itoa(p)),
				render(t, func(w *bytes.Buffer) error { return PKeys(w, blocks, c) }))
			compared++
		}
		if n.Type != testbed.Switch {
			sl := smpdump(t, sim, path, 0x17, 0)
			out := smpquery(t, sim, "sl2vl", path)
			sameOutput(t, n.Name+" sl2vl", out,
				render(t, func(w *bytes.Buffer) error { return SL2VL(w, []SL2VLEntry{{0, 0, sl}}) }))
			compared++
		}
	}
	t.Logf("%d smpquery outputs compared over %d nodes", compared, len(f.Nodes))
}

// TestLivePerfQuery fetches raw PortCounters and PortCountersExtended with
// the Go ibsim transport and compares the renderers with the C perfquery
// of each release.
func TestLivePerfQuery(t *testing.T) { testbed.EachRelease(t, testLivePerfQuery) }

func testLivePerfQuery(t *testing.T, rel *testbed.Release) {
	f, sim := liveFabric(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: testbed.HCAName(1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	agent, err := tr.Register(mad.AgentSpec{Class: 0x04, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	lid := func(name string, port int) uint16 {
		pi := smpdump(t, sim, drPaths(f)[name], 0x15, uint32(port))
		return binary.BigEndian.Uint16(pi[16:18])
	}
	tid := uint64(0x1000)
	get := func(dlid uint16, attr uint16, port uint8) []byte {
		t.Helper()
		tid++
		req := make([]byte, 256)
		req[0], req[1], req[2], req[3] = 1, 0x04, 1, 0x01 // PerformanceGet
		binary.BigEndian.PutUint64(req[8:], tid)
		binary.BigEndian.PutUint16(req[16:], attr)
		req[64+1] = port // PortSelect
		if err := tr.Send(ctx, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: dlid, QPN: 1, QKey: 0x80010000}, MAD: req, Timeout: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		for {
			p, err := tr.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Err != nil {
				t.Fatalf("PerformanceGet 0x%x to LID %d: %v", attr, dlid, p.Err)
			}
			if binary.BigEndian.Uint32(p.MAD[12:16]) == uint32(tid) {
				if st := binary.BigEndian.Uint16(p.MAD[4:6]); st != 0 {
					t.Fatalf("PerformanceGet 0x%x to LID %d: status 0x%04x", attr, dlid, st)
				}
				return p.MAD
			}
		}
	}
	compared := 0
	for _, target := range []struct {
		node string
		port int
	}{{testbed.HCAName(1), 1}, {testbed.HCAName(3), 2}, {testbed.LeafName(1), 1}, {testbed.SpineName(1), 2}} {
		lport := target.port
		if f.Node(target.node).Type == testbed.Switch {
			lport = 0
		}
		dlid := lid(target.node, lport)
		cpi := get(dlid, 0x01, 0)
		capMask := binary.BigEndian.Uint16(cpi[64+2:])
		capMask2 := binary.BigEndian.Uint32(cpi[64+4:]) >> 5
		ps := strconv.Itoa(target.port)
		what := fmt.Sprintf("%s port %d", target.node, target.port)

		// The simulator counts every MAD on every port it crosses, ours and
		// the C tool's: read before and after the C tool, and require its
		// moving counters to lie between our two readings.
		pc := get(dlid, 0x12, uint8(target.port))
		out, errOut, code := testbed.RunC(t, sim, testbed.HCAName(1), "perfquery", strconv.Itoa(int(dlid)), ps)
		if code != 0 {
			t.Fatalf("perfquery: exit %d\n%s%s", code, out, errOut)
		}
		pc2 := get(dlid, 0x12, uint8(target.port))
		hdr, body, _ := strings.Cut(out, "\n")
		if want := fmt.Sprintf("# Port counters: Lid %d port %d (CapMask: 0x%02X)", dlid, target.port, capMask); hdr != want {
			t.Errorf("%s: perfquery header %q, want %q", what, hdr, want)
		}
		between(t, what+" perfquery", body,
			render(t, func(w *bytes.Buffer) error { return PortCounters(w, pc[64:], capMask) }),
			render(t, func(w *bytes.Buffer) error { return PortCounters(w, pc2[64:], capMask) }))

		pce := get(dlid, 0x1d, uint8(target.port))
		out, errOut, code = testbed.RunC(t, sim, testbed.HCAName(1), "perfquery", "-x", strconv.Itoa(int(dlid)), ps)
		if code != 0 {
			t.Fatalf("perfquery -x: exit %d\n%s%s", code, out, errOut)
		}
		pce2 := get(dlid, 0x1d, uint8(target.port))
		hdr, body, _ = strings.Cut(out, "\n")
		if want := fmt.Sprintf("# Port extended counters: Lid %d port %d (CapMask: 0x%02X CapMask2: 0x%07X)", dlid, target.port, capMask, capMask2); hdr != want {
			t.Errorf("%s: perfquery -x header %q, want %q", what, hdr, want)
		}
		between(t, what+" perfquery -x", body,
			render(t, func(w *bytes.Buffer) error { return PortCountersExtended(w, pce[64:], capMask, capMask2) }),
			render(t, func(w *bytes.Buffer) error { return PortCountersExtended(w, pce2[64:], capMask, capMask2) }))
		compared += 2
	}
	t.Logf("%d perfquery outputs compared", compared)
}

// between compares the C tool's lines with ours read before and after it:
// equal where our two readings agree, within them where the counter moved.
func between(t *testing.T, what, c, before, after string) {
	t.Helper()
	cl, bl, al := strings.Split(c, "\n"), strings.Split(before, "\n"), strings.Split(after, "\n")
	if len(cl) != len(bl) || len(bl) != len(al) {
		t.Errorf("%s: %d lines from C, %d from ours\n--- C\n%s--- ours\n%s", what, len(cl), len(bl), c, before)
		return
	}
	for i := range cl {
		if bl[i] == al[i] {
			if cl[i] != bl[i] {
				t.Errorf("%s: C %q, ours %q", what, cl[i], bl[i])
			}
			continue
		}
		lc, vc, _ := strings.Cut(cl[i], ":")
		lb, vb, _ := strings.Cut(bl[i], ":")
		_, va, _ := strings.Cut(al[i], ":")
		x, _ := strconv.ParseUint(strings.TrimLeft(vc, "."), 10, 64)
		lo, _ := strconv.ParseUint(strings.TrimLeft(vb, "."), 10, 64)
		hi, _ := strconv.ParseUint(strings.TrimLeft(va, "."), 10, 64)
		if lc != lb || len(vc) != len(vb) && len(vc) != len(va) || x < lo || x > hi {
			t.Errorf("%s: C %q is not between ours %q and %q", what, cl[i], bl[i], al[i])
		}
	}
}

// TestLiveSAQuery asks OpenSM's SA for NodeRecords and PathRecords with the
// Go ibsim transport, the request built by dotted path and component mask,
// and compares the renderers with what the C saquery prints for the same
// records, with each release.
func TestLiveSAQuery(t *testing.T) { testbed.EachRelease(t, testLiveSAQuery) }

func testLiveSAQuery(t *testing.T, rel *testbed.Release) {
	f, sim := liveFabric(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: testbed.HCAName(2)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	agent, err := tr.Register(mad.AgentSpec{Class: 0x03, ClassVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	paths := drPaths(f)
	self := smpdump(t, sim, "0", 0x15, 1)
	smLID := binary.BigEndian.Uint16(self[18:20])
	tid := uint64(0x2000)
	get := func(attr string, set [][2]string) []byte {
		t.Helper()
		s := mustStruct(t, attr)
		req := newMAD(0x03, 2, 0x01, s.AttrID, 0, 56, build(t, attr, set))
		var mask uint64
		for _, kv := range set {
			for _, bit := range s.MaskBits(kv[0]) {
				mask |= 1 << bit
			}
		}
		binary.BigEndian.PutUint64(req[48:], mask)
		tid++
		binary.BigEndian.PutUint64(req[8:], tid)
		if err := tr.Send(ctx, &mad.Packet{Agent: agent, Addr: mad.Addr{LID: smLID, QPN: 1, QKey: 0x80010000}, MAD: req, Timeout: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		for {
			p, err := tr.Recv(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Err != nil {
				t.Fatalf("SubnAdmGet %s %v: %v", attr, set, p.Err)
			}
			if binary.BigEndian.Uint32(p.MAD[12:16]) == uint32(tid) {
				if st := binary.BigEndian.Uint16(p.MAD[4:6]); st != 0 {
					t.Fatalf("SubnAdmGet %s %v: status 0x%04x", attr, set, st)
				}
				return p.MAD[56:]
			}
		}
	}
	saquery := func(args ...string) string {
		t.Helper()
		out, errOut, code := testbed.RunC(t, sim, testbed.HCAName(2), append([]string{"saquery"}, args...)...)
		if code != 0 {
			t.Fatalf("saquery %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	var lids []uint16
	compared := 0
	for _, n := range f.Nodes {
		port := 1
		if n.Type == testbed.Switch {
			port = 0
		}
		pi := smpdump(t, sim, paths[n.Name], 0x15, uint32(port))
		lid := binary.BigEndian.Uint16(pi[16:18])
		lids = append(lids, lid)
		ls := strconv.Itoa(int(lid))
		nr := get("NodeRecord", [][2]string{{"LID", ls}})
		sameOutput(t, n.Name+" NodeRecord", saquery("NR", ls),
			render(t, func(w *bytes.Buffer) error { return SANodeRecord(w, nr) }))
		compared++
	}
	for _, pair := range [][2]uint16{{lids[0], lids[len(lids)-1]}, {lids[len(lids)-1], lids[0]}, {lids[1], lids[2]}} {
		s, d := strconv.Itoa(int(pair[0])), strconv.Itoa(int(pair[1]))
		pr := get("PathRecord", [][2]string{{"SLID", s}, {"DLID", d}})
		sameOutput(t, "PathRecord "+s+" to "+d, saquery("PR", "--slid", s, "--dlid", d),
			render(t, func(w *bytes.Buffer) error { return SAPathRecord(w, pr) }))
		compared++
	}
	t.Logf("%d saquery outputs compared", compared)
}
