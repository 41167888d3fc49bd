package verbs

import (
	"errors"
	"fmt"
	"syscall"
)

// Error is a failed verb: the operation and the errno libibverbs gave.
type Error struct {
	Op  string
	Err error // a syscall.Errno, ErrClosed or ErrNotAvailable
}

func (e *Error) Error() string { return "verbs: " + e.Op + ": " + e.Err.Error() }

// Unwrap gives the errno, for errors.Is(err, syscall.EINVAL).
func (e *Error) Unwrap() error { return e.Err }

// ErrClosed is matched by operations on a closed resource.
var ErrClosed = errors.New("verbs: resource closed")

// ErrNotAvailable is matched when libibverbs cannot be used on this
// machine: the library is not installed (or cannot be loaded), or the
// platform is one this package does not load it on. It tells "not
// available here" from a verb that failed; the error that matches it is a
// *LoadError saying what to install.
var ErrNotAvailable = errors.New("libibverbs is not available")

// LoadError says why libibverbs could not be loaded. It matches
// ErrNotAvailable.
type LoadError struct {
	// Library is the file dlopen was asked for (libibverbs.so.1).
	Library string
	// Reason is dlopen's message (it names the file), what the file
	// lacks, or what the platform lacks.
	Reason string
	// Install, when set, is the advice to install rdma-core (the library
	// is missing or is not rdma-core's).
	Install bool
}

// installHint names the packages that provide libibverbs and its
// providers (the user-space drivers).
const installHint = "install rdma-core's libibverbs and its providers: " +
	"on Debian and Ubuntu apt-get install libibverbs1 ibverbs-providers, on RHEL and Fedora dnf install libibverbs"

func (e *LoadError) Error() string {
	s := fmt.Sprintf("verbs: %v: %s", ErrNotAvailable, e.Reason)
	if e.Install {
		s += " (" + installHint + ")"
	}
	return s
}

// Is reports whether target is ErrNotAvailable.
func (e *LoadError) Is(target error) bool { return target == ErrNotAvailable }

// errnoErr turns a libibverbs failure into an *Error: rc is a returned
// errno (positive, or negative as some providers give it); -1 or 0 means
// the errno is in errno, as functions returning NULL or -1 leave it.
func errnoErr(op string, rc int, errno syscall.Errno) error {
	var no syscall.Errno
	switch {
	case rc > 0:
		no = syscall.Errno(rc)
	case rc < 0 && rc != -1:
		no = syscall.Errno(-rc)
	case errno != 0:
		no = errno
	default:
		no = syscall.EIO
	}
	return &Error{Op: op, Err: no}
}

// nullErr is errnoErr for functions that return NULL and set errno.
func nullErr(op string, errno syscall.Errno) error { return errnoErr(op, -1, errno) }

// PostError reports which work request of a list the provider refused.
type PostError struct {
	Index int // into the list; -1 when unknown
	Err   *Error
}

func (e *PostError) Error() string {
	return fmt.Sprintf("%v (work request %d of the list)", e.Err, e.Index)
}

func (e *PostError) Unwrap() error { return e.Err }
