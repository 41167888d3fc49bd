package mad_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

func lid(l uint16) mad.Route { return mad.Route{Addr: mad.Addr{LID: l}} }

// nodeInfoResponder answers SubnGet(NodeInfo) with a NodeGUID derived from
// the DLID, after a random delay so that replies overtake each other.
func nodeInfoResponder(req *mad.Packet) []*mad.Packet {
	time.Sleep(time.Duration(rand.Intn(500)) * time.Microsecond)
	ni := iba.NodeInfo{NodeType: iba.NodeTypeCA, NumPorts: 1, NodeGUID: iba.GUID(0x1000 + uint64(req.Addr.LID)), LocalPortNum: 1}
	b := make([]byte, 64)
	_ = ni.MarshalTo(b)
	return []*mad.Packet{madtest.Reply(req, 0, b)}
}

func newClient(t *testing.T, tr mad.Transport, opts ...mad.Option) *mad.Client {
	t.Helper()
	c := mad.NewClient(tr, opts...)
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestConcurrentCallersGetTheirOwnReplies(t *testing.T) {
	tr := madtest.New(nodeInfoResponder, madtest.WithTIDRewrite())
	c := newClient(t, tr)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				l := uint16(1 + g*100 + i)
				var ni iba.NodeInfo
				if err := c.SubnGet(ctx, lid(l), &ni, 0); err != nil {
					errs <- err
					return
				}
				if want := iba.GUID(0x1000 + uint64(l)); ni.NodeGUID != want {
					errs <- fmt.Errorf("goroutine %d: LID %d got NodeGUID %v, want %v", g, l, ni.NodeGUID, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := tr.Sent(); got != 64*40 {
		t.Errorf("sent %d MADs, want %d (no retries were needed)", got, 64*40)
	}
}

func TestTimeoutRetriesThenFails(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	var events []mad.TraceKind
	var mu sync.Mutex
	c := newClient(t, tr, mad.WithTimeout(20*time.Millisecond), mad.WithRetries(3), mad.WithTrace(func(e mad.TraceEvent) {
		mu.Lock()
		events = append(events, e.Kind)
		mu.Unlock()
	}))
	var ni iba.NodeInfo
	target := mad.Route{Addr: mad.Addr{LID: 7}, Name: "LID 7 (H-1)"}
	err := c.SubnGet(testCtx(t), target, &ni, 0)
	var te *mad.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("got %v, want a TimeoutError", err)
	}
	if te.Tries != 3 || te.Target != "LID 7 (H-1)" || te.RPC != "SubnGet" || te.Attr != "NodeInfo" {
		t.Errorf("TimeoutError = %+v", te)
	}
	if !strings.Contains(err.Error(), "LID 7 (H-1)") {
		t.Errorf("message %q does not name the target", err)
	}
	if req, _ := te.Packets(); len(req) != mad.Size {
		t.Errorf("timeout error carries %d request bytes", len(req))
	}
	if tr.Sent() != 3 {
		t.Errorf("sent %d times, want 3", tr.Sent())
	}
	mu.Lock()
	defer mu.Unlock()
	want := []mad.TraceKind{mad.TraceSend, mad.TraceTimeout, mad.TraceRetry, mad.TraceSend, mad.TraceTimeout, mad.TraceRetry, mad.TraceSend, mad.TraceTimeout}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("trace %v, want %v", events, want)
	}
}

func TestPerRouteTimeoutAndTries(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := newClient(t, tr, mad.WithTimeout(time.Hour))
	r := lid(3)
	r.Timeout, r.Tries = 10*time.Millisecond, 5
	start := time.Now()
	err := c.SubnGet(testCtx(t), r, &iba.NodeInfo{}, 0)
	var te *mad.TimeoutError
	if !errors.As(err, &te) || te.Tries != 5 || te.Timeout != 10*time.Millisecond {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v: the route's timeout was not used", time.Since(start))
	}
}

// TestTransportDrop: tries the transport reports dropped end at once;
// when all were, the RPC fails with a DroppedError (which still matches
// ErrTimeout), not a timeout of tries it never waited for.
func TestTransportDrop(t *testing.T) {
	drop := errors.New("ibsim: status 110, MAD dropped")
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet { return []*mad.Packet{madtest.DroppedReport(req, drop)} })
	c := newClient(t, tr, mad.WithTimeout(time.Hour))
	start := time.Now()
	err := c.SubnGet(testCtx(t), lid(4), &iba.NodeInfo{}, 0)
	var de *mad.DroppedError
	if !errors.As(err, &de) || !errors.Is(err, drop) || !errors.Is(err, mad.ErrDropped) || !errors.Is(err, mad.ErrTimeout) || de.Tries != 3 {
		t.Fatalf("got %v, want a DroppedError of 3 tries wrapping the drop", err)
	}
	if strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), "dropped on each of 3 tries") {
		t.Errorf("message %q", err)
	}
	if tr.Sent() != 3 || time.Since(start) > 10*time.Second {
		t.Errorf("sent %d in %v: each report should end its try at once", tr.Sent(), time.Since(start))
	}

	// One try dropped, the others unanswered: a timeout after all.
	var n atomic.Int32
	tr = madtest.New(func(req *mad.Packet) []*mad.Packet {
		if n.Add(1) == 1 {
			return []*mad.Packet{madtest.DroppedReport(req, drop)}
		}
		return nil
	})
	c = newClient(t, tr, mad.WithTimeout(10*time.Millisecond))
	err = c.SubnGet(testCtx(t), lid(4), &iba.NodeInfo{}, 0)
	var te *mad.TimeoutError
	if !errors.As(err, &te) || errors.Is(err, mad.ErrDropped) {
		t.Errorf("a drop then two waits: %v, want a TimeoutError", err)
	}
}

