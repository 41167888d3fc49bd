package mad

import "errors"

// ErrClosed is returned by a Transport or Client used after Close.
var ErrClosed = errors.New("mad: transport closed")

// ErrTimeout is matched (errors.Is) by every *TimeoutError: no reply came
// within the path's timeout after all its tries.
var ErrTimeout = errors.New("mad: timed out")

// ErrDropped is matched (errors.Is) by every *DroppedError: the transport
// reported each try dropped, so no reply will come.
var ErrDropped = errors.New("mad: request dropped")

// ErrIllegalRPC is matched by every *IllegalRPCError.
var ErrIllegalRPC = errors.New("mad: RPC not allowed for this attribute")

// Sentinels matched (errors.Is) by a *StatusError that carries the status
// (IBA 13.4.7, table 106).
var (
	ErrBusy                  = errors.New("mad: busy")
	ErrRedirect              = errors.New("mad: redirect required")
	ErrBadVersion            = errors.New("mad: bad class version")
	ErrMethodUnsupported     = errors.New("mad: method not supported")
	ErrMethodAttrUnsupported = errors.New("mad: method/attribute combination not supported")
	ErrInvalidField          = errors.New("mad: invalid attribute or modifier value")
)

// Sentinels for the SA class-specific status codes (IBA 15.2.1.1, table
// 184), matched by a *StatusError of a SubnAdm reply.
var (
	ErrSANoResources               = errors.New("SA: no resources")
	ErrSAReqInvalid                = errors.New("SA: request invalid")
	ErrSANoRecords                 = errors.New("SA: no records")
	ErrSATooManyRecords            = errors.New("SA: too many records")
	ErrSAReqInvalidGID             = errors.New("SA: invalid GID")
	ErrSAReqInsufficientComponents = errors.New("SA: insufficient components")
	ErrSAReqDenied                 = errors.New("SA: request denied")
)
