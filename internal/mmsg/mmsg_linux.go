package mmsg

import (
	"fmt"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn reads and writes batches of datagrams on one socket, which stays
// under Go's poller: a batch call that finds nothing to read, or no room to
// write, waits as the socket's own Read and Write would, deadlines
// included. A Conn is used by one reader and one writer at a time.
type Conn struct {
	rc syscall.RawConn

	// The read side: the batch, and the system call bound once to readFn
	// with its argument and results in fields, so that a call allocates
	// nothing (a closure passed to RawConn.Read would escape).
	rmsg   []unix.Mmsghdr
	riov   []unix.Iovec
	readFn func(fd uintptr) bool
	rwant  int
	rgot   int
	rerrno syscall.Errno

	// The write side, likewise.
	wmsg    []unix.Mmsghdr
	wiov    []unix.Iovec
	writeFn func(fd uintptr) bool
	wwant   int
	wgot    int
	werrno  syscall.Errno
}

// New prepares batches of up to n datagrams on c, which must have a file
// descriptor (*net.UnixConn, *net.UDPConn).
func New(c net.Conn, n int) (*Conn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("batching datagrams: %T has no file descriptor", c)
	}
	if n < 1 {
		return nil, fmt.Errorf("batching datagrams: batch size %d", n)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("batching datagrams: %w", err)
	}
	bc := &Conn{rc: rc, rmsg: make([]unix.Mmsghdr, n), riov: make([]unix.Iovec, n),
		wmsg: make([]unix.Mmsghdr, n), wiov: make([]unix.Iovec, n)}
	bc.readFn, bc.writeFn = bc.recvmmsg, bc.sendmmsg
	return bc, nil
}

// recvmmsg reads up to rwant datagrams without waiting; false when there
// are none, so that the poller waits for the socket to be readable.
func (c *Conn) recvmmsg(fd uintptr) bool {
	var ok bool
	c.rgot, c.rerrno, ok = mmsg(unix.SYS_RECVMMSG, fd, c.rmsg, c.rwant)
	return ok
}

// sendmmsg writes up to wwant datagrams without waiting; false when the
// peer's queue is full, so that the poller waits for room.
func (c *Conn) sendmmsg(fd uintptr) bool {
	var ok bool
	c.wgot, c.werrno, ok = mmsg(unix.SYS_SENDMMSG, fd, c.wmsg, c.wwant)
	return ok
}

// mmsg makes one non-blocking recvmmsg(2) or sendmmsg(2) call over the
// first n headers, repeated on EINTR; ok is false on EAGAIN. MSG_DONTWAIT
// keeps the call from blocking, so it is a raw one: the runtime neither
// hands the P to another thread around it nor keeps its monitor thread
// polling every 20 µs for a P stuck in a system call.
func mmsg(trap uintptr, fd uintptr, msgs []unix.Mmsghdr, n int) (int, syscall.Errno, bool) {
	for {
		r, _, e := unix.RawSyscall6(trap, fd, uintptr(unsafe.Pointer(&msgs[0])), uintptr(n), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, 0, false
		}
		return int(r), e, true
	}
}

func setIOV(msg []unix.Mmsghdr, iov []unix.Iovec, bufs [][]byte) {
	for i, b := range bufs {
		iov[i] = unix.Iovec{}
		if len(b) > 0 {
			iov[i].Base = &b[0]
			iov[i].SetLen(len(b))
		}
		msg[i] = unix.Mmsghdr{}
		msg[i].Hdr.Iov = &iov[i]
		msg[i].Hdr.SetIovlen(1)
	}
}

// Read waits for at least one datagram and reads as many as are queued,
// up to len(bufs) and the batch size; sizes[i] (len(sizes) >= len(bufs))
// is the length of datagram i. A datagram longer than its buffer is cut to
// it, so a buffer one byte longer than the longest valid datagram tells an
// oversized one apart.
func (c *Conn) Read(bufs [][]byte, sizes []int) (int, error) {
	bufs = bufs[:min(len(bufs), len(c.rmsg))]
	if len(bufs) == 0 {
		return 0, nil
	}
	setIOV(c.rmsg, c.riov, bufs)
	c.rwant = len(bufs)
	if err := c.rc.Read(c.readFn); err != nil {
		return 0, err
	}
	if c.rerrno != 0 {
		return 0, c.rerrno
	}
	n := c.rgot
	for i := 0; i < n; i++ {
		sizes[i] = int(c.rmsg[i].Len)
	}
	return n, nil
}

// Write sends every buffer, as one datagram each, in as few calls as the
// socket takes them.
func (c *Conn) Write(bufs [][]byte) error {
	for len(bufs) > 0 {
		k := min(len(bufs), len(c.wmsg))
		setIOV(c.wmsg, c.wiov, bufs[:k])
		c.wwant = k
		if err := c.rc.Write(c.writeFn); err != nil {
			return err
		}
		if c.werrno != 0 {
			return c.werrno
		}
		n := c.wgot
		if n <= 0 {
			return fmt.Errorf("sendmmsg sent %d of %d datagrams", n, k)
		}
		bufs = bufs[n:]
	}
	return nil
}