// TestRangeOptions: a timeout or try count out of range fails every RPC
// with a RangeError instead of silently becoming the default.
func TestRangeOptions(t *testing.T) {
	answer := madtest.New(func(req *mad.Packet) []*mad.Packet { return nil })
	ms := int64(9300000000000) // ibtool -t 9300000000000: milliseconds that overflow a Duration
	for _, o := range []mad.Option{mad.WithTimeout(-time.Second), mad.WithTimeout(2 * mad.MaxTimeout),
		mad.WithTimeout(time.Duration(ms) * time.Millisecond), mad.WithRetries(-1), mad.WithRetries(mad.MaxTries + 1), mad.WithBusyBackoff(-1)} {
		c := newClient(t, answer, o)
		if err := c.SubnGet(testCtx(t), lid(4), &iba.NodeInfo{}, 0); !errors.Is(err, mad.ErrRange) {
			t.Errorf("%v", err)
		}
	}
	c := newClient(t, answer)
	rt := mad.Route{Addr: mad.Addr{LID: 4}, Timeout: -time.Millisecond}
	if err := c.SubnGet(testCtx(t), rt, &iba.NodeInfo{}, 0); !errors.Is(err, mad.ErrRange) {
		t.Errorf("Route.Timeout -1ms: %v", err)
	}
	rt = mad.Route{Addr: mad.Addr{LID: 4}, Tries: -2}
	if err := c.SubnGet(testCtx(t), rt, &iba.NodeInfo{}, 0); !errors.Is(err, mad.ErrRange) {
		t.Errorf("Route.Tries -2: %v", err)
	}
}

// lossy drops a share of packets, deterministically seeded.
func lossy(seed int64, share float64) func(*mad.Packet) bool {
	var mu sync.Mutex
	r := rand.New(rand.NewSource(seed))
	return func(*mad.Packet) bool {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64() < share
	}
}

func TestDropsRetryAndSucceedOrTimeOut(t *testing.T) {
	tr := madtest.New(nodeInfoResponder, madtest.WithDrop(lossy(1, 0.3)))
	c := newClient(t, tr, mad.WithTimeout(15*time.Millisecond), mad.WithRetries(3))
	ctx := testCtx(t)
	var ok, timedOut atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 200; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var ni iba.NodeInfo
			err := c.SubnGet(ctx, lid(uint16(g+1)), &ni, 0)
			switch {
			case err == nil && ni.NodeGUID == iba.GUID(0x1000+uint64(g+1)):
				ok.Add(1)
			case errors.Is(err, mad.ErrTimeout):
				timedOut.Add(1)
			default:
				t.Errorf("LID %d: %v (NodeGUID %v)", g+1, err, ni.NodeGUID)
			}
		}(g)
	}
	wg.Wait()
	// 30% loss of requests: a try fails with p=0.3, all three with 0.027.
	if ok.Load() < 150 {
		t.Errorf("%d of 200 succeeded, %d timed out: retries are not working", ok.Load(), timedOut.Load())
	}
	if tr.Sent() <= 200 {
		t.Errorf("sent %d: nothing was retried", tr.Sent())
	}
	t.Logf("30%% loss: %d succeeded, %d timed out, %d sends", ok.Load(), timedOut.Load(), tr.Sent())
}

