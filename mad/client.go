package mad

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// Defaults as infiniband-diags has them (libibmad: MAD_DEF_TIMEOUT_MS,
// MAD_DEF_RETRIES): each try waits 1000 ms, three tries in all.
const (
	DefaultTimeout = 1000 * time.Millisecond
	DefaultTries   = 3
)

// The ranges of the wait per try and the number of tries, of the options
// and of a Route: a wait beyond an hour or a thousand tries is a mistake
// (a flag in the wrong unit, an overflow), not a plan. Zero takes the
// default; anything else out of range fails every RPC with a
// *RangeError.
const (
	MaxTimeout = time.Hour
	MaxTries   = 1000
)

// ErrRange is matched (errors.Is) by every *RangeError.
var ErrRange = errors.New("mad: option out of range")

// RangeError is an option or a Route field out of its range.
type RangeError struct {
	What  string // "WithTimeout", "Route.Tries", ...
	Value any
	Range string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("mad: %s %v is out of range (%s)", e.What, e.Value, e.Range)
}

// Is makes errors.Is(err, ErrRange) true.
func (e *RangeError) Is(target error) bool { return target == ErrRange }

func checkTimeout(what string, d time.Duration) error {
	if d < 0 || d > MaxTimeout {
		return &RangeError{What: what, Value: d, Range: fmt.Sprintf("0 for the default, else up to %v", MaxTimeout)}
	}
	return nil
}

func checkTries(what string, n int) error {
	if n < 0 || n > MaxTries {
		return &RangeError{What: what, Value: n, Range: fmt.Sprintf("0 for the default, else 1 to %d", MaxTries)}
	}
	return nil
}

// RMPPWindow is the receive window this client offers a sender: how many
// segments may arrive before it acknowledges (IBA 13.6.3.2).
const RMPPWindow = 64

// maxRMPPSegments bounds a reassembly so a peer cannot make us buffer
// without end (about 200 MiB of SA records).
const maxRMPPSegments = 1 << 20

// Option configures a Client.
type Option func(*Client)

// WithTimeout sets the wait per try for routes that do not set their own:
// 0 keeps DefaultTimeout; a negative wait or one beyond MaxTimeout makes
// every RPC fail with a *RangeError.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if err := checkTimeout("WithTimeout", d); err != nil {
			c.optErr = err
		} else if d > 0 {
			c.timeout = d
		}
	}
}

// WithRetries sets how many times a request is sent before the RPC fails
// (infiniband-diags' --retries counts the same way: all sends), for routes
// that do not set their own: 0 keeps DefaultTries; a negative count or
// one beyond MaxTries makes every RPC fail with a *RangeError.
func WithRetries(n int) Option {
	return func(c *Client) {
		if err := checkTries("WithRetries", n); err != nil {
			c.optErr = err
		} else if n > 0 {
			c.tries = n
		}
	}
}

// WithTrace calls f for every send, reply, timeout, retry and unexpected
// MAD. f runs on the goroutine that saw the event and must not block.
func WithTrace(f func(TraceEvent)) Option { return func(c *Client) { c.trace = f } }

// WithBusyBackoff sets the first wait before a request answered BUSY is
// sent again; each further BUSY doubles it, up to the try timeout. 0
// keeps the default (10 ms); out of 0..MaxTimeout every RPC fails with a
// *RangeError.
func WithBusyBackoff(d time.Duration) Option {
	return func(c *Client) {
		if err := checkTimeout("WithBusyBackoff", d); err != nil {
			c.optErr = err
		} else if d > 0 {
			c.busyBackoff = d
		}
	}
}

// WithMKey sets the M_Key put into every SMP whose route carries none
// (Route.MKey 0): a subnet whose ports are M_Key protected (IBA 14.2.4)
// answers Sets, and at protection levels 2 and 3 Gets, only with it.
func WithMKey(k uint64) Option { return func(c *Client) { c.mkey = k } }

// WithSMKey sets the SM_Key put into every SA request whose route carries
// none (Route.SMKey 0; IBA 15.2.1.1): an SA shows trusted requesters what
// it hides from others.
func WithSMKey(k uint64) Option { return func(c *Client) { c.smkey = k } }

