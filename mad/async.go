package mad

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Start performs the RPC that Do performs, without waiting for it: done
// is called exactly once, with what Do would have returned.
//
// A sweep of a large fabric keeps hundreds of RPCs in flight. Do holds a
// goroutine for each of them, and hands every reply from the reader to
// that goroutine; Start holds none: the reader itself completes the RPC
// that a reply answers, and a timer the one whose try ran out. Per MAD
// that saves a goroutine switch, a select and a channel, which on a
// 10,000-node sweep is a good part of the CPU spent per MAD.
//
// done runs on the goroutine that called Start when the request fails
// before it is sent (an illegal RPC, no agent, a failed send), on the
// client's reader when a reply or the transport's report of a drop ends
// the RPC, and on a timer's goroutine otherwise. It must not block, and
// in particular must not wait for another RPC of this client (Do would
// wait for the reader that runs done); it may call Start. Requests of the
// RMPP classes (the SA's tables) are run by Do on a goroutine of their
// own, as their transfers need one.
//
// The Reply that done gets, with the request and reply MADs in it, is
// the client's again once done returns without an error: done copies
// what it keeps of it. (A Reply that comes with an error stays done's.)
// Each RPC of a sweep would otherwise leave its call and its reply behind
// for the collector; reused, they cost no allocation at all.
func (c *Client) Start(ctx context.Context, req Request, done func(*Reply, error)) {
	// One block holds the call, its exchange, MAD, packet and reply.
	a := asyncPool.Get().(*asyncCall)
	a.done, a.busyWait, a.try, a.waited = done, c.busyBackoff, 1, 0
	x := &a.x
	if err := c.prepare(ctx, req, x); err != nil {
		done(nil, err)
		return
	}
	if x.ci.rmpp {
		go func() { done(x.run()) }()
		return
	}
	if err := ctx.Err(); err != nil {
		done(nil, x.ctxError())
		return
	}
	a.call.a = a
	// One reference for the call until it ends, one for this send.
	a.refs.Store(2)
	c.mu.Lock()
	// The try is on the clock from before the send, so that whoever ends
	// the call finds it there to take off.
	a.start = time.Now()
	c.pending[x.key()] = &a.call
	c.queueTryLocked(a, a.start)
	c.watchLocked(ctx)
	c.mu.Unlock()
	select {
	case <-c.dead:
		// The reader has failed the calls it knew of; this one came later.
		c.finishAsync(a, nil, x.fail(c.rdErr))
		return
	default:
	}
	c.sendTry(a, 1)
}

// sendTry sends try number try of a, holding a reference to a for as long
// as the send runs: its reply may end the call before the send returns.
// The caller has taken that reference; sendTry gives it back.
func (c *Client) sendTry(a *asyncCall, try int) {
	if err := a.x.send(try); err != nil {
		c.finishAsync(a, nil, err)
	}
	c.release(a)
}

// asyncCall is a single-MAD RPC started by Start. It is in c.pending from
// Start until it ends; whoever takes it out under c.mu ends it. While a
// try is out the call is on a try list (tries.go). Between tries one
// goroutine owns it (the reader with a reply, the expiry of its try, a
// BUSY backoff): it is then idle and on no list, and neither a reply nor
// an expiry acts on it.
type asyncCall struct {
	call
	x        exchange
	rep      Reply
	done     func(*Reply, error)
	start    time.Time
	busyWait time.Duration
	waited   int // tries that ended otherwise than by the transport's drop
	// refs counts who may still use the call: one for the call until it
	// ends with a reply and no error, one for each send under way. The
	// call goes back to asyncPool when it drops to 0. A call that ends
	// otherwise keeps its first reference and is left to the collector:
	// an error may hold its request, and a canceller takes a call away
	// from whoever owns it.
	refs atomic.Int32

	// Under c.mu:
	try        int
	deadline   time.Time // of the current try
	idle       bool      // between tries, owned by whoever ended the last
	list       *tryList  // the list the current try is on, nil when idle or ended
	prev, next *asyncCall
}

// asyncPool recycles the calls of Start.
var asyncPool = sync.Pool{New: func() any { return new(asyncCall) }}

// release drops a reference to a; the last one puts a back in the pool,
// cleared (build lays out a MAD in zeroed memory).
func (c *Client) release(a *asyncCall) {
	if a.refs.Add(-1) == 0 {
		*a = asyncCall{}
		asyncPool.Put(a)
	}
}

// ctxWatch fails the pending async calls of one context when it ends; n
// counts them.
type ctxWatch struct {
	n    int
	stop func() bool
}

// watchLocked counts one more pending async call under ctx.
func (c *Client) watchLocked(ctx context.Context) {
	if ctx.Done() == nil {
		return
	}
	w := c.watch[ctx]
	if w == nil {
		w = &ctxWatch{}
		w.stop = context.AfterFunc(ctx, func() { c.cancelAsync(ctx) })
		c.watch[ctx] = w
	}
	w.n++
}

