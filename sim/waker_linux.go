package sim

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// waker is how the delivery goroutine sleeps: until a time, or until
// kicked (an earlier entry was queued).
type waker interface {
	// wait sleeps for d (d < 0: until kicked) or until a kick, and
	// consumes the kick.
	wait(d time.Duration)
	// poll consumes a kick, if one came, without sleeping.
	poll() bool
	kick()
	close()
}

// eventWaker sleeps in ppoll(2) on an eventfd, which a kick makes
// readable: its timeout ends within the thread's timer slack (50 us by
// default), where a Go timer's may end a millisecond late, and a kick is
// never lost (the eventfd stays readable until read).
type eventWaker struct{ fd int }

// newWaker returns an eventfd waker, or the channel one if the kernel
// refuses an eventfd.
func newWaker() waker {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return newChanWaker()
	}
	return &eventWaker{fd: fd}
}

func (w *eventWaker) wait(d time.Duration) {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	var ts *unix.Timespec
	if d >= 0 {
		t := unix.NsecToTimespec(int64(d))
		ts = &t
	}
	if n, _ := unix.Ppoll(fds, ts, nil); n > 0 {
		w.poll()
	}
}

func (w *eventWaker) poll() bool {
	var b [8]byte
	n, _ := unix.Read(w.fd, b[:])
	return n == 8
}

func (w *eventWaker) kick() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	_, _ = unix.Write(w.fd, b[:])
}

func (w *eventWaker) close() { unix.Close(w.fd) }

// yield gives the CPU to another thread that wants it, if any.
func yield() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
