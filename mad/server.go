package mad

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/rdmakit/rdmakit/iba"
)

// ServerRequest is one request that Serve received.
type ServerRequest struct {
	// Addr is where it came from; the reply goes back there.
	Addr    Addr
	MAD     []byte
	Class   iba.Class
	Version uint8
	Method  iba.Method
	AttrID  uint16
	AttrMod uint32
	TID     uint64

	dataOff int
}

// Data is the request's attribute data, after the class header.
func (r *ServerRequest) Data() []byte {
	if len(r.MAD) < r.dataOff {
		return nil
	}
	return r.MAD[r.dataOff:]
}

// CompMask is the SA component mask of a SubnAdm request (IBA 15.2.1.1).
func (r *ServerRequest) CompMask() uint64 {
	if r.Class != iba.ClassSubnAdm || len(r.MAD) < offCompMask+8 {
		return 0
	}
	return binary.BigEndian.Uint64(r.MAD[offCompMask:])
}

// SMKey is the SM_Key of a SubnAdm request.
func (r *ServerRequest) SMKey() uint64 {
	if r.Class != iba.ClassSubnAdm || len(r.MAD) < offSMKey+8 {
		return 0
	}
	return binary.BigEndian.Uint64(r.MAD[offSMKey:])
}

// ServerReply is a handler's answer.
type ServerReply struct {
	// Status is the reply's Status field (0 for success).
	Status uint16
	// Data is the attribute data. In the RMPP classes it may be longer than
	// one MAD (a SubnAdmGetTableResp's records) and is sent as an RMPP
	// transfer.
	Data []byte
	// AttrOffset is the stride of SA records in bytes, a multiple of 8
	// (IBA 15.2.1.1); it goes into the SA header of SubnAdm replies.
	AttrOffset int
}

// Handler answers one request. A nil reply and nil error sends nothing; an
// error sends an error reply: a *StatusError's status, the status of the
// sentinel it matches (ErrMethodAttrUnsupported, ErrSANoRecords, ...), or
// ErrInvalidField's for any other error.
type Handler func(ctx context.Context, req *ServerRequest) (*ServerReply, error)

type server struct {
	c       *Client
	ctx     context.Context
	class   iba.Class
	version uint8
	methods []iba.Method
	agent   int
	h       Handler
	sem     chan struct{}
}

// maxServerInFlight bounds the requests a server handles at once; more are
// dropped, as a busy agent's would be, and the requesters retry.
const maxServerInFlight = 256

// Serve answers requests of a class until ctx ends: it registers a server
// agent for the methods, runs h for each request on its own goroutine and
// sends the reply, an error reply, or for the RMPP classes an RMPP transfer
// (IBA 13.6) when the reply does not fit one MAD or is a GetTableResp.
// Requests of another class version get a bad-version reply, methods not
// ServeOption adjusts Serve.
type ServeOption func(*serveOptions)

type serveOptions struct {
	oui   uint32
	ready func()
}

// WithReady calls f once Serve delivers requests to its handler: the agent
// is registered with the transport and the class is the server's. A
// request that arrives before is dropped, so whoever starts a server and
// then sends it requests waits for this.
func WithReady(f func()) ServeOption { return func(o *serveOptions) { o.ready = f } }

// WithOUI names the OUI of a vendor-OUI class (0x30-0x4f) to serve: the
// kernel (umad) delivers such requests only to an agent registered with it
// and refuses to register a vendor-OUI server without one; ibsim and the
// in-process simulator do not look at it.
func WithOUI(oui uint32) ServeOption { return func(o *serveOptions) { o.oui = oui } }

// listed an unsupported-method one. One Serve per class at a time.
func (c *Client) Serve(ctx context.Context, class iba.Class, version uint8, methods []iba.Method, h Handler, opts ...ServeOption) error {
	if version == 0 {
		version = classOf(class).version
	}
	var so serveOptions
	for _, o := range opts {
		o(&so)
	}
	ms := make([]uint8, len(methods))
	for i, m := range methods {
		ms[i] = uint8(m)
	}
	agent, err := c.agent(uint8(class), version, true, ms, so.oui)
	if err != nil {
		return fmt.Errorf("serving class 0x%02x: %w", uint8(class), err)
	}
	s := &server{c: c, ctx: ctx, class: class, version: version, methods: slices.Clone(methods), agent: agent, h: h, sem: make(chan struct{}, maxServerInFlight)}
	c.mu.Lock()
	if _, dup := c.servers[uint8(class)]; dup {
		c.mu.Unlock()
		return fmt.Errorf("serving class 0x%02x: already served", uint8(class))
	}
	c.servers[uint8(class)] = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.servers, uint8(class))
		c.mu.Unlock()
	}()
	if so.ready != nil {
		so.ready()
	}
	select {
	case <-ctx.Done():
		return nil
	case <-c.dead:
		return fmt.Errorf("serving class 0x%02x: %w", uint8(class), c.rdErr)
	}
}

// handle runs on the reader goroutine: it must not block.
func (s *server) handle(p *Packet) {
	select {
	case s.sem <- struct{}{}:
	default:
		s.c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr, Err: errors.New("server overloaded, request dropped")})
		return
	}
	go func() {
		defer func() { <-s.sem }()
		s.serve(p)
	}()
}

