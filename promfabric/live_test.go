package promfabric

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/perf"
)

// cCounters runs the C perfquery (with extra options) on one port and
// parses its Name:....value lines.
func cCounters(t *testing.T, sim *testbed.IBSim, lid, port int, extra ...string) map[string]uint64 {
	t.Helper()
	args := append(append([]string{"perfquery"}, extra...), strconv.Itoa(lid), strconv.Itoa(port))
	out, errOut, code := testbed.RunC(t, sim, "H-2", args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	m := map[string]uint64{}
	for _, line := range strings.Split(out, "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimLeft(val, "."), 0, 64)
		if err == nil {
			m[name] = v
		}
	}
	return m
}

// The exported counters equal what the C perfquery reads on ibsim: error
// counters (set through ibsim's console) exactly, data and packet counters
// between a perfquery -x reading before the scrape and one after it (the
// reads' own MADs move them).
func TestValuesEqualCPerfquery(t *testing.T) {
	ft := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}
	tf, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	top, err := tf.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := testbed.StartIBSim(t, top)
	testbed.StartOpenSM(t, sim, "H-1")
	for _, cmd := range []string{
		`PerformanceSet "H-3"[1] PortCounters.SymbolErrorCounter=5`,
		`PerformanceSet "H-3"[1] PortCounters.PortRcvErrors=7`,
		`PerformanceSet "S-leaf-1"[1] PortCounters.LinkDownedCounter=2`,
		`PerformanceSet "S-leaf-2"[3] PortCounters.PortXmitDiscards=9`,
		`PerformanceSet "S-spine-1"[2] PortCounters.VL15Dropped=4`,
	} {
		if out, err := sim.Console(cmd); err != nil || strings.Contains(out, "#") {
			t.Fatalf("%s: %q %v", cmd, out, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: "H-2"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fabric.New(ctx, tr, fabric.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := newExporter(t, f, Options{})
	type portID struct{ lid, port int }
	var ports []portID
	keys := map[portID]string{}
	for _, nv := range e.topo.nodes {
		for _, pv := range nv.ports {
			if pv.num == 0 || !pv.state || pv.portState != 4 {
				continue // ibsim's PMA reads no port 0 of a CA, nor ports without a link
			}
			id := portID{int(pv.lid), int(pv.num)}
			ports = append(ports, id)
			keys[id] = portKey(nv.guid, int(pv.num))
		}
	}
	if len(ports) < 10 {
		t.Fatalf("%d active ports", len(ports))
	}
	read := func() (map[portID]map[string]uint64, map[portID]map[string]uint64) {
		plain, ext := map[portID]map[string]uint64{}, map[portID]map[string]uint64{}
		for _, p := range ports {
			plain[p] = cCounters(t, sim, p.lid, p.port)
			ext[p] = cCounters(t, sim, p.lid, p.port, "-x")
		}
		return plain, ext
	}
	beforePlain, beforeExt := read()
	got := parse(t, scrapeText(t, e, ""))
	afterPlain, afterExt := read()
	errorsSeen := 0
	for _, p := range ports {
		key := keys[p]
		for k := perf.Counter(0); k < perf.NumCounters; k++ {
			name := counterFamilies[k].fullName()
			v, ok := got[name][key]
			if k.IsError() {
				want, has := beforePlain[p][k.String()]
				if k == perf.PortXmitWait || k == perf.QP1Dropped {
					// Reserved unless the PMA says it counts them.
					if ok && (!has || v != float64(want)) {
						t.Errorf("%s %s = %v, perfquery %d (%v)", name, key, v, want, has)
					}
					continue
				}
				if !ok || !has || v != float64(want) || afterPlain[p][k.String()] != want {
					t.Errorf("%s %s = %v (%v), perfquery %d (%v) then %d", name, key, v, ok, want, has, afterPlain[p][k.String()])
				}
				if want != 0 {
					errorsSeen++
				}
				continue
			}
			lo, has := beforeExt[p][k.String()]
			hi := afterExt[p][k.String()]
			if !has {
				if ok {
					t.Errorf("%s %s exported, perfquery -x has no %s", name, key, k)
				}
				continue
			}
			lo, hi = perf.Octets(k, lo), perf.Octets(k, hi)
			if !ok || v < float64(lo) || v > float64(hi) {
				t.Errorf("%s %s = %v, perfquery -x %d before and %d after", name, key, v, lo, hi)
			}
		}
	}
	if errorsSeen != 5 {
		t.Errorf("%d of the 5 counters set through ibsim's console seen", errorsSeen)
	}
	if got["ibfabric_scrape_mads_failed"][""] != 0 {
		t.Errorf("%v reads failed", got["ibfabric_scrape_mads_failed"][""])
	}
	t.Logf("%d ports compared", len(ports))
}
