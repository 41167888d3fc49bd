package diags

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// smaClient is a MAD client on the live fabric for the tests' own SMPs.
func smaClient(t *testing.T, l *live) *mad.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: l.sim.SockName, Node: liveHost})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(2*time.Second))
	t.Cleanup(func() { mc.Close() })
	return mc
}

// TestIBPortStateLive compares ibportstate with the C ibportstate on the
// ibsim floor: queries of CA and switch ports (with the peer port of an
// active switch port), bad command lines, and every change ibsim's SMA
// keeps, each made by the C tool and by ours from the same starting state
// on a switch port, then queried.
func TestIBPortStateLive(t *testing.T) { eachRelease(t, testIBPortStateLive) }

func testIBPortStateLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sw, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["H-3"])
	spine := l.dr["S-spine-1"]
	l.compareAll(t, "ibportstate", [][]string{
		{"-D", "0,1", "1"}, {"-D", "0,1", "0"}, {"-D", "0", "1"}, {sw, "0"}, {ca, "1"}, {"-K", ca, "1"},
		{"-D", spine, "1"}, {"-D", l.dr["S-leaf-2"], "3"}, {sw, "1", "query"},
		{"-G", guidOf(l, "H-4"), "1"},
		// A switch port by LID: the peer is read on a LID-then-DR route,
		// which ibsim does not carry; both fail there.
		{"-t", "200", sw, "1"},
		// Command lines refused before any change.
		{sw, "1", "frob"}, {sw, "1", "speed"}, {sw, "1", "speed", "16"}, {sw, "1", "espeed", "32"},
		{sw, "1", "width", "32"}, {sw, "1", "vls", "0"}, {sw, "1", "mtu", "6"}, {sw, "1", "lid", "0xc000"},
		{sw, "1", "smlid", "0"}, {sw, "1", "lmc", "8"}, {sw, "1", "fdr10", "2"}, {sw, "1", "mkeylease", "70000"},
		{sw, "1", "mkeyprot", "4"}, {sw, "1", "enable", "disable"}, {"-D", "0,1", "3", "mkey", "1"},
		{"-t", "200", "900", "1"}, {"onlyonearg"},
	})

	// Changes: the switch port that leads to H-3's second port.
	leaf, port, _ := l.f.Peer("H-3", 2)
	dr := l.dr[leaf]
	mc := smaClient(t, l)
	target := ibpath.NewDR(func() []byte {
		var hops []byte
		for _, h := range strings.Split(dr, ",") {
			n, _ := strconv.Atoi(h)
			hops = append(hops, byte(n))
		}
		return hops
	}()...)
	ctx := context.Background()
	var orig iba.PortInfo
	if err := mc.SubnGet(ctx, target, &orig, uint32(port)); err != nil {
		t.Fatal(err)
	}
	var origExt iba.MlnxExtPortInfo
	if err := mc.SubnGet(ctx, target, &origExt, uint32(port)); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		t.Helper()
		pi := orig
		pi.PortState, pi.PortPhysicalState = 0, iba.PhysPortState(5) // LinkUp, as it started
		if err := mc.SubnSet(ctx, target, &pi, uint32(port)|1<<31); err != nil {
			t.Fatal(err)
		}
		ext := origExt
		if err := mc.SubnSet(ctx, target, &ext, uint32(port)); err != nil {
			t.Fatal(err)
		}
	}
	pn := strconv.Itoa(port)
	for _, op := range [][]string{
		{"disable"}, {"enable"}, {"reset"}, {"off"}, {"on"}, {"speed", "1"}, {"width", "1"}, {"speed", "2", "width", "1"},
		{"vls", "2"}, {"mtu", "3"}, {"lid", "0x77"}, {"smlid", "5"}, {"lmc", "2"}, {"fdr10", "1"},
		{"mkeylease", "60"}, {"query", "lmc", "1"},
	} {
		args := append([]string{"-D", dr, pn}, op...)
		restore()
		cOut, cErr, cCode := l.c(t, "ibportstate", args...)
		// A disabled port passes no SMPs: its peer is not there.
		query := []string{"-t", "200", "-D", dr, pn}
		cqOut, cqErr, cqCode := l.c(t, "ibportstate", query...)
		restore()
		out, errOut, code := l.ours(t, "ibportstate", args...)
		qOut, qErr, qCode := l.ours(t, "ibportstate", query...)
		l.check(t, "ibportstate", args, cOut, cErr, cCode, out, errOut, code, nil)
		l.check(t, "ibportstate (query after)", append(query, op...), cqOut, cqErr, cqCode, qOut, qErr, qCode, nil)
	}
	// "on" of a disabled port enables it.
	restore()
	l.ours(t, "ibportstate", "-D", dr, pn, "disable")
	out, _, code := l.ours(t, "ibportstate", "-D", dr, pn, "on")
	if code != 0 || !strings.Contains(out, "After PortInfo set:") || !strings.Contains(out, "PhysLinkState:...................Polling") {
		t.Errorf("on after disable: exit %d\n%s", code, out)
	}
	restore()
	out, _, _ = l.ours(t, "ibportstate", "--json", "-D", dr, pn, "speed", "1")
	restore()
	if !strings.Contains(out, `"op": "query"`) || !strings.Contains(out, `"speed": 1`) || !strings.Contains(out, `"after"`) {
		t.Errorf("JSON of a change:\n%s", out)
	}
}