// TestBusyIsRetried: through Do and through Start alike.
func TestBusyIsRetried(t *testing.T) {
	for _, async := range []bool{false, true} {
		var n atomic.Int32
		tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
			if n.Add(1) <= 2 {
				return []*mad.Packet{madtest.Reply(req, mad.StatusBusy, nil)}
			}
			return nodeInfoResponder(req)
		})
		c := newClient(t, tr, mad.WithBusyBackoff(time.Millisecond))
		rep, err := rpc(t, c, async, nodeInfoReq(9))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Tries != 3 || rep.Status != 0 || nodeGUIDOf(t, rep) != 0x1009 {
			t.Errorf("async %v: tries %d status %#x, want 3 and 0", async, rep.Tries, rep.Status)
		}

		busy := madtest.New(func(req *mad.Packet) []*mad.Packet {
			return []*mad.Packet{madtest.Reply(req, mad.StatusBusy, nil)}
		})
		c2 := newClient(t, busy, mad.WithBusyBackoff(time.Millisecond))
		rep, err = rpc(t, c2, async, nodeInfoReq(9))
		var se *mad.StatusError
		if !errors.As(err, &se) || !se.Busy() || !errors.Is(err, mad.ErrBusy) || rep == nil || rep.Tries != 3 {
			t.Fatalf("async %v: got %v (reply %v), want a busy StatusError with its reply", async, err, rep)
		}
		if busy.Sent() != 3 {
			t.Errorf("async %v: sent %d, want 3", async, busy.Sent())
		}
	}
}

func TestStatusErrorDecoding(t *testing.T) {
	cases := []struct {
		status uint16
		class  iba.Class
		want   error
		text   string
	}{
		{mad.StatusRedirect, iba.ClassPerfMgt, mad.ErrRedirect, "REDIRECT"},
		{mad.StatusBadVersion, iba.ClassPerfMgt, mad.ErrBadVersion, "Bad version"},
		{mad.StatusMethodUnsupported, iba.ClassSubnMgt, mad.ErrMethodUnsupported, "Unsupported method"},
		{mad.StatusMethodAttrUnsupported, iba.ClassSubnMgt, mad.ErrMethodAttrUnsupported, "Unsupported method/attribute combination"},
		{mad.StatusInvalidField, iba.ClassPerfMgt, mad.ErrInvalidField, "Invalid attribute or modifier value"},
		{mad.SAStatus(mad.SANoResources), iba.ClassSubnAdm, mad.ErrSANoResources, "SA ERR_NO_RESOURCES"},
		{mad.SAStatus(mad.SAReqInvalid), iba.ClassSubnAdm, mad.ErrSAReqInvalid, "SA ERR_REQ_INVALID"},
		{mad.SAStatus(mad.SANoRecords), iba.ClassSubnAdm, mad.ErrSANoRecords, "SA ERR_NO_RECORDS"},
		{mad.SAStatus(mad.SATooManyRecords), iba.ClassSubnAdm, mad.ErrSATooManyRecords, "SA ERR_TOO_MANY_RECORDS"},
		{mad.SAStatus(mad.SAReqInvalidGID), iba.ClassSubnAdm, mad.ErrSAReqInvalidGID, "SA ERR_REQ_INVALID_GID"},
		{mad.SAStatus(mad.SAReqInsufficientComponents), iba.ClassSubnAdm, mad.ErrSAReqInsufficientComponents, "SA ERR_REQ_INSUFFICIENT_COMPONENTS"},
		{mad.SAStatus(mad.SAReqDenied), iba.ClassSubnAdm, mad.ErrSAReqDenied, "SA ERR_REQ_DENIED"},
		{mad.SAStatus(9), iba.ClassPerfMgt, nil, "class specific error 9"},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			tr := madtest.New(func(req *mad.Packet) []*mad.Packet { return []*mad.Packet{madtest.Reply(req, tc.status, nil)} })
			c := newClient(t, tr)
			var err error
			switch tc.class {
			case iba.ClassSubnAdm:
				err = c.SubnAdmGet(testCtx(t), lid(1), &iba.NodeRecord{LID: 3}, 1)
			case iba.ClassPerfMgt:
				err = c.PerformanceGet(testCtx(t), lid(2), &iba.PortCounters{PortSelect: 1}, 0)
			default:
				err = c.SubnGet(testCtx(t), lid(2), &iba.NodeInfo{}, 0)
			}
			var se *mad.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a StatusError", err)
			}
			if se.Status != tc.status || se.Class != tc.class {
				t.Errorf("status %#x class %v, want %#x %v", se.Status, se.Class, tc.status, tc.class)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("errors.Is(%v, %v) is false", err, tc.want)
			}
			for _, other := range []error{mad.ErrSANoRecords, mad.ErrBadVersion, mad.ErrBusy} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("also matches %v", other)
				}
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("message %q lacks %q", err, tc.text)
			}
			req, rep := se.Packets()
			if len(req) != mad.Size || len(rep) != mad.Size {
				t.Errorf("packets: %d and %d bytes", len(req), len(rep))
			}
		})
	}
}