// WithPKeyIndex sets the index in the local port's P_Key table (IBA
// 10.9.2) of every GMP whose route carries none (Route.Addr.PKeyIndex 0):
// on a fabric whose management traffic runs in a partition other than the
// default one, the SA and the PMAs answer only in that partition
// (infiniband-diags' -Y/--pkey-idx). SMPs go out on QP0, where no P_Key is
// checked (IBA 10.9.3), and keep index 0.
func WithPKeyIndex(i uint16) Option { return func(c *Client) { c.pkeyIndex = i } }

// Client performs RPCs over a Transport. It is safe for concurrent use:
// any number of goroutines may call it, and one reader goroutine hands each
// reply to the caller whose TID it carries.
type Client struct {
	t           Transport
	recycler    Recycler // t, when it is one
	timeout     time.Duration
	tries       int
	busyBackoff time.Duration
	trace       func(TraceEvent)
	optErr      error // an option out of range: every RPC fails with it
	mkey, smkey uint64
	pkeyIndex   uint16

	tidHigh uint32
	tidLow  atomic.Uint32

	ctx    context.Context
	cancel context.CancelFunc
	dead   chan struct{} // closed when the reader stops
	rdErr  error         // why the reader stopped; read after dead
	wg     sync.WaitGroup

	// lastAgent holds, per class, the agent last asked for: every
	// request looks its agent up, and nearly all find it here without
	// taking mu.
	lastAgent [256]atomic.Pointer[agentEntry]

	mu      sync.Mutex
	agents  map[agentKey]int
	pending map[matchKey]*call
	sending map[sessionKey]*sendSession
	servers map[uint8]*server
	watch   map[context.Context]*ctxWatch // of pending async calls
	clock   tryClock                      // of their tries
}

type agentKey struct {
	class, version uint8
	server         bool
	oui            uint32
}

// agentEntry is an agent the client has registered.
type agentEntry struct {
	k  agentKey
	id int
}

// matchKey matches a reply to its request: the class and the low 32 bits of
// the TID (IBA C13-19.1.1; transports may rewrite the upper bits), in one
// word (a map hashes it faster than a struct).
type matchKey uint64

func makeMatchKey(class uint8, tid uint32) matchKey { return matchKey(class)<<32 | matchKey(tid) }

// sessionKey names an outgoing RMPP transfer; the peer's LID tells apart
// two requesters that chose the same TID.
type sessionKey struct {
	class uint8
	tid   uint32
	lid   uint16
}

