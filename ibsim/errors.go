package ibsim

import (
	"errors"
	"fmt"
)

// Errors of the simulator, to test with errors.Is. The transport wraps them
// with the simulator's address and the node.
var (
	// ErrNotRunning: no simulator listens on the socket name or address.
	ErrNotRunning = errors.New("ibsim: simulator not running")
	// ErrNoReply: the simulator did not answer a control request in time.
	// ibsim drops malformed control messages without a reply.
	ErrNoReply = errors.New("ibsim: no reply from the simulator")
	// ErrUnknownNode: the node to attach to (SIM_HOST) is not in the
	// fabric, by node id or by NodeDescription.
	ErrUnknownNode = errors.New("ibsim: no such node in the simulated fabric")
	// ErrTooManyClients: every client slot of the simulator is taken (ibsim
	// has 10, and a client that died without disconnecting keeps its slot).
	ErrTooManyClients = errors.New("ibsim: all client slots of the simulator are in use")
	// ErrSMExists: attaching as the SM client (ISSM) to a node that already
	// has one.
	ErrSMExists = errors.New("ibsim: the node already has an SM client")
	// ErrDropped is matched by the DroppedError of a received Packet.
	ErrDropped = errors.New("ibsim: MAD dropped by the simulator")
	// ErrMADSize: the simulator carries MADs of 24 to 256 bytes; it has no
	// RMPP, so longer transfers must be segmented by the caller.
	ErrMADSize = errors.New("ibsim: MAD size out of range")
)

// DroppedError is the Err of a received mad.Packet that the simulator
// bounced back instead of delivering: it found no route to the
// destination, no one to handle the MAD there, or dropped it on purpose
// (the console's Error command). ibsim answers so at once, so a client
// learns that its request will get no reply without waiting for a timer.
// The Packet's MAD is the request as the simulator saw it.
type DroppedError struct {
	// DLID is where the request was going; 0xffff for a directed route.
	DLID   uint16
	Class  uint8
	Method uint8
	AttrID uint16
	TID    uint64
}

func (e *DroppedError) Error() string {
	return fmt.Sprintf("ibsim: MAD dropped by the simulator (status 110): class %#02x method %#02x attribute %#04x TID %#016x to LID %#04x",
		e.Class, e.Method, e.AttrID, e.TID, e.DLID)
}

// Is makes errors.Is(err, ErrDropped) true.
func (e *DroppedError) Is(target error) bool { return target == ErrDropped }

// Timeout reports true: for a caller the drop means the request timed out,
// as the kernel reports a send that got no reply.
func (e *DroppedError) Timeout() bool { return true }