func TestSMPDirectionBitIsNotAnError(t *testing.T) {
	tr := madtest.New(nodeInfoResponder)
	c := newClient(t, tr)
	dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1, 4}}}
	var ni iba.NodeInfo
	if err := c.SubnGet(testCtx(t), dr, &ni, 0); err != nil {
		t.Fatal(err)
	}
}

func TestDirectedRouteSMPLayout(t *testing.T) {
	var got []byte
	var addr mad.Addr
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		got, addr = req.MAD, req.Addr
		return nodeInfoResponder(req)
	})
	c := newClient(t, tr)
	dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1, 4}}, MKey: 0x1122}
	if err := c.SubnGet(testCtx(t), dr, &iba.NodeInfo{}, 0); err != nil {
		t.Fatal(err)
	}
	var f iba.SMPFormatDirected
	if err := f.Unmarshal(got); err != nil {
		t.Fatal(err)
	}
	if f.MgmtClass != 0x81 || f.HopCount != 2 || f.HopPointer != 0 || f.DrSLID != 0xffff || f.DrDLID != 0xffff ||
		f.InitialPath[1] != 1 || f.InitialPath[2] != 4 || f.MKey != 0x1122 || f.AttributeID != 0x11 || f.Method != 1 {
		t.Errorf("directed SMP: %+v", f.MADHeaderDirected)
	}
	if addr.LID != mad.LIDPermissive || addr.QPN != 0 {
		t.Errorf("addressed to LID %#x QPN %d", addr.LID, addr.QPN)
	}
	bad := mad.Route{DR: &mad.DirectedRoute{Path: []byte{1, 2}}}
	if err := c.SubnGet(testCtx(t), bad, &iba.NodeInfo{}, 0); err == nil {
		t.Error("a route not starting at 0 was accepted")
	}
	if err := c.PerformanceGet(testCtx(t), dr, &iba.PortCounters{}, 0); err == nil {
		t.Error("a GMP over a directed route was accepted")
	}
}

