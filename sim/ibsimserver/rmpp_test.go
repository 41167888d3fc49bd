package ibsimserver

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

func rmppSeg(tid uint64, typ uint8, seg uint32) []byte {
	b := make([]byte, 256)
	b[0], b[1], b[2], b[3] = 1, 0x03, 2, 0x92
	binary.BigEndian.PutUint64(b[8:], tid)
	b[offRMPPVersion], b[offRMPPType], b[offRMPPFlags] = 1, typ, rmppFlagActive
	binary.BigEndian.PutUint32(b[offRMPPSeg:], seg)
	return b
}

// A client that never sent an RMPP MAD gets the first segment of each
// transfer once and nothing else of it; one that did gets everything.
func TestPassRMPP(t *testing.T) {
	c := &client{}
	plain := make([]byte, 256)
	plain[0], plain[1], plain[3] = 1, 0x04, 0x81
	for i, tc := range []struct {
		mad  []byte
		pass bool
	}{
		{plain, true},
		{rmppSeg(1, rmppTypeData, 1), true},
		{rmppSeg(1, rmppTypeData, 1), false}, // the retransmission
		{rmppSeg(1, rmppTypeData, 2), false},
		{rmppSeg(1, 3, 0), false}, // STOP
		{rmppSeg(1, 4, 0), false}, // ABORT
		{rmppSeg(2, rmppTypeData, 1), true},
		{plain, true},
		{rmppSeg(3, 0, 0), true}, // OpenSM's table under libumad2sim
		{rmppSeg(3, 0, 0), true},
	} {
		if got := c.passRMPP(tc.mad); got != tc.pass {
			t.Errorf("case %d: pass %v, want %v", i, got, tc.pass)
		}
	}
	c.rmpp.Store(true)
	for _, b := range [][]byte{rmppSeg(1, rmppTypeData, 1), rmppSeg(1, rmppTypeData, 2), rmppSeg(1, 4, 0)} {
		if !c.passRMPP(b) {
			t.Errorf("an RMPP client lost %x", b[24:32])
		}
	}
	if !rmppActive(rmppSeg(1, 2, 0)) || rmppActive(plain) || rmppActive(plain[:20]) {
		t.Error("rmppActive")
	}
}

// infiniband-diags' ibqueryerrors asks the SA for a PathRecord table and
// closes its SA agent, then reads counters for a while. libumad2sim has
// no RMPP: the SA's retransmissions of the unacknowledged first segment
// used to reach it after the close and crash it (a NULL dereference in
// libumad2sim); the server now gives such a client the first segment only.
func TestCToolsNoRMPP(t *testing.T) {
	testbed.Require(t)
	f, _, base := serve(t, true)
	// Slow PMAs keep the tool running past the SA's first retransmission
	// (1 s) and its abort (3 s).
	if err := f.SetLatency(sim.Latency{SMA: time.Millisecond, Agent: 250 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ib := &testbed.IBSim{SockName: base}
	start := time.Now()
	out, errOut, code := testbed.RunC(t, ib, "hca2", "ibqueryerrors")
	if code != 0 || !strings.Contains(out, "## Summary: 5 nodes checked") {
		t.Fatalf("ibqueryerrors: exit %d after %v\n%s\n%s", code, time.Since(start), out, errOut)
	}
	if time.Since(start) < 1500*time.Millisecond {
		t.Errorf("ibqueryerrors took %v: too fast to meet a retransmission", time.Since(start))
	}
}

// An SA table of many segments reaches package ibsim's client whole and
// without a stall with the latency model on: delayed segments are
// delivered in the order sent, so RMPP never waits out a timeout (1 s)
// for a segment overtaken by the next.
func TestRMPPTableWithLatency(t *testing.T) {
	top, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 40, Spines: 4, HostsPerLeaf: 32, Uplinks: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := topo.Write(&text, top); err != nil {
		t.Fatal(err)
	}
	f, _, base := serveTopo(t, text.String(), true)
	if err := f.SetLatency(sim.Latency{Hop: time.Microsecond, SMA: 20 * time.Microsecond, Agent: 20 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: base, Node: "hca2"})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr)
	defer mc.Close()
	lp, err := tr.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, ca, _ := f.Topology().Counts()
	for i := 0; i < 5; i++ {
		start := time.Now()
		recs, err := sa.GetTable(ctx, sa.New(mc), &iba.PathRecord{SGID: iba.MakeGID(lp.GIDPrefix, lp.PortGUID), NumbPath: 1, Reversible: 1})
		if el := time.Since(start); err != nil || len(recs) != s+ca || el > 900*time.Millisecond {
			t.Fatalf("try %d: %d PathRecords of %d in %v: %v", i, len(recs), s+ca, el, err)
		}
	}
}
