package mad_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// TestClientKeys checks that WithMKey and WithSMKey fill the keys of the
// SMPs and SA requests whose route has none, and that a route's own key
// wins.
func TestClientKeys(t *testing.T) {
	var mu sync.Mutex
	var sent [][]byte
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		mu.Lock()
		sent = append(sent, append([]byte(nil), req.MAD...))
		mu.Unlock()
		return []*mad.Packet{madtest.Reply(req, 0, make([]byte, 64))}
	})
	c := newClient(t, tr, mad.WithMKey(0x1122334455667788), mad.WithSMKey(0xAABB))
	ctx := testCtx(t)
	var ni iba.NodeInfo
	if err := c.SubnGet(ctx, lid(5), &ni, 0); err != nil {
		t.Fatal(err)
	}
	own := lid(5)
	own.MKey = 7
	if err := c.SubnGet(ctx, own, &ni, 0); err != nil {
		t.Fatal(err)
	}
	dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1}}}
	if err := c.SubnGet(ctx, dr, &ni, 0); err != nil {
		t.Fatal(err)
	}
	var nr iba.NodeRecord
	if _, err := c.Do(ctx, mad.Request{Target: lid(1), Class: iba.ClassSubnAdm, Method: iba.MethodGet, AttrID: nr.Desc().AttrID}); err != nil {
		t.Fatal(err)
	}
	if c.MKey() != 0x1122334455667788 {
		t.Errorf("MKey() = %#x", c.MKey())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 4 {
		t.Fatalf("%d MADs sent, want 4", len(sent))
	}
	for i, want := range []uint64{0x1122334455667788, 7, 0x1122334455667788} {
		if got := binary.BigEndian.Uint64(sent[i][24:]); got != want {
			t.Errorf("SMP %d: M_Key %#x, want %#x", i, got, want)
		}
	}
	if got := binary.BigEndian.Uint64(sent[3][36:]); got != 0xAABB {
		t.Errorf("SA request: SM_Key %#x, want 0xaabb", got)
	}
}

// TestMKeySuspect checks which failures MKeySuspect blames on an M_Key:
// unanswered SMPs, Sets above all, and nothing else.
func TestMKeySuspect(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := newClient(t, tr, mad.WithTimeout(time.Millisecond), mad.WithRetries(1), mad.WithMKey(9))
	ctx := testCtx(t)
	var pi iba.PortInfo
	getErr := c.SubnGet(ctx, lid(3), &pi, 0)
	setErr := c.SubnSet(ctx, lid(3), &pi, 0)
	var pc iba.PortCounters
	gmpErr := c.PerformanceGet(ctx, lid(3), &pc, 0)
	for _, tc := range []struct {
		name           string
		err            error
		suspect, isSet bool
	}{
		{"SubnGet", getErr, true, false},
		{"SubnSet", setErr, true, true},
		{"wrapped SubnSet", fmt.Errorf("setting the port: %w", setErr), true, true},
		{"PerformanceGet", gmpErr, false, false},
		{"other", errors.New("no"), false, false},
	} {
		suspect, set, key := mad.MKeySuspect(tc.err)
		if suspect != tc.suspect || set != tc.isSet || (suspect && key != 9) {
			t.Errorf("%s (%v): suspect %v set %v key %d, want %v %v 9", tc.name, tc.err, suspect, set, key, tc.suspect, tc.isSet)
		}
	}
}

// TestClientPKeyIndex checks that WithPKeyIndex sets the P_Key index of
// GMPs whose route has none, that a route's own index wins, and that SMPs
// keep index 0.
func TestClientPKeyIndex(t *testing.T) {
	var mu sync.Mutex
	var sent []uint16
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		mu.Lock()
		sent = append(sent, req.Addr.PKeyIndex)
		mu.Unlock()
		return []*mad.Packet{madtest.Reply(req, 0, make([]byte, 64))}
	})
	c := newClient(t, tr, mad.WithPKeyIndex(3))
	ctx := testCtx(t)
	var pc iba.PortCounters
	if err := c.PerformanceGet(ctx, lid(5), &pc, 0); err != nil {
		t.Fatal(err)
	}
	own := lid(5)
	own.Addr.PKeyIndex = 7
	if err := c.PerformanceGet(ctx, own, &pc, 0); err != nil {
		t.Fatal(err)
	}
	var ni iba.NodeInfo
	if err := c.SubnGet(ctx, lid(5), &ni, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1}}}, &ni, 0); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(sent) != "[3 7 0 0]" {
		t.Errorf("P_Key indices sent: %v, want [3 7 0 0]", sent)
	}
}

// TestUnanswered: the request of a timed-out or dropped RPC, wrapped or
// not; nothing for any other error.
func TestUnanswered(t *testing.T) {
	req := []byte{1, 0x81, 1, 1}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&mad.TimeoutError{Request: req}, true},
		{fmt.Errorf("reading: %w", &mad.DroppedError{Request: req}), true},
		{errors.New("other"), false},
		{nil, false},
	} {
		if got := mad.Unanswered(tc.err); (got != nil) != tc.want || (got != nil && got[1] != 0x81) {
			t.Errorf("Unanswered(%v) = %x", tc.err, got)
		}
	}
}