// unwatchLocked counts one async call under ctx less.
func (c *Client) unwatchLocked(ctx context.Context) {
	w := c.watch[ctx]
	if w == nil {
		return
	}
	if w.n--; w.n == 0 {
		delete(c.watch, ctx)
		w.stop()
	}
}

// claimLocked takes a out of pending if it is still there: the caller
// then ends it.
func (c *Client) claimLocked(a *asyncCall) bool {
	k := a.x.key()
	if c.pending[k] != &a.call {
		return false
	}
	delete(c.pending, k)
	c.dequeueTryLocked(a)
	c.unwatchLocked(a.x.ctx)
	return true
}

// finishAsync ends a if nothing else has, and calls its done; it reports
// whether it did.
func (c *Client) finishAsync(a *asyncCall, rep *Reply, err error) bool {
	c.mu.Lock()
	ok := c.claimLocked(a)
	c.mu.Unlock()
	if ok {
		a.done(rep, err)
	}
	return ok
}

// ownLocked makes the caller the owner of the next step of a, which is
// pending, if nobody owns it.
func (c *Client) ownLocked(a *asyncCall) bool {
	if a.idle {
		return false
	}
	a.idle = true
	c.dequeueTryLocked(a)
	return true
}

// resend sends try number try of a, whose previous try ended with last
// (the caller owns a).
func (c *Client) resend(a *asyncCall, try int, last error) {
	x := &a.x
	if err := x.ctx.Err(); err != nil {
		c.finishAsync(a, nil, x.ctxError())
		return
	}
	x.traceRetry(try, x.request, last)
	c.mu.Lock()
	if c.pending[x.key()] != &a.call {
		c.mu.Unlock()
		return // cancelled or failed meanwhile
	}
	a.try, a.idle = try, false
	c.queueTryLocked(a, time.Now())
	a.refs.Add(1)
	c.mu.Unlock()
	c.sendTry(a, try)
}

// tryOver ends try of a without a reply (the caller owns a): cause is the
// transport's report, if any. The next try goes out at once, or the RPC
// times out.
func (c *Client) tryOver(a *asyncCall, try int, cause error) {
	x := &a.x
	x.traceTimeout(try, cause, a.start)
	if cause == nil {
		a.waited++
	}
	if try >= x.tries {
		c.finishAsync(a, nil, x.noReplyError(x.request, cause, a.waited, a.start))
		return
	}
	c.resend(a, try+1, cause)
}

// asyncReply handles a packet for the async call a, which the reader
// found pending and made its own (ownLocked) with try out; the reader
// runs it.
func (c *Client) asyncReply(a *asyncCall, try int, p *Packet) {
	x := &a.x
	if p.Err != nil {
		// The transport dropped our request: this try is over.
		c.tryOver(a, try, p.Err)
		return
	}
	// The reply lives in the call (done gets it; a BUSY reply is only
	// copied from, into its StatusError).
	rep := &a.rep
	*rep = Reply{MAD: p.MAD, Addr: p.Addr, dataOff: x.ci.dataOff}
	busy, err := x.settle(rep, x.request, try, a.start)
	if !busy {
		if c.finishAsync(a, rep, err) && err == nil && c.trace == nil {
			// (A trace may have kept the MADs.)
			c.release(a)
			if c.recycler != nil {
				c.recycler.Recycle(p)
			}
		}
		return
	}
	// BUSY: ask again after the backoff, which doubles each time.
	wait := a.busyWait
	a.busyWait = min(2*a.busyWait, x.timeout)
	a.waited++
	time.AfterFunc(wait, func() { c.resend(a, try+1, err) })
}

// cancelAsync fails the pending async calls of ctx, which has ended.
func (c *Client) cancelAsync(ctx context.Context) {
	for _, a := range c.takeAsync(func(a *asyncCall) bool { return a.x.ctx == ctx }) {
		a.done(nil, a.x.ctxError())
	}
}

// failAsync fails every pending async call: the reader stopped with err.
func (c *Client) failAsync(err error) {
	failed := c.takeAsync(func(*asyncCall) bool { return true })
	c.mu.Lock()
	c.stopTriesLocked()
	c.mu.Unlock()
	for _, a := range failed {
		a.done(nil, a.x.fail(err))
	}
}

// takeAsync takes the pending async calls that match out of pending and
// off the try lists; the caller ends them.
func (c *Client) takeAsync(match func(*asyncCall) bool) []*asyncCall {
	var out []*asyncCall
	c.mu.Lock()
	for _, w := range c.pending {
		if w.a != nil && match(w.a) && c.claimLocked(w.a) {
			out = append(out, w.a)
		}
	}
	c.mu.Unlock()
	return out
}
