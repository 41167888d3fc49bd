package mad

import (
	"fmt"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// TraceKind says what a TraceEvent reports.
type TraceKind uint8

const (
	// TraceSend: a request went out (Try counts from 1).
	TraceSend TraceKind = iota
	// TraceReply: the reply that completes an RPC came (reassembled when
	// it was an RMPP transfer).
	TraceReply
	// TraceTimeout: a try ended without a reply; Err holds the transport's
	// report when it gave one.
	TraceTimeout
	// TraceRetry: the request is sent again after a timeout or BUSY.
	TraceRetry
	// TraceUnexpected: a MAD no RPC or server was waiting for.
	TraceUnexpected
	// TraceRequest: a request came in for a server (Serve).
	TraceRequest
	// TraceResponse: a server sent its reply.
	TraceResponse
	// TraceRMPP: an RMPP segment, ACK, STOP or ABORT was sent.
	TraceRMPP
)

var traceNames = [...]string{"send", "reply", "timeout", "retry", "unexpected", "request", "response", "rmpp"}

func (k TraceKind) String() string {
	if int(k) < len(traceNames) {
		return traceNames[k]
	}
	return fmt.Sprintf("TraceKind(%d)", k)
}

// TraceEvent is one thing the client did or saw. MAD is the packet
// concerned; the receiver of the event must not modify it.
type TraceEvent struct {
	Kind   TraceKind
	RPC    string
	Attr   string
	Target string
	Try    int
	Addr   Addr
	MAD    []byte
	Err    error
	// Elapsed is the time since the RPC started (reply and timeout).
	Elapsed time.Duration
}

// String gives the one line ibtool -d prints.
func (e TraceEvent) String() string {
	s := fmt.Sprintf("%s %s %s to %s", e.Kind, e.RPC, e.Attr, e.Target)
	switch e.Kind {
	case TraceSend, TraceRetry:
		s += fmt.Sprintf(" try %d", e.Try)
	case TraceReply, TraceTimeout:
		s += fmt.Sprintf(" try %d after %v", e.Try, e.Elapsed.Round(time.Microsecond))
	case TraceUnexpected, TraceRequest, TraceResponse, TraceRMPP:
		if h, ok := readHeader(e.MAD); ok {
			s = fmt.Sprintf("%s class 0x%02x method 0x%02x attr 0x%04x TID 0x%016x from/to LID %d", e.Kind, h.class, h.method, h.attrID, h.tid, e.Addr.LID)
			if r := readRMPP(e.MAD); r.active && classOf(iba.Class(h.class)).rmpp {
				s += fmt.Sprintf(" RMPP type %d seg %d data2 %d", r.typ, r.data1, r.data2)
			}
		}
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
