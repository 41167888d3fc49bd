package mad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// Status bits and codes of the MAD header's Status field (IBA 13.4.7,
// table 106). Bits 8 to 14 hold a class-specific code; bit 15 of an SMP is
// the direction bit D, which is not part of the status.
const (
	StatusBusy     uint16 = 1 << 0
	StatusRedirect uint16 = 1 << 1

	StatusCodeMask              uint16 = 7 << 2
	StatusBadVersion            uint16 = 1 << 2
	StatusMethodUnsupported     uint16 = 2 << 2
	StatusMethodAttrUnsupported uint16 = 3 << 2
	StatusInvalidField          uint16 = 7 << 2

	StatusClassShift        = 8
	StatusClassMask  uint16 = 0x7f << StatusClassShift
)

// SA class-specific status codes, the value of Status bits 8-14 in SubnAdm
// replies (IBA 15.2.1.1, table 184).
const (
	SANoResources               = 1
	SAReqInvalid                = 2
	SANoRecords                 = 3
	SATooManyRecords            = 4
	SAReqInvalidGID             = 5
	SAReqInsufficientComponents = 6
	SAReqDenied                 = 7
)

// SAStatus makes the Status field that carries an SA class code.
func SAStatus(code uint8) uint16 { return uint16(code&0x7f) << StatusClassShift }

var saCodeNames = [...]string{
	SANoResources:               "ERR_NO_RESOURCES",
	SAReqInvalid:                "ERR_REQ_INVALID",
	SANoRecords:                 "ERR_NO_RECORDS",
	SATooManyRecords:            "ERR_TOO_MANY_RECORDS",
	SAReqInvalidGID:             "ERR_REQ_INVALID_GID",
	SAReqInsufficientComponents: "ERR_REQ_INSUFFICIENT_COMPONENTS",
	SAReqDenied:                 "ERR_REQ_DENIED",
}

var saCodeErrs = [...]error{
	SANoResources:               ErrSANoResources,
	SAReqInvalid:                ErrSAReqInvalid,
	SANoRecords:                 ErrSANoRecords,
	SATooManyRecords:            ErrSATooManyRecords,
	SAReqInvalidGID:             ErrSAReqInvalidGID,
	SAReqInsufficientComponents: ErrSAReqInsufficientComponents,
	SAReqDenied:                 ErrSAReqDenied,
}

// PacketError is implemented by the client's errors that carry the packets
// of the failed RPC, so that a command can dump them decoded (ibtool -vv).
type PacketError interface {
	error
	// Packets returns the request and, when one came, the reply.
	Packets() (request, reply []byte)
}

// StatusError is a reply whose Status field reports an error (IBA 13.4.7).
// errors.Is matches it against ErrBusy, ErrRedirect, ErrBadVersion,
// ErrMethodUnsupported, ErrMethodAttrUnsupported, ErrInvalidField and, for
// SubnAdm replies, the ErrSA* sentinels.
type StatusError struct {
	// RPC names the request (SubnGet, SubnAdmGetTable, ...) and Attr its
	// attribute when the iba registry knows it.
	RPC    string
	Attr   string
	Class  iba.Class
	Method iba.Method
	AttrID uint16
	// Target is where the request went.
	Target string
	// Status is the Status field without the SMP direction bit.
	Status uint16
	// Request and Reply are the MADs as sent and received.
	Request, Reply []byte
}

// Busy reports the busy bit: the responder could not take the request now.
func (e *StatusError) Busy() bool { return e.Status&StatusBusy != 0 }

// Redirect reports that the class is served elsewhere (ClassPortInfo says
// where).
func (e *StatusError) Redirect() bool { return e.Status&StatusRedirect != 0 }

// Code is the 3-bit common status code (bits 2-4).
func (e *StatusError) Code() uint8 { return uint8(e.Status&StatusCodeMask) >> 2 }

// ClassCode is the class-specific code (bits 8-14).
func (e *StatusError) ClassCode() uint8 {
	return uint8((e.Status & StatusClassMask) >> StatusClassShift)
}

// Describe spells the status out: "BUSY", "Unsupported method", "SA
// ERR_NO_RECORDS", ...
func (e *StatusError) Describe() string { return DescribeStatus(e.Class, e.Status) }

