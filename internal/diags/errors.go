package diags

import (
	"errors"
	"fmt"
)

// Errors of the commands and the exit statuses they map to: Main prints an
// error and takes the status from its ExitCode (255 for IBEXIT, 1 when it
// has none); *UsageError (ibtool.go) is status 2.

// diagError is a failure that infiniband-diags reports with IBEXIT
// ("<tool>: iberror: failed: ..."), which exits with status 255: a target
// that does not resolve, an unknown op, a query that fails. Main takes the
// status from ExitCode. Command lines the C tools reject with their usage
// text stay *UsageError (status 2).
type diagError struct {
	msg string
	err error
	// quiet keeps err for errors.Is/As, -v and the M_Key hint but out of
	// the message, which is the C tool's.
	quiet bool
}

func (e *diagError) Error() string {
	if e.err == nil || e.quiet {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e *diagError) Unwrap() error { return e.err }

// ExitCode is IBEXIT's exit(-1).
func (e *diagError) ExitCode() int { return 255 }

func iberror(err error, format string, a ...any) error {
	return &diagError{msg: fmt.Sprintf(format, a...), err: err}
}

// iberrorCause is iberror with the C tool's message alone: err is the
// cause, shown by -v, not part of the message.
func iberrorCause(err error, format string, a ...any) error {
	return &diagError{msg: fmt.Sprintf(format, a...), err: err, quiet: true}
}

// unwrapUsage makes a usage error the plain cause of another failure: a
// destination the C tools cannot resolve is an IBEXIT failure (255), not a
// usage error (2), whatever the reason.
func unwrapUsage(err error) error {
	var ue *UsageError
	if errors.As(err, &ue) {
		return errors.New(ue.Msg)
	}
	return err
}

// exitError carries the C tool's exit status.
type exitError struct {
	err  error
	code int
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// exitIncomplete is the status of a command that printed what it found but
// could not read all of it: a discovery that lost nodes or ports
// (*subnet.IncompleteError), a sweep whose counters did not all answer.
// The C tools warn on stderr and exit 0 then; a script must be able to
// tell a partial answer from a whole one.
const exitIncomplete = 3

// incomplete gives lost, what a command could not read, the status
// exitIncomplete, with the command's own verdict (failed: the ports with
// errors, the problems found, nil for none) said first: a partial answer
// outranks a verdict drawn from it. With nothing lost it returns failed.
func incomplete(failed, lost error) error {
	switch {
	case lost == nil:
		return failed
	case failed == nil:
		return &exitError{lost, exitIncomplete}
	}
	return &exitError{fmt.Errorf("%w; %w", failed, lost), exitIncomplete}
}

// NoDeviceStatus is the exit status of every command on a machine with
// no RDMA device (and no --fabric): the C tools all stop there with
// IBEXIT, whose status is 255.
const NoDeviceStatus = 255
