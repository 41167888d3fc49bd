// Package madtest provides in-memory mad.Transports for tests, in the
// manner of nltest: New answers every request with a Go function, Pipe joins
// two transports back to back so that a mad.Client's Serve can answer
// another client. Options drop packets, rewrite TIDs as ibsim does, or
// claim kernel RMPP.
package madtest

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Responder answers one request sent on the transport with the packets to
// deliver back (none to stay silent). It runs on its own goroutine per
// request and may block.
type Responder func(req *mad.Packet) []*mad.Packet

// Option configures a Transport.
type Option func(*Transport)

// WithDrop loses every packet sent for which drop returns true, as a lossy
// fabric would: nothing is reported.
func WithDrop(drop func(p *mad.Packet) bool) Option { return func(t *Transport) { t.drop = drop } }

// WithTIDRewrite overwrites the upper 32 bits of the TID of every packet
// delivered, as ibsim and the kernel do.
func WithTIDRewrite() Option { return func(t *Transport) { t.rewrite = true } }

// WithKernelRMPP makes KernelRMPP report true.
func WithKernelRMPP() Option { return func(t *Transport) { t.kernelRMPP = true } }

// WithPort sets what LocalPort returns; received packets carry its LID as
// their source at the peer.
func WithPort(p mad.LocalPort) Option { return func(t *Transport) { t.port = p } }

// Transport is an in-memory mad.Transport.
type Transport struct {
	port       mad.LocalPort
	drop       func(p *mad.Packet) bool
	rewrite    bool
	kernelRMPP bool
	responder  Responder
	peer       *Transport

	in        chan *mad.Packet
	closed    chan struct{}
	closeOnce sync.Once

	mu     sync.Mutex
	agents []mad.AgentSpec

	sent, dropped atomic.Int64
}

const queueLen = 8192

func newTransport(opts []Option) *Transport {
	t := &Transport{
		port:   mad.LocalPort{Name: "madtest/1", PortNum: 1, LID: 1, SMLID: 1, GIDPrefix: 0xfe80 << 48},
		in:     make(chan *mad.Packet, queueLen),
		closed: make(chan struct{}),
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// New returns a transport whose requests r answers.
func New(r Responder, opts ...Option) *Transport {
	t := newTransport(opts)
	t.responder = r
	return t
}

// Pipe returns two transports joined back to back: what one sends, the
// other receives, with the sender's LID as the source address. Options
// apply to both ends.
func Pipe(aOpts, bOpts []Option) (a, b *Transport) {
	a, b = newTransport(aOpts), newTransport(bOpts)
	a.peer, b.peer = b, a
	return a, b
}

// Register records the agent and returns its number.
func (t *Transport) Register(spec mad.AgentSpec) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.agents = append(t.agents, spec)
	return len(t.agents) - 1, nil
}

// Agents returns the agents registered so far.
func (t *Transport) Agents() []mad.AgentSpec {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]mad.AgentSpec(nil), t.agents...)
}

// Send delivers a copy of p to the responder or the peer, unless dropped.
func (t *Transport) Send(ctx context.Context, p *mad.Packet) error {
	select {
	case <-t.closed:
		return mad.ErrClosed
	default:
	}
	if len(p.MAD) < mad.HeaderSize {
		return errors.New("madtest: MAD shorter than its header")
	}
	t.sent.Add(1)
	q := &mad.Packet{Agent: p.Agent, Addr: p.Addr, MAD: append([]byte(nil), p.MAD...), Timeout: p.Timeout}
	if t.drop != nil && t.drop(q) {
		t.dropped.Add(1)
		return nil
	}
	if t.peer != nil {
		q.Addr.LID = t.port.LID
		q.Addr.GRH = nil
		t.peer.deliver(q)
		return nil
	}
	if t.responder != nil {
		if t.rewrite {
			rewriteTID(q.MAD)
		}
		go func() {
			for _, r := range t.responder(q) {
				if r != nil {
					t.deliver(r)
				}
			}
		}()
	}
	return nil
}

func rewriteTID(b []byte) {
	if len(b) >= 16 {
		binary.BigEndian.PutUint32(b[8:], 0xdead0000|binary.BigEndian.Uint32(b[8:])&0xffff)
	}
}

func (t *Transport) deliver(p *mad.Packet) {
	if t.rewrite {
		rewriteTID(p.MAD)
	}
	select {
	case <-t.closed:
	case t.in <- p:
	default:
		t.dropped.Add(1) // a full receive queue loses packets, as a QP would
	}
}

// Recv returns the next delivered packet.
func (t *Transport) Recv(ctx context.Context) (*mad.Packet, error) {
	select {
	case p := <-t.in:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.closed:
		return nil, mad.ErrClosed
	}
}

// LocalPort returns the configured port.
func (t *Transport) LocalPort(ctx context.Context) (mad.LocalPort, error) { return t.port, nil }

// KernelRMPP reports the WithKernelRMPP option.
func (t *Transport) KernelRMPP() bool { return t.kernelRMPP }

// Close makes Recv and Send return mad.ErrClosed.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() { close(t.closed) })
	return nil
}

// Sent counts the packets sent, dropped ones included; Dropped those lost.
func (t *Transport) Sent() int64    { return t.sent.Load() }
func (t *Transport) Dropped() int64 { return t.dropped.Load() }

// Header is the common MAD header of a request, decoded for responders.
type Header struct {
	Class   iba.Class
	Version uint8
	Method  iba.Method
	Status  uint16
	TID     uint64
	AttrID  uint16
	AttrMod uint32
}

// ParseHeader decodes the common header (IBA 13.4.3); ok is false when b is
// too short.
func ParseHeader(b []byte) (h Header, ok bool) {
	if len(b) < mad.HeaderSize {
		return h, false
	}
	return Header{
		Class: iba.Class(b[1]), Version: b[2], Method: iba.Method(b[3]),
		Status: binary.BigEndian.Uint16(b[4:]), TID: binary.BigEndian.Uint64(b[8:]),
		AttrID: binary.BigEndian.Uint16(b[16:]), AttrMod: binary.BigEndian.Uint32(b[20:]),
	}, true
}

// Data returns the attribute data of a request.
func Data(req *mad.Packet) []byte {
	h, ok := ParseHeader(req.MAD)
	off := mad.DataOffset(h.Class)
	if !ok || len(req.MAD) < off {
		return nil
	}
	return req.MAD[off:]
}

// Reply builds the response to req: its header with the response method
// and status, and data at the class's data offset. An SMP reply gets the
// direction bit.
func Reply(req *mad.Packet, status uint16, data []byte) *mad.Packet {
	h, _ := ParseHeader(req.MAD)
	off := mad.DataOffset(h.Class)
	b := make([]byte, max(mad.Size, off+len(data)))
	copy(b[:min(off, len(req.MAD))], req.MAD)
	b[3] = byte(h.Method.Response())
	if h.Class == iba.ClassSubnMgtDirected {
		status |= 0x8000
	}
	binary.BigEndian.PutUint16(b[4:], status)
	copy(b[off:], data)
	return &mad.Packet{Addr: req.Addr, MAD: b}
}

// DroppedReport builds the report a transport gives for a request it dropped
// (ibsim's status 110): the request with Err set.
func DroppedReport(req *mad.Packet, err error) *mad.Packet {
	return &mad.Packet{Addr: req.Addr, MAD: req.MAD, Err: err}
}
