package fabric

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

// TestWithMKey protects a switch port with an M_Key at levels 1, 2 and 3
// (IBA 14.2.4.1) and checks what a fabric opened without the key and one
// opened WithMKey can do: without it Sets go unanswered at every level and
// Gets from level 2 (level 1 answers them with the key hidden); with it
// everything is answered and the key shows.
func TestWithMKey(t *testing.T) {
	ctx, f := openShort(t)
	const key = 0xFEEDC0DE
	sw := ibpath.NewDR(0, 1).Route() // the leaf switch of the local port
	keyed, err := New(ctx, mustAttach(t, f), WithMKey(key), WithTimeout(20*time.Millisecond), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	for level := uint8(1); level <= 3; level++ {
		var pi iba.PortInfo
		if err := keyed.MAD.SubnGet(ctx, sw, &pi, 0); err != nil {
			t.Fatalf("level %d: Get with the key: %v", level, err)
		}
		pi.MKey, pi.MKeyProtectBits = key, level
		pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
		if err := keyed.MAD.SubnSet(ctx, sw, &pi, 0); err != nil {
			t.Fatalf("level %d: setting the M_Key: %v", level, err)
		}
		var got iba.PortInfo
		err := f.MAD.SubnGet(ctx, sw, &got, 0)
		switch {
		case level == 1 && (err != nil || got.MKey != 0):
			t.Errorf("level 1: Get without the key: %v, M_Key %#x; want an answer hiding the key", err, got.MKey)
		case level > 1 && !errors.Is(err, mad.ErrTimeout):
			t.Errorf("level %d: Get without the key: %v, want no answer", level, err)
		}
		if level > 1 {
			if suspect, set, _ := mad.MKeySuspect(err); !suspect || set {
				t.Errorf("level %d: MKeySuspect(%v) = %v, %v", level, err, suspect, set)
			}
		}
		got = pi
		got.PortState, got.PortPhysicalState = 0, 0
		err = f.MAD.SubnSet(ctx, sw, &got, 0)
		if suspect, set, _ := mad.MKeySuspect(err); !errors.Is(err, mad.ErrTimeout) || !suspect || !set {
			t.Errorf("level %d: Set without the key: %v (M_Key suspect %v, set %v), want no answer", level, err, suspect, set)
		}
		got = iba.PortInfo{}
		if err := keyed.MAD.SubnGet(ctx, sw, &got, 0); err != nil || got.MKey != key || got.MKeyProtectBits != level {
			t.Errorf("level %d: Get with the key: %v, M_Key %#x, level %d", level, err, got.MKey, got.MKeyProtectBits)
		}
	}
}

// openShort opens a switch and two CAs in process, with one try of 20 ms
// per MAD, for tests that expect some MADs to go unanswered; both close
// when the test ends.
func openShort(t *testing.T) (context.Context, *Fabric) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	f, err := Open(ctx, "sim:fattree:k=2,n=1", WithTimeout(20*time.Millisecond), WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return ctx, f
}

func mustAttach(t *testing.T, f *Fabric) mad.Transport {
	t.Helper()
	// The node Open attached f to, as Local names it ("sim:hca1/1").
	node, _, _ := strings.Cut(strings.TrimPrefix(f.Local.Name, "sim:"), "/")
	tr, err := f.Sim.Attach(node, int(f.Local.PortNum))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