// DescribeStatus spells out a Status field of class c.
func DescribeStatus(c iba.Class, status uint16) string {
	var parts []string
	if status&StatusBusy != 0 {
		parts = append(parts, "BUSY")
	}
	if status&StatusRedirect != 0 {
		parts = append(parts, "REDIRECT")
	}
	switch status & StatusCodeMask {
	case 0:
	case StatusBadVersion:
		parts = append(parts, "Bad version")
	case StatusMethodUnsupported:
		parts = append(parts, "Unsupported method")
	case StatusMethodAttrUnsupported:
		parts = append(parts, "Unsupported method/attribute combination")
	case StatusInvalidField:
		parts = append(parts, "Invalid attribute or modifier value")
	default:
		parts = append(parts, fmt.Sprintf("reserved code %d", (status&StatusCodeMask)>>2))
	}
	if cc := uint8((status & StatusClassMask) >> StatusClassShift); cc != 0 {
		if c == iba.ClassSubnAdm && int(cc) < len(saCodeNames) && saCodeNames[cc] != "" {
			parts = append(parts, "SA "+saCodeNames[cc])
		} else {
			parts = append(parts, fmt.Sprintf("class specific error %d", cc))
		}
	}
	if len(parts) == 0 {
		return "Ok"
	}
	return strings.Join(parts, ", ")
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s to %s: status 0x%04x: %s", e.RPC, e.attrName(), e.Target, e.Status, e.Describe())
}

func (e *StatusError) attrName() string {
	if e.Attr != "" {
		return e.Attr
	}
	return fmt.Sprintf("attribute 0x%04x", e.AttrID)
}

// Is matches the status sentinels.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrBusy:
		return e.Busy()
	case ErrRedirect:
		return e.Redirect()
	}
	switch e.Status & StatusCodeMask {
	case StatusBadVersion:
		if target == ErrBadVersion {
			return true
		}
	case StatusMethodUnsupported:
		if target == ErrMethodUnsupported {
			return true
		}
	case StatusMethodAttrUnsupported:
		if target == ErrMethodAttrUnsupported {
			return true
		}
	case StatusInvalidField:
		if target == ErrInvalidField {
			return true
		}
	}
	if cc := e.ClassCode(); e.Class == iba.ClassSubnAdm && int(cc) < len(saCodeErrs) && saCodeErrs[cc] != nil {
		return target == saCodeErrs[cc]
	}
	return false
}

// Packets returns the request and reply MADs.
func (e *StatusError) Packets() (request, reply []byte) { return e.Request, e.Reply }

// TimeoutError reports an RPC that got no reply after all its tries.
// errors.Is(err, ErrTimeout) matches it.
type TimeoutError struct {
	RPC    string
	Attr   string
	Target string
	// Tries is how many times the request was sent; Timeout how long each
	// try waited.
	Tries   int
	Timeout time.Duration
	// Last is what ended the last try when the transport reported it (a
	// drop by the simulator, the kernel's ETIMEDOUT); nil when the wait just
	// ran out.
	Last    error
	Request []byte
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("%s %s to %s timed out after %d tries of %v", e.RPC, e.Attr, e.Target, e.Tries, e.Timeout)
	if e.Last != nil {
		s += " (last: " + e.Last.Error() + ")"
	}
	return s
}

// Is matches ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Unwrap gives the transport's report of the last try.
func (e *TimeoutError) Unwrap() error { return e.Last }

// Packets returns the request; a timeout has no reply.
func (e *TimeoutError) Packets() (request, reply []byte) { return e.Request, nil }

// DroppedError reports an RPC whose every try the transport reported
// dropped at once, with no reply to come: ibsim's and fabricsim's status
// 110 (no route, no one to answer, an injected drop), the kernel's report
// of a send it gave up on. It is not a timeout of the RPC's own: the
// tries may all have ended within microseconds. errors.Is(err,
// ErrDropped) matches it, and so does errors.Is(err, ErrTimeout), for
// callers that take either as "no answer".
type DroppedError struct {
	RPC    string
	Attr   string
	Target string
	// Tries is how many times the request was sent, Elapsed how long all
	// of them took.
	Tries   int
	Elapsed time.Duration
	// Last is the transport's report of the last drop.
	Last    error
	Request []byte
}

func (e *DroppedError) Error() string {
	return fmt.Sprintf("%s %s to %s: dropped on each of %d tries, within %v: %v", e.RPC, e.Attr, e.Target, e.Tries, e.Elapsed.Round(time.Microsecond), e.Last)
}

// Is matches ErrDropped and ErrTimeout.
func (e *DroppedError) Is(target error) bool { return target == ErrDropped || target == ErrTimeout }

// Unwrap gives the transport's report of the last drop.
func (e *DroppedError) Unwrap() error { return e.Last }

// Packets returns the request; a drop has no reply.
func (e *DroppedError) Packets() (request, reply []byte) { return e.Request, nil }