func (s *server) serve(p *Packet) {
	c := s.c
	c.emit(TraceEvent{Kind: TraceRequest, MAD: p.MAD, Addr: p.Addr})
	h, _ := readHeader(p.MAD)
	ci := classOf(s.class)
	if ci.rmpp && !c.t.KernelRMPP() {
		if r := readRMPP(p.MAD); r.active {
			if r.typ != RMPPTypeData || r.flags&(RMPPFlagFirst|RMPPFlagLast) != RMPPFlagFirst|RMPPFlagLast {
				// Requests of more than one segment are not served.
				s.sendRaw(p.Addr, control(p.MAD, RMPPTypeAbort, RMPPStatusUnsupported, 0, 0))
				return
			}
			s.sendRaw(p.Addr, control(p.MAD, RMPPTypeAck, RMPPStatusNormal, r.data1, r.data1))
		}
	}
	if len(p.MAD) < ci.dataOff {
		return
	}
	switch {
	case h.version != s.version:
		s.reply(p, h, ci, &ServerReply{Status: StatusBadVersion, Data: p.MAD[ci.dataOff:]})
		return
	case !slices.Contains(s.methods, iba.Method(h.method)):
		s.reply(p, h, ci, &ServerReply{Status: StatusMethodUnsupported, Data: p.MAD[ci.dataOff:]})
		return
	}
	req := &ServerRequest{
		Addr: p.Addr, MAD: p.MAD, Class: s.class, Version: h.version, Method: iba.Method(h.method),
		AttrID: h.attrID, AttrMod: h.attrMod, TID: h.tid, dataOff: ci.dataOff,
	}
	rep, err := s.h(s.ctx, req)
	if err != nil {
		rep = &ServerReply{Status: statusOf(err), Data: p.MAD[ci.dataOff:min(len(p.MAD), Size)]}
		if s.class == iba.ClassSubnAdm {
			rep.Data = nil
		}
	}
	if rep == nil {
		return
	}
	s.reply(p, h, ci, rep)
}

// statusOf maps a handler's error to a Status field.
func statusOf(err error) uint16 {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	for _, m := range []struct {
		err    error
		status uint16
	}{
		{ErrBusy, StatusBusy},
		{ErrBadVersion, StatusBadVersion},
		{ErrMethodUnsupported, StatusMethodUnsupported},
		{ErrMethodAttrUnsupported, StatusMethodAttrUnsupported},
		{ErrInvalidField, StatusInvalidField},
	} {
		if errors.Is(err, m.err) {
			return m.status
		}
	}
	for code, e := range saCodeErrs {
		if e != nil && errors.Is(err, e) {
			return SAStatus(uint8(code))
		}
	}
	return StatusInvalidField
}

func (s *server) sendRaw(a Addr, b []byte) {
	s.c.emit(TraceEvent{Kind: TraceRMPP, MAD: b, Addr: a})
	_ = s.c.t.Send(s.ctx, &Packet{Agent: s.agent, Addr: gsiAddr(a), MAD: b})
}

// reply builds the response from the request's header (IBA 13.4.6.3: same
// TID, class, attribute; the response method) and sends it.
func (s *server) reply(p *Packet, h header, ci classInfo, rep *ServerReply) {
	c := s.c
	m := iba.Method(h.method)
	resp := m.Response()
	if m == iba.MethodTrap {
		resp = iba.MethodTrapRepress
	}
	n := max(Size, ci.dataOff+len(rep.Data))
	b := make([]byte, n)
	copy(b[:ci.dataOff], p.MAD)
	b[offMethod] = uint8(resp)
	status := rep.Status
	if s.class == iba.ClassSubnMgtDirected {
		status |= 0x8000 // the direction bit: a response
	}
	binary.BigEndian.PutUint16(b[offStatus:], status)
	copy(b[ci.dataOff:], rep.Data)
	if s.class == iba.ClassSubnAdm {
		// C15-0.1.5: SM_Key is 0 in every response.
		binary.BigEndian.PutUint64(b[offSMKey:], 0)
		binary.BigEndian.PutUint16(b[offAttrOffset:], uint16(rep.AttrOffset/8))
	}
	addr := gsiAddr(p.Addr)
	if s.class == iba.ClassSubnMgt || s.class == iba.ClassSubnMgtDirected {
		addr = p.Addr
	}
	if ci.rmpp {
		for i := offRMPPVersion; i < RMPPHeaderSize; i++ {
			b[i] = 0
		}
		b[offRMPPVersion] = 1
		b[offRMPPFlags] = 0x1f << 3
	}
	rmpp := ci.rmpp && (n > Size || resp == iba.MethodGetTableResp)
	if rmpp {
		// An RMPP transfer carries the data and no padding: PayloadLength
		// (IBA 13.6.2.3) must not count the rest of a short last MAD as
		// records.
		b = b[:ci.dataOff+len(rep.Data)]
	}
	switch {
	case rmpp && c.t.KernelRMPP():
		// The kernel segments a buffer flagged active (what python-rdma's
		// send_rmpp_reply hands it).
		setRMPP(b, RMPPTypeData, RMPPFlagActive, 0, 0, 0)
	case rmpp:
		segs := segment(b, ci.dataOff)
		c.emit(TraceEvent{Kind: TraceResponse, MAD: segs[0], Addr: addr})
		_ = c.sendTransfer(transfer{
			ctx: s.ctx, key: sessionKey{h.class, uint32(h.tid), p.Addr.LID}, agent: s.agent, addr: addr,
			segs: segs, timeout: c.timeout, tries: c.tries, rpc: rpcName(s.class, resp), target: fmt.Sprintf("LID %d", p.Addr.LID),
		})
		return
	}
	c.emit(TraceEvent{Kind: TraceResponse, MAD: b, Addr: addr})
	_ = c.t.Send(s.ctx, &Packet{Agent: s.agent, Addr: addr, MAD: b})
}
