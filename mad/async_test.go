package mad_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// startWait runs req through Start and waits for its done, failing the
// test if done comes twice or not within a minute.
func startWait(t *testing.T, c *mad.Client, ctx context.Context, req mad.Request) (*mad.Reply, error) {
	t.Helper()
	type result struct {
		rep *mad.Reply
		err error
	}
	ch := make(chan result, 2)
	c.Start(ctx, req, func(rep *mad.Reply, err error) {
		if rep != nil && err == nil {
			// The reply is the client's once done returns.
			r := *rep
			r.Request, r.MAD = slices.Clone(rep.Request), slices.Clone(rep.MAD)
			rep = &r
		}
		ch <- result{rep, err}
	})
	select {
	case r := <-ch:
		select {
		case <-ch:
			t.Errorf("done was called twice for %v", req.Target)
		case <-time.After(20 * time.Millisecond):
		}
		return r.rep, r.err
	case <-time.After(time.Minute):
		t.Fatalf("done was never called for %v", req.Target)
		return nil, nil
	}
}

// rpc runs req through Start when async is set, else through Do.
func rpc(t *testing.T, c *mad.Client, async bool, req mad.Request) (*mad.Reply, error) {
	t.Helper()
	if async {
		return startWait(t, c, testCtx(t), req)
	}
	return c.Do(testCtx(t), req)
}

func nodeInfoReq(l uint16) mad.Request {
	return mad.Request{Target: lid(l), Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: iba.AttrIDNodeInfo}
}

func nodeGUIDOf(t *testing.T, rep *mad.Reply) iba.GUID {
	t.Helper()
	var ni iba.NodeInfo
	if err := ni.Unmarshal(rep.Data()); err != nil {
		t.Fatal(err)
	}
	return ni.NodeGUID
}