// NewClient starts a client on t. Close stops it (and closes t).
func NewClient(t Transport, opts ...Option) *Client {
	c := &Client{
		t:           t,
		timeout:     DefaultTimeout,
		tries:       DefaultTries,
		busyBackoff: 10 * time.Millisecond,
		dead:        make(chan struct{}),
		agents:      map[agentKey]int{},
		pending:     map[matchKey]*call{},
		sending:     map[sessionKey]*sendSession{},
		servers:     map[uint8]*server{},
		watch:       map[context.Context]*ctxWatch{},
	}
	c.recycler, _ = t.(Recycler)
	for _, o := range opts {
		o(c)
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	c.tidHigh = binary.BigEndian.Uint32(seed[:4])
	c.tidLow.Store(binary.BigEndian.Uint32(seed[4:]))
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.readLoop()
	return c
}

// MKey is the M_Key the client puts into SMPs whose route has none
// (WithMKey).
func (c *Client) MKey() uint64 { return c.mkey }

// Transport returns the transport the client runs on.
func (c *Client) Transport() Transport { return c.t }

// LocalPort reads the attached end port.
func (c *Client) LocalPort(ctx context.Context) (LocalPort, error) { return c.t.LocalPort(ctx) }

// Close stops the reader, fails the RPCs in flight with ErrClosed and
// closes the transport.
func (c *Client) Close() error {
	c.cancel()
	err := c.t.Close()
	c.wg.Wait()
	return err
}

// nextTID gives a TID unique in this client by its low 32 bits.
func (c *Client) nextTID() uint64 {
	for {
		low := c.tidLow.Add(1)
		if low != 0 {
			return uint64(c.tidHigh)<<32 | uint64(low)
		}
	}
}

// agent registers (once) the agent for a class.
func (c *Client) agent(class, version uint8, server bool, methods []uint8, oui uint32) (int, error) {
	k := agentKey{class, version, server, oui}
	if e := c.lastAgent[class].Load(); e != nil && e.k == k {
		return e.id, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.agents[k]; ok {
		c.lastAgent[class].Store(&agentEntry{k, id})
		return id, nil
	}
	spec := AgentSpec{Class: class, ClassVersion: version, Methods: methods, OUI: oui}
	if classOf(iba.Class(class)).rmpp && c.t.KernelRMPP() {
		spec.RMPPVersion = 1
	}
	id, err := c.t.Register(spec)
	if err != nil {
		return 0, fmt.Errorf("registering an agent for class 0x%02x version %d: %w", class, version, err)
	}
	c.agents[k] = id
	c.lastAgent[class].Store(&agentEntry{k, id})
	return id, nil
}

// event is what the reader hands to a waiting call or RMPP session.
type event struct {
	p *Packet
}

type call struct {
	ch    chan event
	timer *time.Timer // the per-try timeout, made by the first await
	a     *asyncCall  // set for a call of Start, which has no ch
}

// callPool recycles the calls of single-MAD RPCs: a sweep makes one per
// MAD. The reader may still hand a late packet to a call that went back to
// the pool (it looked the call up before the RPC ended), so await checks
// every packet's TID.
var callPool = sync.Pool{New: func() any { return &call{ch: make(chan event, 4)} }}

func (w *call) drain() {
	for {
		select {
		case <-w.ch:
		default:
			return
		}
	}
}

func (c *Client) deliver(ch chan event, p *Packet) bool {
	select {
	case ch <- event{p}:
		return true
	default:
		// The waiter is behind by a full buffer: drop, as the fabric
		// would; RMPP and retries recover.
		return false
	}
}

func (c *Client) readLoop() {
	defer c.wg.Done()
	for {
		p, err := c.t.Recv(c.ctx)
		if err != nil {
			if c.ctx.Err() != nil || errors.Is(err, ErrClosed) {
				c.rdErr = ErrClosed
			} else {
				c.rdErr = fmt.Errorf("receiving MADs: %w", err)
			}
			close(c.dead)
			c.failAsync(c.rdErr)
			return
		}
		c.dispatch(p)
	}
}

// dispatch routes one received packet: to the RPC waiting for it, to the
// RMPP transfer it acknowledges, or to the server for its class.
func (c *Client) dispatch(p *Packet) {
	h, ok := readHeader(p.MAD)
	if !ok {
		c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr, Err: errors.New("shorter than a MAD header")})
		return
	}
	mk := makeMatchKey(h.class, uint32(h.tid))
	if p.Err != nil {
		// The transport gave up on a request we sent: MAD is that request.
		w, a, try := c.replyTo(mk)
		switch {
		case a != nil:
			c.asyncReply(a, try, p)
		case w != nil:
			c.deliver(w.ch, p)
		}
		return
	}
	if classOf(iba.Class(h.class)).rmpp {
		if r := readRMPP(p.MAD); r.active && r.typ != RMPPTypeData {
			sk := sessionKey{h.class, uint32(h.tid), p.Addr.LID}
			c.mu.Lock()
			s := c.sending[sk]
			var w *call
			if s == nil {
				w = c.pending[mk]
			}
			c.mu.Unlock()
			switch {
			case s != nil:
				c.deliver(s.ch, p)
			case w != nil && r.typ != RMPPTypeAck:
				c.deliver(w.ch, p)
			default:
				c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr})
			}
			return
		}
	}
	if iba.Method(h.method).IsResponse() || iba.Method(h.method) == iba.MethodTrapRepress {
		w, a, try := c.replyTo(mk)
		switch {
		case a != nil:
			c.asyncReply(a, try, p)
		case w == nil || !c.deliver(w.ch, p):
			c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr})
		}
		return
	}
	c.mu.Lock()
	srv := c.servers[h.class]
	c.mu.Unlock()
	if srv == nil {
		c.emit(TraceEvent{Kind: TraceUnexpected, MAD: p.MAD, Addr: p.Addr})
		return
	}
	srv.handle(p)
}

// replyTo finds the RPC that a packet of key mk ends a try of: the call
// of Do waiting for it (w), or the async call (a) it makes the reader's
// own, with the number of its try out. It finds neither for an async
// call whose try's end another goroutine is handling: that try's reply,
// or the next's, will do.
func (c *Client) replyTo(mk matchKey) (w *call, a *asyncCall, try int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w = c.pending[mk]
	if w == nil || w.a == nil {
		return w, nil, 0
	}
	if a = w.a; !c.ownLocked(a) {
		return nil, nil, 0
	}
	return nil, a, a.try
}

