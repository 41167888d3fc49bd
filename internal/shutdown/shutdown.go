// Package shutdown is how the commands (ibtool, rdmatool, fabricsim) end
// on a signal: SIGINT, SIGTERM and SIGHUP alike cancel the command's
// context, so it detaches from the fabric (an ibsim client slot, a umad
// file, a netlink socket) on its usual way out, and the process exits
// with 128 plus the signal's number, as a shell reports a command killed
// by it. `timeout` and systemd stop a program with SIGTERM, a closed
// terminal with SIGHUP; a program that ignored them kept its ibsim slot
// (ibsim has 10) until someone freed it by hand.
package shutdown

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Signals are the signals Run handles.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// Grace is how long Run waits, after the first signal, for main to
// return before it gives up on it and returns anyway. A second signal
// ends the wait at once.
const Grace = 5 * time.Second

// Run runs main with a context that a signal of Signals cancels, and
// returns the exit status: main's, or 128 plus the number of the signal
// that came first. When main does not return within Grace of the signal
// (it waits on something that takes no context), or a second signal
// comes, Run returns without it.
func Run(main func(ctx context.Context) int) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, Signals...)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- main(ctx) }()
	var first os.Signal
	var grace <-chan time.Time
	for {
		select {
		case code := <-done:
			if first != nil {
				return status(first)
			}
			return code
		case s := <-sigs:
			if first != nil {
				return status(first)
			}
			first = s
			cancel()
			grace = time.After(Grace)
		case <-grace:
			return status(first)
		}
	}
}

// status is the exit status of a process ended by s: 128 + its number.
func status(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGTERM)
}