func TestStartConcurrentReplies(t *testing.T) {
	tr := madtest.New(nodeInfoResponder, madtest.WithTIDRewrite())
	c := newClient(t, tr)
	ctx := testCtx(t)
	const n = 3000
	var wg sync.WaitGroup
	var calls atomic.Int64
	errs := make(chan error, n)
	wg.Add(n)
	for i := range n {
		l := uint16(1 + i)
		c.Start(ctx, nodeInfoReq(l), func(rep *mad.Reply, err error) {
			defer wg.Done()
			calls.Add(1)
			if err != nil {
				errs <- err
				return
			}
			var ni iba.NodeInfo
			if err := ni.Unmarshal(rep.Data()); err != nil {
				errs <- err
			} else if want := iba.GUID(0x1000 + uint64(l)); ni.NodeGUID != want {
				errs <- fmt.Errorf("LID %d got NodeGUID %v, want %v", l, ni.NodeGUID, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if calls.Load() != n || tr.Sent() != n {
		t.Errorf("%d dones and %d sends for %d RPCs", calls.Load(), tr.Sent(), n)
	}
}

// The async path reports a timeout exactly as Do does: the same error and
// the same trace.
func TestStartTimeoutMatchesDo(t *testing.T) {
	run := func(async bool) ([]mad.TraceKind, int64, error) {
		tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
		var mu sync.Mutex
		var events []mad.TraceKind
		c := newClient(t, tr, mad.WithTimeout(15*time.Millisecond), mad.WithRetries(3), mad.WithTrace(func(e mad.TraceEvent) {
			mu.Lock()
			events = append(events, e.Kind)
			mu.Unlock()
		}))
		req := nodeInfoReq(7)
		req.Target = mad.Route{Addr: mad.Addr{LID: 7}, Name: "LID 7 (H-1)"}
		_, err := rpc(t, c, async, req)
		mu.Lock()
		defer mu.Unlock()
		return events, tr.Sent(), err
	}
	syncEv, syncSent, syncErr := run(false)
	asyncEv, asyncSent, asyncErr := run(true)
	var te *mad.TimeoutError
	if !errors.As(asyncErr, &te) || te.Tries != 3 || te.Target != "LID 7 (H-1)" || len(te.Request) != mad.Size {
		t.Fatalf("Start: %v, want a TimeoutError of 3 tries", asyncErr)
	}
	if asyncErr.Error() != syncErr.Error() {
		t.Errorf("Start: %q\nDo:    %q", asyncErr, syncErr)
	}
	if fmt.Sprint(asyncEv) != fmt.Sprint(syncEv) || asyncSent != syncSent {
		t.Errorf("Start traced %v in %d sends, Do %v in %d", asyncEv, asyncSent, syncEv, syncSent)
	}
}

func TestStartTransportDrop(t *testing.T) {
	drop := errors.New("ibsim: status 110, MAD dropped")
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet { return []*mad.Packet{madtest.DroppedReport(req, drop)} })
	c := newClient(t, tr, mad.WithTimeout(time.Hour))
	start := time.Now()
	_, err := startWait(t, c, testCtx(t), nodeInfoReq(4))
	var de *mad.DroppedError
	if !errors.As(err, &de) || !errors.Is(err, drop) || de.Tries != 3 {
		t.Fatalf("got %v, want a DroppedError of 3 tries wrapping the drop", err)
	}
	if tr.Sent() != 3 || time.Since(start) > 10*time.Second {
		t.Errorf("sent %d in %v: each report should end its try at once", tr.Sent(), time.Since(start))
	}
}

func TestStartStatusError(t *testing.T) {
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		return []*mad.Packet{madtest.Reply(req, 0x0c, nil)} // unsupported attribute/modifier
	})
	c := newClient(t, tr)
	rep, err := startWait(t, c, testCtx(t), nodeInfoReq(2))
	var se *mad.StatusError
	if !errors.As(err, &se) || rep == nil || rep.Status != 0x0c {
		t.Fatalf("got %v, want a StatusError with the reply", err)
	}
	if tr.Sent() != 1 {
		t.Errorf("sent %d: an error status is an answer, not a reason to retry", tr.Sent())
	}
}

func TestStartFailsBeforeSending(t *testing.T) {
	tr := madtest.New(nodeInfoResponder)
	c := newClient(t, tr)
	called := 0
	// NodeInfo cannot be set: the call fails on the caller's goroutine.
	c.Start(testCtx(t), mad.Request{Target: lid(1), Class: iba.ClassSubnMgt, Method: iba.MethodSet, AttrID: iba.AttrIDNodeInfo}, func(rep *mad.Reply, err error) {
		called++
		var ie *mad.IllegalRPCError
		if !errors.As(err, &ie) || rep != nil {
			t.Errorf("got %v, want an IllegalRPCError", err)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Start(ctx, nodeInfoReq(1), func(rep *mad.Reply, err error) {
		called++
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	if called != 2 {
		t.Errorf("done called %d times before Start returned, want 2", called)
	}
	if tr.Sent() != 0 {
		t.Errorf("%d MADs were sent", tr.Sent())
	}
}

func TestStartContextCancel(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := newClient(t, tr, mad.WithTimeout(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var canceled atomic.Int32
	for i := range 50 {
		wg.Add(1)
		c.Start(ctx, nodeInfoReq(uint16(i+1)), func(_ *mad.Reply, err error) {
			defer wg.Done()
			if errors.Is(err, context.Canceled) {
				canceled.Add(1)
			} else {
				t.Errorf("got %v, want context.Canceled", err)
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	waitGroup(t, &wg)
	if canceled.Load() != 50 {
		t.Errorf("%d of 50 ended by the cancel", canceled.Load())
	}
	// The client goes on serving other contexts.
	c2 := newClient(t, madtest.New(nodeInfoResponder))
	if _, err := startWait(t, c2, testCtx(t), nodeInfoReq(3)); err != nil {
		t.Error(err)
	}
}

func TestStartClosedClient(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := mad.NewClient(tr, mad.WithTimeout(time.Hour))
	var wg sync.WaitGroup
	wg.Add(1)
	c.Start(context.Background(), nodeInfoReq(1), func(_ *mad.Reply, err error) {
		defer wg.Done()
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	})
	time.Sleep(10 * time.Millisecond)
	c.Close()
	waitGroup(t, &wg)
	// After Close, Start fails at once.
	_, err := startWait(t, c, context.Background(), nodeInfoReq(2))
	if !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
}

// Replies that a lossy fabric lets through complete their RPCs, the rest
// time out, and every done comes exactly once, whatever order the reader
// and the timers see things in (run with -race).
func TestStartLossyDoneOnce(t *testing.T) {
	tr := madtest.New(nodeInfoResponder, madtest.WithDrop(lossy(2, 0.4)))
	c := newClient(t, tr, mad.WithTimeout(2*time.Millisecond), mad.WithRetries(3))
	ctx := testCtx(t)
	const n = 500
	var counts [n]atomic.Int32
	var ok, timedOut atomic.Int32
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		l := uint16(i + 1)
		c.Start(ctx, nodeInfoReq(l), func(rep *mad.Reply, err error) {
			if counts[i].Add(1) > 1 {
				t.Errorf("LID %d: done called again (%v)", l, err)
				return
			}
			defer wg.Done()
			switch {
			case err == nil && nodeGUIDOf(t, rep) == iba.GUID(0x1000+uint64(l)):
				ok.Add(1)
			case errors.Is(err, mad.ErrTimeout):
				timedOut.Add(1)
			default:
				t.Errorf("LID %d: %v", l, err)
			}
		})
	}
	waitGroup(t, &wg)
	time.Sleep(50 * time.Millisecond) // room for a second done to show
	// The tries are as long as the responder's delay: how many succeed
	// depends on the machine, but some must, and every RPC must end.
	if ok.Load()+timedOut.Load() != n || ok.Load() == 0 {
		t.Errorf("%d succeeded and %d timed out of %d", ok.Load(), timedOut.Load(), n)
	}
	t.Logf("40%% loss, 2 ms tries: %d succeeded, %d timed out, %d sends", ok.Load(), timedOut.Load(), tr.Sent())
}

// An RMPP class goes through Do on a goroutine of its own.
func TestStartRMPPClass(t *testing.T) {
	tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
		return []*mad.Packet{madtest.Reply(req, 0, make([]byte, 64))}
	})
	c := newClient(t, tr)
	rep, err := startWait(t, c, testCtx(t), mad.Request{Target: lid(1), Class: iba.ClassSubnAdm, Method: iba.MethodGet, AttrID: iba.AttrIDNodeRecord})
	if err != nil || rep.Tries != 1 {
		t.Fatalf("got %v, %v", rep, err)
	}
}

func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("some done was never called")
	}
}

// Tries of different timeouts share the client's clock: none ends before
// its timeout, and a short try started after a long one ends on its own
// time, not the long one's.
func TestStartMixedTimeouts(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil })
	c := newClient(t, tr)
	ctx := testCtx(t)
	type end struct {
		timeout, took time.Duration
		err           error
	}
	timeouts := []time.Duration{500 * time.Millisecond, 10 * time.Millisecond, 60 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond}
	ends := make(chan end, len(timeouts))
	for i, d := range timeouts {
		req := nodeInfoReq(uint16(i + 1))
		req.Target = mad.Route{Addr: mad.Addr{LID: uint16(i + 1)}, Timeout: d, Tries: 2}
		start := time.Now()
		c.Start(ctx, req, func(_ *mad.Reply, err error) { ends <- end{d, time.Since(start), err} })
	}
	var order []time.Duration
	for range timeouts {
		select {
		case e := <-ends:
			var te *mad.TimeoutError
			if !errors.As(e.err, &te) || te.Tries != 2 || te.Timeout != e.timeout {
				t.Errorf("%v tries: %v, want a TimeoutError of 2 tries of %v", e.timeout, e.err, e.timeout)
			}
			if e.took < 2*e.timeout {
				t.Errorf("2 tries of %v ended after %v", e.timeout, e.took)
			}
			if e.timeout < 500*time.Millisecond && e.took >= 500*time.Millisecond {
				t.Errorf("2 tries of %v waited for the 500 ms try: ended after %v", e.timeout, e.took)
			}
			order = append(order, e.timeout)
		case <-time.After(time.Minute):
			t.Fatal("some done was never called")
		}
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Errorf("ended in the order %v, want the shortest tries first", order)
			break
		}
	}
}

// lingerTransport returns from Send only once the reply to what it sent
// has come back, and then checks that the packet it was given still holds
// the request it sent: the client may not reuse a call while a send of
// it is under way.
type lingerTransport struct {
	*madtest.Transport
	t *testing.T
}

func (l lingerTransport) Send(ctx context.Context, p *mad.Packet) error {
	h, _ := madtest.ParseHeader(p.MAD)
	if err := l.Transport.Send(ctx, p); err != nil {
		return err
	}
	time.Sleep(time.Millisecond) // the reply overtakes the send
	if g, _ := madtest.ParseHeader(p.MAD); g.TID != h.TID || g.AttrMod != h.AttrMod {
		l.t.Errorf("the packet changed while it was sent: TID %#x attribute modifier %d, then TID %#x attribute modifier %d",
			h.TID, h.AttrMod, g.TID, g.AttrMod)
	}
	return nil
}

// Calls are reused once they end with a reply; one whose reply comes
// back while its send is still returning is not reused before that, even
// when the next RPC starts as soon as done is called.
func TestStartReuseWaitsForSend(t *testing.T) {
	tr := lingerTransport{madtest.New(nodeInfoResponder), t}
	c := newClient(t, tr)
	ctx := testCtx(t)
	const n = 200
	var wg sync.WaitGroup
	wg.Add(n)
	var next func(i int)
	next = func(i int) {
		l := uint16(1 + i%1000)
		c.Start(ctx, mad.Request{Target: lid(l), Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: iba.AttrIDNodeInfo, AttrMod: uint32(i)}, func(rep *mad.Reply, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("RPC %d: %v", i, err)
			} else if g := nodeGUIDOf(t, rep); g != iba.GUID(0x1000+uint64(l)) {
				t.Errorf("RPC %d to LID %d got NodeGUID %v", i, l, g)
			}
			if i+1 < n {
				go next(i + 1)
			}
		})
	}
	next(0)
	waitGroup(t, &wg)
}