func (c *Client) emit(e TraceEvent) {
	if c.trace != nil {
		c.trace(e)
	}
}

// Request is one RPC in raw form, for Do.
type Request struct {
	Target Target
	Class  iba.Class
	// Version is the class version; 0 takes the class's.
	Version uint8
	Method  iba.Method
	AttrID  uint16
	AttrMod uint32
	// Data is the attribute, placed at the class's data offset. For the
	// RMPP classes it may be longer than one MAD; it is then sent as an
	// RMPP transfer.
	Data []byte
	// DataOff, when not 0, places Data at this byte offset instead of the
	// class's data area (CongestionLog starts in the congestion control
	// log area, IBA A10.4.3.5).
	DataOff int
	// CompMask is the SA component mask (IBA 15.2.1.1).
	CompMask uint64
	// OUI is the vendor OUI of classes 0x30-0x4f.
	OUI uint32
	// Unchecked skips the legality check against the iba registry (for
	// attributes it does not know, or tests of a peer's error replies).
	Unchecked bool
}

// Reply is the answer to a request.
type Reply struct {
	// MAD is the reply: one MAD, or the RMPP transfer reassembled (the
	// first segment's header followed by every segment's data, as the
	// kernel hands it over).
	MAD  []byte
	Addr Addr
	// Status is the Status field without the SMP direction bit.
	Status uint16
	// Request is the request as sent (first segment for RMPP).
	Request []byte
	// Tries is how many sends it took.
	Tries int

	dataOff  int
	segments int // RMPP segments reassembled by the client
}

// Data is the reply's attribute data, after the class header.
func (r *Reply) Data() []byte {
	if len(r.MAD) < r.dataOff {
		return nil
	}
	return r.MAD[r.dataOff:]
}

// AttrOffset is the SA header's AttributeOffset in bytes: the stride of the
// records of a SubnAdmGetTableResp (IBA 15.2.1.1).
func (r *Reply) AttrOffset() int {
	if len(r.MAD) < offAttrOffset+2 {
		return 0
	}
	return int(binary.BigEndian.Uint16(r.MAD[offAttrOffset:])) * 8
}

// rpcName finds the IBA name of a method in a class.
func rpcName(class iba.Class, m iba.Method) string {
	if class == iba.ClassSubnMgtDirected {
		class = iba.ClassSubnMgt
	}
	for _, r := range iba.RPCs {
		if r.Method != m {
			continue
		}
		if r.Classes == nil {
			if class.IsVendor() {
				return r.Name
			}
			continue
		}
		for _, rc := range r.Classes {
			if rc == class {
				return r.Name
			}
		}
	}
	return fmt.Sprintf("%s(0x%02x)/class 0x%02x", m, uint8(m), uint8(class))
}

// lookupAttr finds attribute id of a class in the iba registry (the
// directed route class shares SubnMgt's attributes) and names it: by its
// number when the registry does not know it (s is then nil).
func lookupAttr(class iba.Class, id uint16) (s *iba.Struct, name string) {
	if class == iba.ClassSubnMgtDirected {
		class = iba.ClassSubnMgt
	}
	if s, ok := iba.LookupAttr(class, id); ok {
		return s, s.Name
	}
	return nil, fmt.Sprintf("attribute 0x%04x", id)
}

// Do performs one RPC: it builds the request, sends it, waits for the
// reply with retries, reassembles RMPP, and returns the reply, or a
// *StatusError when the reply's status reports an error (the reply is
// returned with it), a *TimeoutError, an *RMPPError, or an
// *IllegalRPCError before anything is sent.
func (c *Client) Do(ctx context.Context, req Request) (*Reply, error) {
	x := new(exchange)
	if err := c.prepare(ctx, req, x); err != nil {
		return nil, err
	}
	return x.run()
}