// IllegalRPCError refuses, before anything is sent, an RPC that the
// attribute's metadata does not list (NodeInfo with SubnSet, ...).
type IllegalRPCError struct {
	RPC  string
	Attr string
	// Allowed lists the RPCs the attribute permits.
	Allowed []string
}

func (e *IllegalRPCError) Error() string {
	return fmt.Sprintf("%s is not allowed for %s (allowed: %s)", e.RPC, e.Attr, strings.Join(e.Allowed, ", "))
}

// Is matches ErrIllegalRPC.
func (e *IllegalRPCError) Is(target error) bool { return target == ErrIllegalRPC }

// RMPP packet types and status codes (IBA 13.6.2.1, tables 111 and 112).
const (
	RMPPTypeData  = 1
	RMPPTypeAck   = 2
	RMPPTypeStop  = 3
	RMPPTypeAbort = 4

	RMPPFlagActive = 1
	RMPPFlagFirst  = 2
	RMPPFlagLast   = 4

	RMPPStatusNormal            = 0
	RMPPStatusResources         = 1   // STOP: resources exhausted
	RMPPStatusTotalTimeout      = 118 // ABORT: total time too long
	RMPPStatusInconsistent      = 119 // ABORT: inconsistent last and payload length
	RMPPStatusInconsistentFirst = 120 // ABORT: inconsistent first and segment number
	RMPPStatusBadType           = 121 // ABORT: bad RMPPType
	RMPPStatusNewWindowLast     = 122 // ABORT: NewWindowLast too small
	RMPPStatusSegmentTooBig     = 123 // ABORT: SegmentNumber too big
	RMPPStatusIllegal           = 124 // ABORT: illegal status
	RMPPStatusUnsupported       = 125 // ABORT: unsupported version
	RMPPStatusTooManyRetries    = 126 // ABORT: too many retries
	RMPPStatusUnspecified       = 127 // ABORT: unspecified
)

// RMPPError reports an RMPP transfer ended by a STOP or ABORT (IBA 13.6.3),
// sent by the peer or by us.
type RMPPError struct {
	RPC    string
	Target string
	// Type is RMPPTypeStop or RMPPTypeAbort; Status the RMPPStatus.
	Type   uint8
	Status uint8
	// Local is true when we ended the transfer.
	Local          bool
	Request, Reply []byte
}

func (e *RMPPError) Error() string {
	kind := "ABORT"
	if e.Type == RMPPTypeStop {
		kind = "STOP"
	}
	who := "peer sent"
	if e.Local {
		who = "sent"
	}
	return fmt.Sprintf("%s to %s: RMPP transfer ended, %s %s with status %d", e.RPC, e.Target, who, kind, e.Status)
}

// Packets returns the request and the last MAD of the transfer.
func (e *RMPPError) Packets() (request, reply []byte) { return e.Request, e.Reply }

// ReplyError reports a reply that cannot be what was asked for: too short,
// or an attribute that does not decode.
type ReplyError struct {
	RPC            string
	Target         string
	Err            error
	Request, Reply []byte
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s to %s: bad reply: %v", e.RPC, e.Target, e.Err)
}

func (e *ReplyError) Unwrap() error { return e.Err }

// Packets returns the request and the reply.
func (e *ReplyError) Packets() (request, reply []byte) { return e.Request, e.Reply }

// AsPacketError finds the first error in err's chain that carries packets.
func AsPacketError(err error) (PacketError, bool) {
	var pe PacketError
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}

// Unanswered gives the request of an RPC that got no reply: the Request
// of a *TimeoutError or *DroppedError in err's chain; nil for any other
// error.
func Unanswered(err error) []byte {
	var te *TimeoutError
	var de *DroppedError
	switch {
	case errors.As(err, &te):
		return te.Request
	case errors.As(err, &de):
		return de.Request
	}
	return nil
}

// MKeySuspect reports whether err is an SMP that went unanswered (a
// *TimeoutError or *DroppedError of the SubnMgt classes) in the way an SMA
// discards a request whose M_Key does not match its port's (IBA 14.2.4.1:
// a Set always, a Get at protection levels 2 and 3, without a reply). set
// says whether the request was a SubnSet, for which a wrong or missing
// M_Key is the likeliest cause; key is the M_Key the request carried.
func MKeySuspect(err error) (suspect, set bool, key uint64) {
	req := Unanswered(err)
	if len(req) < offMKey+8 {
		return false, false, 0
	}
	class := iba.Class(req[offClass])
	if class != iba.ClassSubnMgt && class != iba.ClassSubnMgtDirected {
		return false, false, 0
	}
	return true, iba.Method(req[offMethod]) == iba.MethodSet, binary.BigEndian.Uint64(req[offMKey:])
}
