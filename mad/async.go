package mad

import (
	"context"
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
func (c *Client) Start(ctx context.Context, req Request, done func(*Reply, error)) {
	// One allocation holds the call, its exchange, MAD, packet and reply.
	a := &asyncCall{done: done, busyWait: c.busyBackoff, try: 1}
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
	if err := x.send(1); err != nil {
		c.finishAsync(a, nil, err)
	}
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

	// Under c.mu:
	try        int
	deadline   time.Time // of the current try
	idle       bool      // between tries, owned by whoever ended the last
	list       *tryList  // the list the current try is on, nil when idle or ended
	prev, next *asyncCall
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

// finishAsync ends a if nothing else has, and calls its done.
func (c *Client) finishAsync(a *asyncCall, rep *Reply, err error) {
	c.mu.Lock()
	ok := c.claimLocked(a)
	c.mu.Unlock()
	if !ok {
		return
	}
	a.done(rep, err)
}

// ownLocked makes the caller the owner of a's next step, if a is pending
// and nobody owns it.
func (c *Client) ownLocked(a *asyncCall) bool {
	if c.pending[a.x.key()] != &a.call || a.idle {
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
	c.mu.Unlock()
	if err := x.send(try); err != nil {
		c.finishAsync(a, nil, err)
	}
}

// tryOver ends try of a without a reply (the caller owns a): cause is the
// transport's report, if any. The next try goes out at once, or the RPC
// times out.
func (c *Client) tryOver(a *asyncCall, try int, cause error) {
	x := &a.x
	x.traceTimeout(try, cause, a.start)
	if try >= x.tries {
		c.finishAsync(a, nil, x.timeoutError(x.request, cause))
		return
	}
	c.resend(a, try+1, cause)
}

// asyncReply handles a packet for a pending async call; the reader runs
// it.
func (c *Client) asyncReply(a *asyncCall, p *Packet) {
	x := &a.x
	c.mu.Lock()
	if !c.ownLocked(a) {
		// Another try's end is being handled; that try's reply or the
		// next will do.
		c.mu.Unlock()
		c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr})
		return
	}
	try := a.try
	c.mu.Unlock()
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
		c.finishAsync(a, rep, err)
		return
	}
	// BUSY: ask again after the backoff, which doubles each time.
	wait := a.busyWait
	a.busyWait = min(2*a.busyWait, x.timeout)
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
