package sim

import "time"

// chanWaker is the portable waker: a Go timer and a channel. Its sleeps
// end up to the runtime timer's grain (about a millisecond) late; the
// spin before each due time makes up for part of it.
type chanWaker struct {
	ch    chan struct{}
	timer *time.Timer
}

func newChanWaker() *chanWaker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &chanWaker{ch: make(chan struct{}, 1), timer: t}
}

func (w *chanWaker) wait(d time.Duration) {
	if d < 0 {
		<-w.ch
		return
	}
	w.timer.Reset(d)
	select {
	case <-w.ch:
		w.timer.Stop()
	case <-w.timer.C:
	}
}

func (w *chanWaker) poll() bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

func (w *chanWaker) kick() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func (w *chanWaker) close() {}