func TestIllegalRPCRefused(t *testing.T) {
	tr := madtest.New(nodeInfoResponder)
	c := newClient(t, tr)
	ctx := testCtx(t)
	err := c.SubnSet(ctx, lid(1), &iba.NodeInfo{}, 0)
	var ie *mad.IllegalRPCError
	if !errors.As(err, &ie) || !errors.Is(err, mad.ErrIllegalRPC) || ie.RPC != "SubnSet" || ie.Attr != "NodeInfo" {
		t.Fatalf("got %v", err)
	}
	if err := c.SubnAdmSet(ctx, lid(1), &iba.NodeRecord{}, 0); !errors.Is(err, mad.ErrIllegalRPC) {
		t.Errorf("SubnAdmSet NodeRecord: %v", err)
	}
	if _, err := c.Do(ctx, mad.Request{Target: lid(1), Class: iba.ClassSubnMgt, Method: iba.MethodSet, AttrID: 0x11}); !errors.Is(err, mad.ErrIllegalRPC) {
		t.Errorf("Do SubnSet NodeInfo: %v", err)
	}
	if err := c.PerformanceGet(ctx, lid(1), &iba.NodeInfo{}, 0); !errors.Is(err, mad.ErrIllegalRPC) {
		t.Errorf("PerformanceGet NodeInfo: %v", err)
	}
	if tr.Sent() != 0 {
		t.Errorf("%d MADs were sent", tr.Sent())
	}
}

func TestClosedClient(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := mad.NewClient(tr, mad.WithTimeout(time.Hour))
	done := make(chan error, 1)
	go func() { done <- c.SubnGet(context.Background(), lid(1), &iba.NodeInfo{}, 0) }()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an RPC in flight hung when the client closed")
	}
}

func TestContextCancelEndsRPC(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := newClient(t, tr, mad.WithTimeout(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := c.SubnGet(ctx, lid(1), &iba.NodeInfo{}, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v", err)
	}
}

func TestUnexpectedMADsAreTraced(t *testing.T) {
	var unexpected atomic.Int32
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		stray := madtest.Reply(req, 0, nil)
		stray.MAD[15] ^= 0xff // another TID
		return append([]*mad.Packet{stray}, nodeInfoResponder(req)...)
	})
	c := newClient(t, tr, mad.WithTrace(func(e mad.TraceEvent) {
		if e.Kind == mad.TraceUnexpected {
			unexpected.Add(1)
			if !strings.HasPrefix(e.String(), "unexpected class 0x01") {
				t.Errorf("trace line %q", e)
			}
		}
	}))
	if err := c.SubnGet(testCtx(t), lid(5), &iba.NodeInfo{}, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for unexpected.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if unexpected.Load() != 1 {
		t.Errorf("%d unexpected MADs traced, want 1", unexpected.Load())
	}
}

// Requests of one class that need different agents (two vendor OUIs, two
// class versions) each go out through their own, registered once, however
// they alternate.
func TestAgentPerClassVersionAndOUI(t *testing.T) {
	type sent struct {
		agent          int
		class, version uint8
		oui            uint32
	}
	var mu sync.Mutex
	var log []sent
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		m := req.MAD
		mu.Lock()
		log = append(log, sent{req.Agent, m[1], m[2], uint32(m[37])<<16 | uint32(m[38])<<8 | uint32(m[39])})
		mu.Unlock()
		return []*mad.Packet{madtest.Reply(req, 0, nil)}
	})
	c := newClient(t, tr)
	reqs := []mad.Request{
		{Class: 0x30, Method: iba.MethodGet, AttrID: 0x10, OUI: 0x0002c9, Unchecked: true},
		{Class: 0x30, Method: iba.MethodGet, AttrID: 0x10, OUI: 0x00066a, Unchecked: true},
		{Class: iba.ClassPerfMgt, Method: iba.MethodGet, AttrID: iba.AttrIDClassPortInfo},
		{Class: iba.ClassPerfMgt, Version: 2, Method: iba.MethodGet, AttrID: iba.AttrIDClassPortInfo, Unchecked: true},
	}
	for i, k := range []int{0, 1, 0, 2, 3, 2, 1, 1, 3, 0, 2, 3} {
		req := reqs[k]
		req.Target = lid(1)
		if _, err := c.Do(testCtx(t), req); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	agents := tr.Agents()
	if len(agents) != len(reqs) {
		t.Fatalf("%d agents registered, want %d: %+v", len(agents), len(reqs), agents)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, s := range log {
		a := agents[s.agent]
		want := sent{s.agent, a.Class, a.ClassVersion, 0}
		if s.class >= 0x30 && s.class <= 0x4f {
			want.oui = a.OUI
		}
		if s != want {
			t.Errorf("request %d: class %#x version %d OUI %#x went out through agent %d %+v", i, s.class, s.version, s.oui, s.agent, a)
		}
	}
}
