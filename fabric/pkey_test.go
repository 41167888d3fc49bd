package fabric

import (
	"errors"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

// TestWithPKeyIndex puts the far CA's port in partition 0x0001 only and
// the local port in both the default partition (index 0) and 0x0001
// (index 1): a PMA Get sent with index 0 finds no matching P_Key at the
// far port (IBA 10.9.3) and is dropped there; one sent WithPKeyIndex(1)
// is answered. SMPs are not partitioned and are answered either way.
func TestWithPKeyIndex(t *testing.T) {
	ctx, f := openShort(t)
	setPKeys := func(r mad.Route, keys ...uint16) {
		t.Helper()
		var tbl iba.PKeyTable
		copy(tbl.PKeyBlock[:], keys)
		if err := f.MAD.SubnSet(ctx, r, &tbl, 0); err != nil {
			t.Fatalf("setting the P_Key table of %v: %v", r, err)
		}
	}
	setPKeys(ibpath.NewDR(0).Route(), 0xFFFF, 0x8001)
	far := ibpath.NewDR(0, 1, 2).Route() // hca2, behind the switch's port 2
	setPKeys(far, 0x8001)
	var pi iba.PortInfo
	if err := f.MAD.SubnGet(ctx, far, &pi, 1); err != nil {
		t.Fatal(err)
	}
	lid := mad.Route{Addr: mad.Addr{LID: pi.LID}}

	var pc iba.PortCounters
	pc.PortSelect = 1
	if err := f.MAD.PerformanceGet(ctx, lid, &pc, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Errorf("PMA Get in the default partition: %v, want no answer", err)
	}
	inPart, err := New(ctx, mustAttach(t, f), WithPKeyIndex(1), WithTimeout(time.Second), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer inPart.Close()
	if err := inPart.MAD.PerformanceGet(ctx, lid, &pc, 0); err != nil {
		t.Errorf("PMA Get with P_Key index 1: %v", err)
	}
	var ni iba.NodeInfo
	if err := inPart.MAD.SubnGet(ctx, lid, &ni, 0); err != nil {
		t.Errorf("SMP by LID from the client with P_Key index 1: %v", err)
	}
}
