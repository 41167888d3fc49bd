package nldev

import (
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ErrNotSupported is matched (errors.Is) by an OpError when the kernel
// lacks what was asked for: no RDMA netlink at all (ib_core not loaded, or
// no RDMA in the kernel), or a command this kernel does not implement.
var ErrNotSupported = errors.New("not supported by this kernel")

// OpError is the one error type of this package's kernel operations. It
// unwraps to the errno, so callers write errors.Is(err, unix.ENODEV), and
// carries the kernel's extended-ack message when it sent one.
type OpError struct {
	Op      string // what was asked, e.g. "RDMA_NLDEV_CMD_PORT_GET"
	Err     error  // usually a unix.Errno
	Message string // the kernel's extended acknowledgement text, if any
}

func (e *OpError) Error() string {
	s := fmt.Sprintf("nldev %s: %v", e.Op, e.Err)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *OpError) Unwrap() error { return e.Err }

// Is reports ErrNotSupported for the errnos that mean "this kernel cannot":
// EPROTONOSUPPORT from socket(2) without RDMA netlink, EOPNOTSUPP from a
// command the kernel or driver does not implement.
func (e *OpError) Is(target error) bool {
	if target != ErrNotSupported {
		return false
	}
	return errors.Is(e.Err, unix.EPROTONOSUPPORT) || errors.Is(e.Err, unix.EOPNOTSUPP)
}

// opError converts an error from package netlink into an OpError, keeping
// the errno and the extended-ack message and dropping netlink's own wrapping.
func opError(op string, err error) error {
	if err == nil {
		return nil
	}
	oe := &OpError{Op: op, Err: err}
	var ne *netlink.OpError
	if errors.As(err, &ne) {
		oe.Err = ne.Err
		oe.Message = ne.Message
		var se *os.SyscallError
		if errors.As(ne.Err, &se) {
			oe.Err = se.Err
		}
	}
	return oe
}
