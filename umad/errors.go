package umad

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/rdmakit/rdmakit/mad"
)

// ErrNoUmad reports that the kernel offers no umad device for the port:
// ib_umad is not loaded, or the device has no MAD support.
var ErrNoUmad = errors.New("no umad device")

// OpenError reports a failure to open a umad device, with what to do about
// it.
type OpenError struct {
	Path string // the file that could not be used
	Err  error
	Hint string
}

func (e *OpenError) Error() string {
	s := fmt.Sprintf("opening %s: %v", e.Path, e.Err)
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}

func (e *OpenError) Unwrap() error { return e.Err }

// openError explains the errors a user can fix.
func openError(path string, err error) error {
	var hint string
	switch {
	case errors.Is(err, fs.ErrPermission):
		hint = "run as root, or allow your user with a udev rule " +
			`(KERNEL=="umad*", GROUP="rdma", MODE="0660") and membership of that group`
	case errors.Is(err, fs.ErrNotExist):
		hint = "is ib_umad loaded (modprobe ib_umad) and /dev populated by udev?"
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		hint = "the RDMA device went away"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in the message
	}
	return &OpenError{Path: path, Err: err, Hint: hint}
}

// ABIError reports a kernel whose umad ABI this package does not speak.
type ABIError struct {
	Path    string
	Version int
}

func (e *ABIError) Error() string {
	return fmt.Sprintf("%s: umad ABI version %d, this program speaks version %d (rdma/ib_user_mad.h)",
		e.Path, e.Version, ABIVersion)
}

// StatusError is the Packet.Err of a request the kernel gave up on: Errno
// is the header status, ETIMEDOUT when no reply came within the packet's
// timeout. It unwraps to the Errno, so errors.Is(err, syscall.ETIMEDOUT)
// holds, and a timeout also matches mad.ErrTimeout; Timeout reports that
// case (the os.IsTimeout convention).
type StatusError struct {
	Agent int
	Errno syscall.Errno
}

func (e *StatusError) Error() string {
	if e.Errno == syscall.ETIMEDOUT {
		return fmt.Sprintf("umad agent %d: request timed out in the kernel", e.Agent)
	}
	return fmt.Sprintf("umad agent %d: send failed: %v", e.Agent, e.Errno)
}

func (e *StatusError) Unwrap() error { return e.Errno }

// Is matches mad.ErrTimeout for a timed-out request.
func (e *StatusError) Is(target error) bool { return target == mad.ErrTimeout && e.Timeout() }

// Timeout reports whether the request timed out.
func (e *StatusError) Timeout() bool { return e.Errno == syscall.ETIMEDOUT }