// prepare checks a request, registers its agent and lays out the MAD in
// x, which it fills in: all of an RPC up to its first send.
func (c *Client) prepare(ctx context.Context, req Request, x *exchange) error {
	if req.Target == nil {
		return errors.New("mad: request without a target")
	}
	if c.optErr != nil {
		return c.optErr
	}
	rt := req.Target.Route()
	if err := checkTimeout("Route.Timeout", rt.Timeout); err != nil {
		return fmt.Errorf("%s to %s: %w", rpcName(req.Class, req.Method), req.Target, err)
	}
	if err := checkTries("Route.Tries", rt.Tries); err != nil {
		return fmt.Errorf("%s to %s: %w", rpcName(req.Class, req.Method), req.Target, err)
	}
	if rt.MKey == 0 {
		rt.MKey = c.mkey
	}
	if rt.SMKey == 0 {
		rt.SMKey = c.smkey
	}
	class := req.Class
	if rt.DR != nil {
		if class != iba.ClassSubnMgt && class != iba.ClassSubnMgtDirected {
			return fmt.Errorf("%s to %s: a directed route carries only SMPs", rpcName(class, req.Method), req.Target)
		}
		if err := rt.DR.Validate(); err != nil {
			return fmt.Errorf("%s to %s: %w", rpcName(class, req.Method), req.Target, err)
		}
		class = iba.ClassSubnMgtDirected
	} else if class == iba.ClassSubnMgtDirected {
		return fmt.Errorf("%s to %s: directed route class without a directed route", rpcName(class, req.Method), req.Target)
	}
	name := rpcName(class, req.Method)
	s, aname := lookupAttr(class, req.AttrID)
	if !req.Unchecked && s != nil && !s.Allows(name) {
		return &IllegalRPCError{RPC: name, Attr: s.Name, Allowed: s.Methods}
	}
	ci := classOf(class)
	version := req.Version
	if version == 0 {
		version = ci.version
	}
	if req.DataOff != 0 && (req.DataOff < HeaderSize || req.DataOff >= Size || ci.rmpp) {
		return fmt.Errorf("%s %s to %s: data offset %d is not inside a single MAD's class data", name, aname, req.Target, req.DataOff)
	}
	single := Size - ci.dataOff
	if req.DataOff != 0 {
		single = Size - req.DataOff
	}
	if len(req.Data) > single && !ci.rmpp {
		return fmt.Errorf("%s %s to %s: %d bytes of data do not fit one MAD (%d)", name, aname, req.Target, len(req.Data), single)
	}
	var oui uint32
	if class.IsVendorOUI() {
		if req.OUI == 0 {
			return fmt.Errorf("%s %s to %s: a vendor-OUI class needs an OUI (IBA 13.4.9)", name, aname, req.Target)
		}
		oui = req.OUI
	}
	agent, err := c.agent(uint8(class), version, false, nil, oui)
	if err != nil {
		return err
	}
	tid := c.nextTID()
	mad := c.build(class, version, req, rt, ci, tid, &x.buf)
	timeout, tries := rt.Timeout, rt.Tries
	if timeout <= 0 {
		timeout = c.timeout
	}
	if tries <= 0 {
		tries = c.tries
	}
	addr := rt.Addr
	if class == iba.ClassSubnMgt || class == iba.ClassSubnMgtDirected {
		addr.QPN, addr.QKey = QP0, 0
		if class == iba.ClassSubnMgtDirected && (rt.DR.DrSLID == LIDPermissive || rt.DR.DrSLID == 0) {
			addr.LID = LIDPermissive
		}
	} else {
		if addr.PKeyIndex == 0 {
			addr.PKeyIndex = c.pkeyIndex
		}
		if addr.QPN == 0 {
			addr.QPN = QP1
		}
		if addr.QKey == 0 {
			addr.QKey = QP1QKey
		}
	}
	x.c, x.ctx, x.name, x.attr, x.tgt = c, ctx, name, aname, req.Target
	x.class, x.ci, x.agent, x.addr, x.tid = class, ci, agent, addr, tid
	x.timeout, x.tries, x.request = timeout, tries, mad
	x.pkt = Packet{Agent: agent, Addr: addr, MAD: mad, Timeout: timeout}
	return nil
}

