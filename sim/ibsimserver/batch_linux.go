package ibsimserver

import (
	"fmt"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batchIO moves several datagrams per system call (recvmmsg(2),
// sendmmsg(2)) on a client's data socket: a client with many MADs in
// flight costs the server one read and one write per batch instead of per
// MAD, which is most of what a MAD costs here.
type batchIO struct {
	rc   syscall.RawConn
	rmsg []unix.Mmsghdr
	riov []unix.Iovec
	wmsg []unix.Mmsghdr
	wiov []unix.Iovec
}

func newBatchIO(c net.Conn, n int) (*batchIO, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%T has no file descriptor", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &batchIO{rc: rc, rmsg: make([]unix.Mmsghdr, n), riov: make([]unix.Iovec, n),
		wmsg: make([]unix.Mmsghdr, n), wiov: make([]unix.Iovec, n)}, nil
}

func setIOV(msg []unix.Mmsghdr, iov []unix.Iovec, bufs [][]byte) {
	for i, b := range bufs {
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
		msg[i] = unix.Mmsghdr{}
		msg[i].Hdr.Iov = &iov[i]
		msg[i].Hdr.SetIovlen(1)
	}
}

// read waits for at least one datagram and reads as many as are queued,
// up to len(bufs) (at most the n given to newBatchIO); sizes[i] is the
// length of datagram i.
func (b *batchIO) read(bufs [][]byte, sizes []int) (int, error) {
	bufs = bufs[:min(len(bufs), len(b.rmsg))]
	setIOV(b.rmsg, b.riov, bufs)
	var n int
	var errno syscall.Errno
	err := b.rc.Read(func(fd uintptr) bool {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.rmsg[0])), uintptr(len(bufs)), unix.MSG_DONTWAIT, 0, 0)
		for e == unix.EINTR {
			r, _, e = unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.rmsg[0])), uintptr(len(bufs)), unix.MSG_DONTWAIT, 0, 0)
		}
		if e == unix.EAGAIN {
			return false // wait for the socket to be readable
		}
		n, errno = int(r), e
		return true
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	for i := 0; i < n; i++ {
		sizes[i] = int(b.rmsg[i].Len)
	}
	return n, nil
}

// write sends every buffer, as one datagram each, in as few calls as the
// socket takes them.
func (b *batchIO) write(bufs [][]byte) error {
	for len(bufs) > 0 {
		k := min(len(bufs), len(b.wmsg))
		setIOV(b.wmsg, b.wiov, bufs[:k])
		var n int
		var errno syscall.Errno
		err := b.rc.Write(func(fd uintptr) bool {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.wmsg[0])), uintptr(k), unix.MSG_DONTWAIT, 0, 0)
			for e == unix.EINTR {
				r, _, e = unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.wmsg[0])), uintptr(k), unix.MSG_DONTWAIT, 0, 0)
			}
			if e == unix.EAGAIN {
				return false // the client's queue is full: wait for room
			}
			n, errno = int(r), e
			return true
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return errno
		}
		if n <= 0 {
			return fmt.Errorf("sendmmsg sent %d of %d datagrams", n, k)
		}
		bufs = bufs[n:]
	}
	return nil
}
