package diags

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// TestIBTracertLive compares ibtracert with the C ibtracert on the fat
// tree: unicast and multicast (the IPoIB broadcast group OpenSM made)
// between every pair of ports, -n, -G, --ports-file and the failures.
func TestIBTracertLive(t *testing.T) { eachRelease(t, testIBTracertLive) }

func testIBTracertLive(t *testing.T, p peers) {
	l := startRouteLive(t, p)
	var lids, cas []string
	for _, n := range l.f.Nodes {
		lid := strconv.Itoa(l.lid[n.Name])
		lids = append(lids, lid)
		if n.Type != testbed.Switch {
			cas = append(cas, lid)
		}
	}
	var cases [][]string
	// Every pair of CAs, unicast and multicast; the switches as source and
	// destination; -n on a few.
	for _, a := range cas {
		for _, b := range cas {
			cases = append(cases, []string{a, b}, []string{"-m", "0xc000", a, b})
		}
	}
	for _, sw := range []string{"S-leaf-2", "S-spine-1"} {
		lid := strconv.Itoa(l.lid[sw])
		cases = append(cases, []string{lid, cas[0]}, []string{cas[1], lid}, []string{"-m", "0xc000", lid, cas[2]}, []string{"-n", cas[3], lid})
	}
	cases = append(cases, []string{"-n", cas[0], cas[3]}, []string{"-n", "-m", "0xc000", cas[2], cas[1]})
	// Port 2 of the dual-port HCAs (not in the group: no multicast route).
	for _, h := range []string{"H-1", "H-3"} {
		p2 := strconv.Itoa(l.lid[h] + 1)
		for _, n := range []string{"H-4", "S-spine-1"} {
			o := strconv.Itoa(l.lid[n])
			cases = append(cases, []string{p2, o}, []string{o, p2}, []string{"-m", "0xc000", o, p2})
		}
	}
	h1, h4 := l.f.Node("H-1"), l.f.Node("H-4")
	cases = append(cases,
		[]string{"-G", fmt.Sprintf("0x%x", uint64(h1.PortGUID(1))), fmt.Sprintf("0x%x", uint64(h4.PortGUID(2)))},
		[]string{"-n", "-m", "0xc000", lids[0], lids[len(lids)-1]},
		[]string{"-m", "0xc001", lids[0], lids[1]}, // no such group
		[]string{"-m", "5", lids[0], lids[1]},      // not an MLID
		[]string{"-t", "200", "1", "200"},          // no such LID
		[]string{"0", "1"},                         // not a LID
		[]string{"1"},                              // too few arguments for the C tool
	)
	l.compareAll(t, "ibtracert", cases[len(cases)-7:len(cases)-1])
	l.compareAll(t, "ibtracert", cases[:len(cases)-7])

	t.Run("ports-file", func(t *testing.T) {
		dir := t.TempDir()
		good := filepath.Join(dir, "pairs")
		text := "# pairs\n\n" + lids[0] + " " + lids[2] + "\n   \n" + lids[3] + "\t" + lids[1] + " # a comment\n"
		bad := filepath.Join(dir, "bad")
		for p, s := range map[string]string{good: text, bad: lids[0] + " " + lids[1] + "\nonlyone\n"} {
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l.compareAll(t, "ibtracert", [][]string{
			{"--ports-file", good}, {"-n", "--ports-file", good}, {"--ports-file", bad}, {"--ports-file", filepath.Join(dir, "none")},
		})
		// Where the C tool reads the first two words of a line and cuts
		// an overlong line into pieces, ours stops at the line
		// (docs/ibtool.md).
		pair := lids[0] + " " + lids[2] + "\n"
		for _, c := range []struct{ text, msg string }{
			{pair + lids[3] + " " + lids[1] + " " + lids[2] + "\n", "at line 2 contains bad data: 3 words"},
			{"# " + strings.Repeat("x", 70000) + "\n" + pair, "at line 1 contains bad data: longer than 65536 bytes"},
			{pair + "\x00\x00\n", "at line 2 contains bad data: binary data"},
		} {
			p := filepath.Join(dir, "strict")
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, errOut, code := l.ours(t, "ibtracert", "--ports-file", p); code != 255 || !strings.Contains(errOut, c.msg) {
				t.Errorf("ports-file %.40q: exit %d, stderr %q; want 255 and %q", c.text, code, errOut, c.msg)
			}
		}
	})
	t.Run("node-name-map", func(t *testing.T) {
		m := filepath.Join(t.TempDir(), "names")
		if err := os.WriteFile(m, []byte(fmt.Sprintf("0x%x \"first host\"\n", uint64(h1.GUID))), 0o644); err != nil {
			t.Fatal(err)
		}
		l.compareAll(t, "ibtracert", [][]string{{"--node-name-map", m, lids[0], lids[3]}, {"--node-name-map", m, "-m", "0xc000", lids[3], lids[0]}})
	})
	t.Run("from-here", func(t *testing.T) {
		// One address: from the local port (python-rdma). liveHost is H-2.
		here := strconv.Itoa(l.lid[liveHost])
		for _, args := range [][]string{{lids[0]}, {"-m", "0xc000", lids[0]}} {
			full := append(append([]string{}, args[:len(args)-1]...), here, args[len(args)-1])
			if l.broken(t, "ibtracert", full) {
				continue
			}
			out, errOut, code := l.ours(t, "ibtracert", args...)
			want, _, wantCode := l.c(t, "ibtracert", full...)
			if code != wantCode || out != want {
				t.Errorf("ibtracert %v: exit %d, want %d\n%s%s\nwant\n%s", args, code, wantCode, out, errOut, want)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		out, errOut, code := l.ours(t, "ibtracert", "--json", lids[0], strconv.Itoa(l.lid["H-4"]))
		var doc struct{ Result TraceResult }
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Result.Routes) != 1 {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		var kinds []string
		for _, h := range doc.Result.Routes[0].Hops {
			kinds = append(kinds, h.Kind+":"+h.Name)
		}
		if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "from:") || !strings.HasSuffix(got, "to:H-4") {
			t.Errorf("hops %s", got)
		}
	})
}

// FuzzPortsFileLine: no line makes the ports-file reader panic; a pair
// it takes is two words of the line before any comment.
func FuzzPortsFileLine(f *testing.F) {
	for _, s := range []string{"4 16", "# c", "", "  ", "1\t2 # c", "1 2 3", "0x0002c90300a00001 0x0002c90300c00011", "1#2 3", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		src, dst, ok, why := portsFileLine(line)
		if ok && why != "" || !ok && (src != "" || dst != "") {
			t.Fatalf("%q: %q %q %v %q", line, src, dst, ok, why)
		}
		if ok {
			before, _, _ := strings.Cut(line, "#")
			if w := strings.Fields(before); len(w) != 2 || w[0] != src || w[1] != dst {
				t.Fatalf("%q: read as %q %q", line, src, dst)
			}
		}
	})
}

// TestIBTracertLongRoutes compares ibtracert on a chain of 60 switches
// with a host at each end. From the far host the route back needs more
// than the 62 hops a directed route may grow to (ibtracert's
// extend_dpath), so the C tool and ours must stop at the same hop.
func TestIBTracertLongRoutes(t *testing.T) { eachRelease(t, testIBTracertLongRoutes) }

func testIBTracertLongRoutes(t *testing.T, p peers) {
	const switches = 60
	var b strings.Builder
	for i := 1; i <= switches; i++ {
		fmt.Fprintf(&b, "Switch 4 \"S-%d\"\n", i)
		if i == 1 {
			fmt.Fprintf(&b, "[1] %q[1]\n", liveHost)
		} else {
			fmt.Fprintf(&b, "[2] \"S-%d\"[3]\n", i-1)
		}
		if i == switches {
			b.WriteString("[1] \"H-1\"[1]\n")
		} else {
			fmt.Fprintf(&b, "[3] \"S-%d\"[2]\n", i+1)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Hca 1 %q\n[1] \"S-1\"[1]\n\nHca 1 \"H-1\"\n[1] \"S-%d\"[1]\n", liveHost, switches)
	tp, err := topo.Parse(strings.NewReader(b.String()), "chain")
	if err != nil {
		t.Fatal(err)
	}
	_, bed := serveTopo(t, tp, liveHost, p.diags)
	l := &live{p: p, sim: bed}
	for _, h := range []string{liveHost, "H-1"} {
		joinGroup(t, bed, h, ipoibBroadcast)
	}
	lid := func(node string) string {
		t.Helper()
		// "LID start 5 end 5"
		out, errOut, code := l.ours(t, "ibaddr", "-L", "-D", drToChainNode(node, switches))
		f := strings.Fields(out)
		if code != 0 || len(f) < 3 {
			t.Fatalf("LID of %s: exit %d\n%s%s", node, code, out, errOut)
		}
		return f[2]
	}
	near, far, mid, last := lid(liveHost), lid("H-1"), lid("S-30"), lid(fmt.Sprintf("S-%d", switches))
	// OpenSM programs the MFTs after the joins: wait for the group's route.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, errOut, code := l.ours(t, "ibtracert", "-m", "0xc000", near, far)
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("OpenSM did not program the MFTs of the chain (LIDs %s %s %s %s):\n%s%s", near, far, mid, last, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
	l.compareAll(t, "ibtracert", [][]string{
		{near, far}, {far, near}, {"-n", far, near}, {far, mid}, {far, last}, {mid, far}, {last, near},
		{"-m", "0xc000", near, far}, {"-m", "0xc000", far, near}, {"-n", "-m", "0xc000", near, far},
		{"-f", far, near},
	})
}

// drToChainNode is the directed route from liveHost to a node of the
// chain: a host, or "S-n".
func drToChainNode(node string, switches int) string {
	if node == liveHost {
		return "0"
	}
	hops := []string{"0", "1"} // to S-1
	n := switches
	if node != "H-1" {
		fmt.Sscanf(node, "S-%d", &n)
	}
	for i := 1; i < n; i++ {
		hops = append(hops, "3")
	}
	if node == "H-1" {
		hops = append(hops, "1")
	}
	return strings.Join(hops, ",")
}