// build lays out the request MAD; for an RMPP class with more data than a
// MAD holds, it is the whole transfer (header and all the data), which
// sendRequest segments. A MAD of Size bytes is laid out in buf, which is
// zero.
func (c *Client) build(class iba.Class, version uint8, req Request, rt Route, ci classInfo, tid uint64, buf *[Size]byte) []byte {
	b := buf[:]
	if n := ci.dataOff + len(req.Data); n > Size {
		b = make([]byte, n)
	}
	b[offBaseVersion] = 1
	b[offClass] = uint8(class)
	b[offClassVersion] = version
	b[offMethod] = uint8(req.Method)
	binary.BigEndian.PutUint64(b[offTID:], tid)
	binary.BigEndian.PutUint16(b[offAttrID:], req.AttrID)
	binary.BigEndian.PutUint32(b[offAttrMod:], req.AttrMod)
	switch {
	case class == iba.ClassSubnMgt:
		binary.BigEndian.PutUint64(b[offMKey:], rt.MKey)
	case class == iba.ClassSubnMgtDirected:
		binary.BigEndian.PutUint64(b[offMKey:], rt.MKey)
		dr := rt.DR
		b[offHopCount] = uint8(len(dr.Path) - 1)
		b[offHopPointer] = 0
		slid, dlid := dr.DrSLID, dr.DrDLID
		if slid == 0 {
			slid = LIDPermissive
		}
		if dlid == 0 {
			dlid = LIDPermissive
		}
		binary.BigEndian.PutUint16(b[offDrSLID:], slid)
		binary.BigEndian.PutUint16(b[offDrDLID:], dlid)
		copy(b[offInitialPath:offReturnPath], dr.Path)
	case class == iba.ClassSubnAdm:
		b[offRMPPVersion] = 1
		b[offRMPPFlags] = 0x1f << 3
		binary.BigEndian.PutUint64(b[offSMKey:], rt.SMKey)
		binary.BigEndian.PutUint64(b[offCompMask:], req.CompMask)
	case class == iba.ClassCongestionCtl:
		binary.BigEndian.PutUint64(b[offCCKey:], rt.CCKey)
	case class.IsVendorOUI():
		b[offRMPPVersion] = 1
		b[offVendorOUI] = byte(req.OUI >> 16)
		b[offVendorOUI+1] = byte(req.OUI >> 8)
		b[offVendorOUI+2] = byte(req.OUI)
	}
	if req.DataOff != 0 {
		copy(b[req.DataOff:], req.Data)
	} else {
		copy(b[ci.dataOff:], req.Data)
	}
	return b
}

// exchange is one RPC in flight.
type exchange struct {
	c       *Client
	ctx     context.Context
	name    string
	attr    string
	tgt     Target
	target  atomic.Pointer[string] // tgt.String(), made when a message or trace needs it
	class   iba.Class
	ci      classInfo
	agent   int
	addr    Addr
	tid     uint64
	timeout time.Duration
	tries   int
	request []byte
	// pkt is the request as every try sends it. It is written before the
	// first send only: a try may go out while the transport still holds
	// the one before (Transport.Send copies what it keeps).
	pkt Packet
	buf [Size]byte // the request, unless an RMPP transfer needs more
}

// tname names the target; building the name costs, so it waits until an
// error or a trace needs it.
func (x *exchange) tname() string {
	if s := x.target.Load(); s != nil {
		return *s
	}
	s := x.tgt.String()
	x.target.Store(&s)
	return s
}

func (x *exchange) key() matchKey { return makeMatchKey(uint8(x.class), uint32(x.tid)) }

func (x *exchange) run() (*Reply, error) {
	c := x.c
	// A reply is one packet; an RMPP transfer brings a window of segments.
	depth := 4
	if x.ci.rmpp {
		depth = 4 * RMPPWindow
	}
	var w *call
	if x.ci.rmpp {
		w = &call{ch: make(chan event, depth)}
	} else {
		w = callPool.Get().(*call)
	}
	c.mu.Lock()
	c.pending[x.key()] = w
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, x.key())
		c.mu.Unlock()
		if !x.ci.rmpp {
			w.drain()
			callPool.Put(w)
		}
	}()

	first := x.request
	segmented := x.ci.rmpp && len(x.request) > Size && !c.t.KernelRMPP()
	busyWait := c.busyBackoff
	var last error
	waited := 0 // tries that ended otherwise than by the transport's drop
	start := time.Now()
	for try := 1; try <= x.tries; try++ {
		if try > 1 {
			x.traceRetry(try, first, last)
		}
		if segmented {
			segs := segment(x.request, x.ci.dataOff)
			first = segs[0]
			if err := x.sendTransfer(segs); err != nil {
				var te *TimeoutError
				if errors.As(err, &te) {
					last = err
					waited++
					continue
				}
				return nil, err
			}
		} else if err := x.send(try); err != nil {
			return nil, err
		}
		rep, err := x.await(w, try, start)
		if err == nil {
			busy, err := x.settle(rep, first, try, start)
			if busy {
				last = err
				waited++
				select {
				case <-time.After(busyWait):
				case <-x.ctx.Done():
					return nil, x.ctxError()
				}
				busyWait = min(2*busyWait, x.timeout)
				continue
			}
			return rep, err
		}
		if !errors.Is(err, errTryTimeout) {
			return nil, err
		}
		var tt *tryTimeout
		if errors.As(err, &tt) {
			last = tt.cause
		}
		if tt == nil || tt.cause == nil {
			waited++
		}
	}
	return nil, x.noReplyError(first, last, waited, start)
}

