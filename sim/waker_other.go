//go:build !linux

package sim

import (
	"runtime"
	"time"
)

// waker is how the delivery goroutine sleeps: until a time, or until
// kicked (an earlier entry was queued).
type waker interface {
	wait(d time.Duration)
	poll() bool
	kick()
	close()
}

func newWaker() waker { return newChanWaker() }

func yield() { runtime.Gosched() }
