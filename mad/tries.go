package mad

import (
	"slices"
	"time"
)

// The clock of the async calls' tries. A runtime timer per try
// (time.AfterFunc) costs an allocation and a trip through the runtime's
// timer heap and its lock to arm it and again to stop it, for every MAD of
// a sweep. But the tries of one timeout end in the order they began, so a
// FIFO list per timeout keeps them in deadline order: a try goes on the
// back of its list, comes off from anywhere when its call gets a reply or
// ends, and expires from the front; all in O(1), under c.mu. One timer per
// client wakes at the earliest deadline.

// tryList holds the tries out with one timeout, oldest first, linked
// through their calls.
type tryList struct {
	timeout    time.Duration
	head, tail *asyncCall
}

// tryClock is a client's try lists and its timer.
type tryClock struct {
	// One per timeout with a try out since the timer last fired: a list
	// that empties stays until then, so that a client with one RPC out
	// at a time does not make a list per RPC.
	lists []*tryList
	timer *time.Timer
	armed time.Time // when timer fires; zero when it is not set
}

// queueTryLocked puts a's current try on the clock: its deadline is its
// timeout from now, and now must not be earlier than a time given for an
// earlier try.
func (c *Client) queueTryLocked(a *asyncCall, now time.Time) {
	k := &c.clock
	a.deadline = now.Add(a.x.timeout)
	var l *tryList
	for _, m := range k.lists {
		if m.timeout == a.x.timeout {
			l = m
			break
		}
	}
	if l == nil {
		l = &tryList{timeout: a.x.timeout}
		k.lists = append(k.lists, l)
	}
	a.list, a.prev, a.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = a
	} else {
		l.head = a
	}
	l.tail = a
	if k.armed.IsZero() || a.deadline.Before(k.armed) {
		c.armLocked(a.deadline)
	}
}

// dequeueTryLocked takes a's try off the clock, if it is on.
func (c *Client) dequeueTryLocked(a *asyncCall) {
	l := a.list
	if l == nil {
		return
	}
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		l.head = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		l.tail = a.prev
	}
	a.list, a.prev, a.next = nil, nil, nil
}

// armLocked sets the timer to fire at t.
func (c *Client) armLocked(t time.Time) {
	k := &c.clock
	k.armed = t
	d := time.Until(t)
	if k.timer == nil {
		k.timer = time.AfterFunc(d, c.expireTries)
	} else {
		k.timer.Reset(d)
	}
}

// expireTries runs when the timer fires: every try past its deadline is
// over. Each call whose try it ends is idle, owned here, and goes on to
// its next try or its timeout. Lists left empty go.
func (c *Client) expireTries() {
	type expired struct {
		a   *asyncCall
		try int
	}
	var over []expired
	c.mu.Lock()
	k := &c.clock
	k.armed = time.Time{}
	now := time.Now()
	var next time.Time
	for _, l := range k.lists {
		for a := l.head; a != nil && !a.deadline.After(now); a = l.head {
			// A call on a list is pending and not idle.
			a.idle = true
			c.dequeueTryLocked(a)
			over = append(over, expired{a, a.try})
		}
		if l.head != nil && (next.IsZero() || l.head.deadline.Before(next)) {
			next = l.head.deadline
		}
	}
	k.lists = slices.DeleteFunc(k.lists, func(l *tryList) bool { return l.head == nil })
	if !next.IsZero() {
		c.armLocked(next)
	}
	c.mu.Unlock()
	for _, e := range over {
		c.tryOver(e.a, e.try, nil)
	}
}

// stopTriesLocked stops the timer; the reader has stopped and ended every
// call.
func (c *Client) stopTriesLocked() {
	if c.clock.timer != nil {
		c.clock.timer.Stop()
	}
	c.clock.armed = time.Time{}
}