// settle fills in a reply that ends try and says what it means: busy when
// the responder answered BUSY and tries are left (the error is then the
// BUSY status, to report should no later try get an answer), else the
// RPC's result.
func (x *exchange) settle(rep *Reply, first []byte, try int, start time.Time) (busy bool, err error) {
	h, _ := readHeader(rep.MAD)
	rep.Status = h.statusBits()
	rep.Request = first
	rep.Tries = try
	if rep.Status&StatusBusy != 0 && try < x.tries {
		return true, x.statusError(rep)
	}
	if x.c.trace != nil {
		x.c.emit(TraceEvent{Kind: TraceReply, RPC: x.name, Attr: x.attr, Target: x.tname(), Try: try, MAD: rep.MAD, Addr: rep.Addr, Elapsed: time.Since(start)})
	}
	if rep.Status != 0 {
		return false, x.statusError(rep)
	}
	return false, nil
}

// fail names the RPC in err, which ended it.
func (x *exchange) fail(err error) error {
	return fmt.Errorf("%s %s to %s: %w", x.name, x.attr, x.tname(), err)
}

// ctxError is the RPC's failure when its context ended.
func (x *exchange) ctxError() error { return x.fail(x.ctx.Err()) }

// timeoutError is the RPC's failure when every try went unanswered; last
// is what ended the last one, when something said.
func (x *exchange) timeoutError(first []byte, last error) *TimeoutError {
	return &TimeoutError{RPC: x.name, Attr: x.attr, Target: x.tname(), Tries: x.tries, Timeout: x.timeout, Last: last, Request: first}
}

// noReplyError is the RPC's failure when no try got a reply: a
// *DroppedError when the transport reported every try dropped (waited,
// the tries that ran out their timeout or got BUSY, is 0), else a
// *TimeoutError.
func (x *exchange) noReplyError(first []byte, last error, waited int, start time.Time) error {
	if waited == 0 && last != nil {
		return &DroppedError{RPC: x.name, Attr: x.attr, Target: x.tname(), Tries: x.tries, Elapsed: time.Since(start), Last: last, Request: first}
	}
	return x.timeoutError(first, last)
}

// traceTimeout reports the end of an unanswered try.
func (x *exchange) traceTimeout(try int, cause error, start time.Time) {
	if x.c.trace != nil {
		x.c.emit(TraceEvent{Kind: TraceTimeout, RPC: x.name, Attr: x.attr, Target: x.tname(), Try: try, MAD: x.request, Addr: x.addr, Err: cause, Elapsed: time.Since(start)})
	}
}

// traceRetry reports that try is about to be sent after last ended the one
// before.
func (x *exchange) traceRetry(try int, first []byte, last error) {
	if x.c.trace != nil {
		x.c.emit(TraceEvent{Kind: TraceRetry, RPC: x.name, Attr: x.attr, Target: x.tname(), Try: try, MAD: first, Addr: x.addr, Err: last})
	}
}

func (x *exchange) statusError(rep *Reply) *StatusError {
	return &StatusError{
		RPC: x.name, Attr: x.attr, Class: x.class, Method: iba.Method(x.request[offMethod]),
		AttrID: binary.BigEndian.Uint16(x.request[offAttrID:]), Target: x.tname(),
		Status: rep.Status, Request: rep.Request, Reply: rep.MAD,
	}
}