func TestIBPortStateOps(t *testing.T) {
	for _, tc := range []struct {
		args []string
		op   string
		err  string
	}{
		{nil, "query", ""},
		{[]string{"enable", "speed", "5", "width", "0xff"}, "enable", ""},
		{[]string{"mkey", "0x12345678abcdef00"}, "query", ""},
		{[]string{"mkey", "secret"}, "", "Bad new M_Key"},
		{[]string{"arm", "down"}, "", "down only one of"},
		{[]string{"Enable"}, "", "invalid operation: Enable"},
	} {
		op, _, err := parsePortOps(tc.args)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) || op != tc.op {
			t.Errorf("%v: op %q, err %v", tc.args, op, err)
		}
	}
	if !mlnxExtPortInfoSupported(0x2c9, 0xcb20) || !mlnxExtPortInfoSupported(0x119f, 0x1bd3) || mlnxExtPortInfoSupported(0x2c9, 0) {
		t.Error("MlnxExtPortInfo support by device ID")
	}
}

// FuzzIBPortStateOps: ibportstate's operations never panic the reader; it
// takes one state op at most and only values in the C tool's ranges.
func FuzzIBPortStateOps(f *testing.F) {
	for _, s := range []string{
		"", "query", "enable", "disable reset", "speed 15", "speed 16", "espeed 31", "fdr10 1", "width 255", "width 32",
		"vls 5", "vls 0", "mtu 3", "lid 0xbfff", "lid 0xc000", "smlid 1", "lmc 7", "mkey 0xffffffffffffffff", "mkey x",
		"mkeylease 65535", "mkeyprot 3", "speed", "arm active", "bogus", "down lid 5 lmc 1",
	} {
		f.Add(s)
	}
	limit := map[string]uint64{"speed": 15, "espeed": 31, "fdr10": 1, "vls": 5, "mtu": 5, "lid": 0xbfff, "smlid": 0xbfff, "lmc": 7, "mkeylease": 0xffff, "mkeyprot": 3}
	f.Fuzz(func(t *testing.T, s string) {
		op, values, err := parsePortOps(fuzzWords(s, 12))
		if err != nil {
			return
		}
		if !contains(portStateOps, op) {
			t.Fatalf("%q: op %q", s, op)
		}
		for k, v := range values {
			if l, ok := limit[k]; ok && v > l || k == "width" && v > 31 && v != 255 {
				t.Fatalf("%q: %s %d out of range", s, k, v)
			}
		}
	})
}

// TestIBPortStatePeerByLID: the peer of a switch port given by LID is read
// on a route LID-routed to the switch and directed one hop from there
// (DrSLID the local LID). ibsim 0.10 does not carry such a route;
// fabricsim does, and there the C tool and ours print the same.
func TestIBPortStatePeerByLID(t *testing.T) {
	testbed.Require(t)
	b := newLostBed(t, "fattree:k=4,n=2")
	ib := &testbed.IBSim{SockName: os.Getenv("IBSIM_SOCKNAME")}
	_, _, lid, _, err := b.f.PortState("ft-l0-0", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{fmt.Sprint(lid), "1"}, {fmt.Sprint(lid), "5", "query"}} {
		cOut, cErr, cCode := testbed.RunC(t, ib, b.node, append([]string{"ibportstate"}, args...)...)
		out, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.node, "ibportstate"}, args...)...)
		if cCode != 0 || !strings.Contains(cOut, "Peer PortInfo:") {
			t.Fatalf("C ibportstate %v: exit %d\n%s%s", args, cCode, cOut, cErr)
		}
		if code != cCode || out != cOut {
			t.Errorf("ibportstate %v: exit %d, C %d\nours:\n%s%s\nC:\n%s", args, code, cCode, out, errOut, cOut)
		}
	}
}