// send sends try number try of the request.
func (x *exchange) send(try int) error {
	if x.c.trace != nil {
		x.c.emit(TraceEvent{Kind: TraceSend, RPC: x.name, Attr: x.attr, Target: x.tname(), Try: try, MAD: x.request, Addr: x.addr})
	}
	if err := x.c.t.Send(x.ctx, &x.pkt); err != nil {
		return x.fail(fmt.Errorf("sending: %w", err))
	}
	return nil
}

// errTryTimeout ends one try; tryTimeout carries the transport's report.
var errTryTimeout = errors.New("try timed out")

type tryTimeout struct{ cause error }

func (t *tryTimeout) Error() string        { return errTryTimeout.Error() }
func (t *tryTimeout) Is(target error) bool { return target == errTryTimeout }

// await waits for the reply of one try, reassembling an RMPP transfer.
func (x *exchange) await(w *call, try int, start time.Time) (*Reply, error) {
	c := x.c
	// A pooled call brings its timer: a sweep makes one per MAD. (Since
	// Go 1.23 Reset and Stop leave no stale tick in the channel.)
	timer := w.timer
	if timer == nil {
		timer = time.NewTimer(x.timeout)
		w.timer = timer
	} else {
		timer.Reset(x.timeout)
	}
	defer timer.Stop()
	var ra *reassembly
	idle := 0
	for {
		select {
		case <-x.ctx.Done():
			if ra != nil {
				ra.abort(RMPPStatusUnspecified)
			}
			return nil, x.ctxError()
		case <-c.dead:
			return nil, x.fail(c.rdErr)
		case <-timer.C:
			if ra == nil {
				x.traceTimeout(try, nil, start)
				return nil, &tryTimeout{}
			}
			// A transfer under way: prompt the sender with our last ACK
			// rather than asking again (IBA 13.6.3.3).
			idle++
			if idle >= x.tries {
				ra.abort(RMPPStatusTotalTimeout)
				x.traceTimeout(try, nil, start)
				return nil, &TimeoutError{RPC: x.name, Attr: x.attr, Target: x.tname(), Tries: idle, Timeout: x.timeout,
					Last: fmt.Errorf("RMPP transfer stalled after %d segments", ra.expected-1), Request: x.request}
			}
			ra.ack()
			timer.Reset(x.timeout)
		case ev := <-w.ch:
			p := ev.p
			if h, ok := readHeader(p.MAD); !ok || uint32(h.tid) != uint32(x.tid) {
				continue // for an RPC that used this call before
			}
			if p.Err != nil {
				// The transport dropped our request (ibsim's status 110,
				// the kernel's ETIMEDOUT): this try is over.
				x.traceTimeout(try, p.Err, start)
				if ra == nil {
					return nil, &tryTimeout{cause: p.Err}
				}
				continue
			}
			r := readRMPP(p.MAD)
			if !x.ci.rmpp || c.t.KernelRMPP() || !r.active {
				return &Reply{MAD: p.MAD, Addr: p.Addr, dataOff: x.ci.dataOff}, nil
			}
			switch r.typ {
			case RMPPTypeStop, RMPPTypeAbort:
				return nil, &RMPPError{RPC: x.name, Target: x.tname(), Type: r.typ, Status: r.status, Request: x.request, Reply: p.MAD}
			case RMPPTypeData:
			default:
				continue
			}
			if r.data1 == 0 && ra == nil {
				// Not segmented at all: OpenSM behind ibsim (no kernel
				// RMPP) sends the first 256 bytes of its table this way.
				return &Reply{MAD: p.MAD, Addr: p.Addr, dataOff: x.ci.dataOff}, nil
			}
			if ra == nil {
				if r.data1 != 1 || r.flags&RMPPFlagFirst == 0 {
					continue // the first segment was lost; the sender resends it
				}
				ra = &reassembly{x: x, addr: p.Addr, hdrLen: x.ci.dataOff, expected: 1, windowLast: 1}
			}
			done, err := ra.add(p.MAD, r)
			if err != nil {
				return nil, err
			}
			if ra.progressed {
				idle = 0
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				timer.Reset(x.timeout)
			}
			if done {
				return &Reply{MAD: ra.result(), Addr: ra.addr, dataOff: x.ci.dataOff, segments: int(ra.expected - 1)}, nil
			}
		}
	}
}
