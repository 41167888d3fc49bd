package ibsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/mmsg"
	"github.com/rdmakit/rdmakit/mad"
)

// Timeouts of the control channel and of a blocked send. ibsim answers a
// control request at once or never (it drops malformed ones), and reads
// data packets as fast as it can process them.
const (
	CtlTimeout  = 2 * time.Second
	SendTimeout = 5 * time.Second
)

// Transport is a mad.Transport speaking ibsim's client protocol: the real
// ibsim, or any server of the same protocol. It is one simulator client
// slot, attached to one node port.
type Transport struct {
	cfg    Config
	ctl    net.Conn        // connected control socket
	data   net.Conn        // data socket, connected to the simulator's out<slot>
	raw    syscall.RawConn // data's, for writes that do not wait
	batch  *mmsg.Conn      // data, read a batch of datagrams at a time
	slot   uint32
	nodeID string

	ctlMu sync.Mutex

	// waitMu serialises the sends that wait for room (writeWait), which
	// set the socket's write deadline.
	waitMu sync.Mutex

	agentsMu sync.RWMutex
	agents   []mad.AgentSpec
	nAgents  atomic.Int64 // len(agents), for Send without the lock

	pendMu    sync.Mutex
	pending   map[pendKey]pendEntry
	lastSweep time.Time

	rxQueue
	closing    chan struct{} // closed by Close
	closed     atomic.Bool   // set by Close before closing closes: cheaper to test
	readerExit chan struct{} // closed when the reader goroutine returns
	readErr    error         // why the reader stopped, before Close; set before readerExit closes

	issm      atomic.Bool
	closeOnce sync.Once
	closeErr  error

	overflow  atomic.Uint64
	unwanted  atomic.Uint64
	malformed atomic.Uint64
}

// pendKey identifies an outstanding request: replies keep only TID[31:0]
// of what we sent, because ibsim overwrites TID[63:48] with the client slot
// (sim_mad.c: update_trid). It is the class above those 32 bits, a plain
// integer that the map hashes faster than a struct.
type pendKey uint64

func makePendKey(class uint8, tid uint64) pendKey {
	return pendKey(uint64(class)<<32 | uint64(uint32(tid)))
}

type pendEntry struct {
	agent   int
	expires time.Time
}

// pendingGrace keeps a request's agent known a while past its timeout, so
// a late reply still reaches the agent that asked.
const pendingGrace = 5 * time.Second

// Dial connects to the simulator and attaches to cfg.Node. The handshake
// follows libumad2sim's: bind the data socket, CONNECT on the control
// socket, connect the data socket to the slot the simulator assigned; with
// cfg.ISSM also SET_ISSM. ctx bounds the handshake only; the transport
// lives until Close. If ctx ends after the simulator accepted us, the slot
// is released again before Dial returns.
func Dial(ctx context.Context, cfg Config) (*Transport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Transport{
		cfg:        cfg,
		pending:    map[pendKey]pendEntry{},
		rxQueue:    newRxQueue(),
		closing:    make(chan struct{}),
		readerExit: make(chan struct{}),
	}
	var id uint32
	var err error
	if cfg.inet() {
		id, err = t.openInet()
	} else {
		id, err = t.openUnix()
	}
	if err != nil {
		return nil, err
	}
	info, err := t.connect(ctx, id)
	if err != nil {
		t.closeConns()
		return nil, err
	}
	t.slot, t.nodeID = info.id, info.nodeID
	if err := t.connectData(); err != nil {
		t.abandon()
		return nil, err
	}
	if cfg.ISSM {
		if err := t.SetISSM(ctx, true); err != nil {
			t.abandon()
			return nil, err
		}
	}
	go t.reader()
	return t, nil
}

// openUnix binds the client's two abstract sockets, "<base>:in<id>" for
// data and "<base>:ctl<id>", and connects the control socket to
// "<base>:ctl". Every name carries a trailing NUL, as libumad2sim's do.
// The id is the pid, as for libumad2sim; when a name is taken (a second
// transport in this process) it is a random number above any pid.
func (t *Transport) openUnix() (uint32, error) {
	base := t.cfg.sockName()
	server := &net.UnixAddr{Name: "@" + base + ":ctl\x00", Net: "unixgram"}
	id := uint32(os.Getpid())
	for try := 0; ; try++ {
		if try > 0 {
			id = 1<<22 + rand.Uint32N(1<<30)
		}
		in, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@" + base + ":in" + strconv.FormatUint(uint64(id), 10) + "\x00", Net: "unixgram"})
		if errors.Is(err, syscall.EADDRINUSE) && try < 20 {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("%v: binding data socket: %w", t.cfg, err)
		}
		ctl, err := net.DialUnix("unixgram", &net.UnixAddr{Name: "@" + base + ":ctl" + strconv.FormatUint(uint64(id), 10) + "\x00", Net: "unixgram"}, server)
		if errors.Is(err, syscall.EADDRINUSE) && try < 20 {
			in.Close()
			continue
		}
		if err != nil {
			in.Close()
			if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
				return 0, fmt.Errorf("%v: %w (no socket @%s:ctl)", t.cfg, ErrNotRunning, base)
			}
			return 0, fmt.Errorf("%v: connecting control socket: %w", t.cfg, err)
		}
		t.data, t.ctl = in, ctl
		return id, nil
	}
}

// openInet opens the UDP sockets of inet mode. The CONNECT id is the data
// socket's port: the simulator sends to the CONNECT's source address at
// that port.
func (t *Transport) openInet() (uint32, error) {
	port, _ := t.cfg.port()
	server, err := net.ResolveUDPAddr("udp4", net.JoinHostPort(t.cfg.Server, strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("%v: %w", t.cfg, err)
	}
	data, err := net.ListenUDP("udp4", &net.UDPAddr{})
	if err != nil {
		return 0, fmt.Errorf("%v: binding data socket: %w", t.cfg, err)
	}
	ctl, err := net.DialUDP("udp4", nil, server)
	if err != nil {
		data.Close()
		return 0, fmt.Errorf("%v: %w", t.cfg, err)
	}
	t.data, t.ctl = data, ctl
	return uint32(data.LocalAddr().(*net.UDPAddr).Port), nil
}

// connectData connects the data socket to the simulator's socket for our
// slot, so that we receive only from it and can write without an address.
func (t *Transport) connectData() error {
	var sa unix.Sockaddr
	if t.cfg.inet() {
		server := t.ctl.RemoteAddr().(*net.UDPAddr)
		port, _ := t.cfg.port()
		in4 := &unix.SockaddrInet4{Port: port + 1 + int(t.slot)}
		copy(in4.Addr[:], server.IP.To4())
		sa = in4
	} else {
		sa = &unix.SockaddrUnix{Name: "@" + t.cfg.sockName() + ":out" + strconv.FormatUint(uint64(t.slot), 10) + "\x00"}
	}
	sc, ok := t.data.(syscall.Conn)
	if !ok {
		return fmt.Errorf("%v: data socket has no file descriptor", t.cfg)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("%v: %w", t.cfg, err)
	}
	var cerr error
	if err := raw.Control(func(fd uintptr) { cerr = unix.Connect(int(fd), sa) }); err != nil {
		return fmt.Errorf("%v: %w", t.cfg, err)
	}
	if cerr != nil {
		return fmt.Errorf("%v: connecting data socket to slot %d: %w", t.cfg, t.slot, cerr)
	}
	batch, err := mmsg.New(t.data, rxBatch)
	if err != nil {
		return fmt.Errorf("%v: %w", t.cfg, err)
	}
	t.raw, t.batch = raw, batch
	return nil
}

// connect sends CONNECT. ibsim refuses without saying why; when it does,
// connect asks again in ways that tell the reasons apart (see diagnose).
func (t *Transport) connect(ctx context.Context, id uint32) (clientInfo, error) {
	req := clientInfo{id: id, nodeID: t.cfg.Node}
	if t.cfg.ISSM {
		req.issm = 1
	}
	info, ok, err := t.tryConnect(ctx, req)
	if err != nil {
		return info, err
	}
	if ok {
		return info, nil
	}
	return info, t.diagnose(ctx, req)
}

func (t *Transport) tryConnect(ctx context.Context, req clientInfo) (clientInfo, bool, error) {
	if err := ctx.Err(); err != nil {
		return clientInfo{}, false, fmt.Errorf("%v: connecting: %w", t.cfg, err)
	}
	var m ctlMsg
	m.typ, m.length = ctlConnect, clientInfoSize
	req.put(&m.data)
	reply, err := t.ctlCall(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			t.releaseLateConnect()
		}
		if t.cfg.inet() && errors.Is(err, ErrNoReply) {
			// With nothing on the port, UDP may stay silent.
			err = fmt.Errorf("%w (%w)", ErrNotRunning, err)
		}
		return clientInfo{}, false, err
	}
	if reply.typ == ctlError {
		return clientInfo{}, false, nil
	}
	info := getClientInfo(&reply.data)
	if info.id >= MaxClients*100 {
		// A slot number this large is not ibsim's; do not trust the rest.
		return clientInfo{}, false, fmt.Errorf("%v: CONNECT reply with slot %d", t.cfg, info.id)
	}
	return info, true, nil
}

// releaseLateConnect handles a CONNECT whose wait ctx cut short: the
// simulator may have assigned a slot all the same, and a slot nobody
// disconnects stays taken. ibsim answers at once, so its reply is read
// with a short grace period of its own, and the slot freed.
func (t *Transport) releaseLateConnect() {
	t.ctlMu.Lock()
	var buf [2 * ctlSize]byte
	_ = t.ctl.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
	var slot uint32
	found := false
	for !found {
		n, err := t.ctl.Read(buf[:])
		if err != nil {
			break
		}
		if reply, err := unmarshalCtl(buf[:n]); err == nil && reply.typ == ctlConnect {
			slot, found = getClientInfo(&reply.data).id, true
		}
	}
	t.ctlMu.Unlock()
	if found {
		_ = t.disconnectSlot(slot)
	}
}

// diagnose finds why CONNECT was refused. ibsim refuses when all slots are
// taken, when the node is unknown, and when ISSM is asked for a node that
// has an SM client. Without ISSM a refusal can only be the first two: a
// CONNECT to the default port, which cannot be unknown, succeeds exactly
// when a slot is free. A probe that succeeds is disconnected at once.
func (t *Transport) diagnose(ctx context.Context, req clientInfo) error {
	node := req.nodeID
	if node == "" {
		node = "(default port)"
	}
	if req.issm == 1 {
		probe := req
		probe.issm = 0
		info, ok, err := t.tryConnect(ctx, probe)
		if err != nil {
			return err
		}
		if ok {
			t.disconnectSlot(info.id)
			return fmt.Errorf("%v: attaching to %q: %w", t.cfg, node, ErrSMExists)
		}
	}
	if req.nodeID != "" {
		probe := clientInfo{id: req.id}
		info, ok, err := t.tryConnect(ctx, probe)
		if err != nil {
			return err
		}
		if ok {
			t.disconnectSlot(info.id)
			return fmt.Errorf("%v: attaching to %q: %w", t.cfg, node, ErrUnknownNode)
		}
	}
	return fmt.Errorf("%v: attaching to %q: %w", t.cfg, node, ErrTooManyClients)
}

// ctlCall sends one control request and waits for its reply. Replies carry
// no request id: calls are serialized, stale datagrams are drained first,
// and a reply must have the request's type (or ctlError).
func (t *Transport) ctlCall(ctx context.Context, m ctlMsg) (ctlMsg, error) {
	t.ctlMu.Lock()
	defer t.ctlMu.Unlock()
	if err := ctx.Err(); err != nil {
		return ctlMsg{}, err
	}
	var buf [2 * ctlSize]byte
	_ = t.ctl.SetReadDeadline(time.Unix(1, 0))
	for {
		if _, err := t.ctl.Read(buf[:]); err != nil {
			break
		}
	}
	deadline := time.Now().Add(CtlTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = t.ctl.SetDeadline(deadline)
	stop := afterFunc(ctx, func() { _ = t.ctl.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := t.ctl.Write(m.marshal()); err != nil {
		return ctlMsg{}, t.ctlErr(ctx, m.typ, err)
	}
	for {
		n, err := t.ctl.Read(buf[:])
		if err != nil {
			return ctlMsg{}, t.ctlErr(ctx, m.typ, err)
		}
		reply, err := unmarshalCtl(buf[:n])
		if err != nil {
			continue
		}
		if reply.typ == m.typ || reply.typ == ctlError {
			return reply, nil
		}
	}
}

// afterFunc is context.AfterFunc whose stop also waits for f to finish
// if it has started: f moves a socket's deadline into the past, and must
// not do so once the caller has moved on and set a deadline of its own.
func afterFunc(ctx context.Context, f func()) (stop func()) {
	done := make(chan struct{})
	stopf := context.AfterFunc(ctx, func() {
		defer close(done)
		f()
	})
	return func() {
		if !stopf() {
			<-done
		}
	}
}

func (t *Transport) ctlErr(ctx context.Context, typ uint32, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%v: control request %d: %w", t.cfg, typ, ctx.Err())
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
		return fmt.Errorf("%v: control request %d: %w", t.cfg, typ, ErrNotRunning)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%v: control request %d: %w within %v", t.cfg, typ, ErrNoReply, CtlTimeout)
	case errors.Is(err, net.ErrClosed):
		return fmt.Errorf("%v: %w", t.cfg, mad.ErrClosed)
	}
	return fmt.Errorf("%v: control request %d: %w", t.cfg, typ, err)
}

// disconnectSlot frees a slot, waiting a short while for the reply.
func (t *Transport) disconnectSlot(slot uint32) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := t.ctlCall(ctx, ctlMsg{clientID: slot, typ: ctlDisconnect})
	return err
}

// abandon releases a slot that Dial got and cannot use.
func (t *Transport) abandon() {
	_ = t.disconnectSlot(t.slot)
	t.closeConns()
}

func (t *Transport) closeConns() {
	if t.data != nil {
		t.data.Close()
	}
	if t.ctl != nil {
		t.ctl.Close()
	}
}

// SetISSM makes this client the SM client of its node, or stops it being
// that (SET_ISSM). As SM client it receives the requests that reach its
// port and that the simulator does not answer itself: SA (class 0x03),
// SMInfo, traps, and requests to any GMP server. The simulator also sets
// or clears PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6), which may send
// trap 144 to the SM. ibsim does not check that the node has no other SM
// client here; Config.ISSM, checked at CONNECT, does.
func (t *Transport) SetISSM(ctx context.Context, on bool) error {
	var m ctlMsg
	m.clientID, m.typ, m.length = t.slot, ctlSetISSM, 4
	if on {
		binary.LittleEndian.PutUint32(m.data[:], 1)
	}
	reply, err := t.ctlCall(ctx, m)
	if err != nil {
		return err
	}
	if reply.typ == ctlError {
		return fmt.Errorf("%v: SET_ISSM %s", t.cfg, refusal(&reply))
	}
	t.issm.Store(on)
	return nil
}

// Register opens an agent. The simulator knows nothing of agents; the
// transport uses the spec to deliver each received MAD to one agent: a
// reply to the agent that sent the request, an unsolicited request only to
// an agent of its class that listed its method.
func (t *Transport) Register(spec mad.AgentSpec) (int, error) {
	if spec.Class == 0 {
		return 0, fmt.Errorf("%v: registering class 0", t.cfg)
	}
	if isVendorOUIClass(spec.Class) && spec.OUI == 0 {
		return 0, fmt.Errorf("%v: vendor class %#02x needs an OUI", t.cfg, spec.Class)
	}
	spec.Methods = append([]uint8(nil), spec.Methods...)
	t.agentsMu.Lock()
	defer t.agentsMu.Unlock()
	t.agents = append(t.agents, spec)
	t.nAgents.Store(int64(len(t.agents)))
	return len(t.agents) - 1, nil
}

// request addresses a MAD as libumad2sim does: to p.Addr.LID with SLID 0,
// which the simulator fills with our port's LID; a directed-route SMP
// (class 0x81) that is directed from the start (LID 0 or the permissive
// LID) with the permissive DLID and SLID, and one that goes LID-routed to
// the start of its directed part (a DrSLID of ours, IBA 14.2.2.2) to
// that LID. SMPs leave from QP0 and GMPs from QP1; p.Addr.QPN is the
// destination QP. The simulator has no GRH, SL or P_Key.
func request(p *mad.Packet) simRequest {
	r := simRequest{dlid: p.Addr.LID, dqp: p.Addr.QPN, sqp: 1, length: uint64(len(p.MAD)), mad: p.MAD}
	class := p.MAD[madClassOffset]
	if isSMPClass(class) {
		r.sqp = 0
	}
	if class == classSubnDR && (r.dlid == 0 || r.dlid == 0xffff) {
		r.dlid, r.slid = 0xffff, 0xffff
	}
	return r
}

// Send hands one MAD to the simulator, addressed as request says.
func (t *Transport) Send(ctx context.Context, p *mad.Packet) error {
	if t.closed.Load() {
		return mad.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(p.MAD) < madHeaderSize || len(p.MAD) > madSize {
		return fmt.Errorf("%v: sending a %d-byte MAD: %w (want %d to %d bytes)", t.cfg, len(p.MAD), ErrMADSize, madHeaderSize, madSize)
	}
	if p.Agent < 0 || int64(p.Agent) >= t.nAgents.Load() {
		return fmt.Errorf("%v: sending with agent %d, which is not registered", t.cfg, p.Agent)
	}
	class, method := p.MAD[madClassOffset], p.MAD[madMethodOffset]
	r := request(p)
	if method&methodResp == 0 && p.Timeout > 0 && t.replyStrays(p.MAD, p.Agent) {
		t.remember(class, binary.BigEndian.Uint64(p.MAD[madTIDOffset:]), p.Agent, p.Timeout)
	}

	w := writers.Get().(*writer)
	r.marshal(w.buf[:])
	// The socket is non-blocking: write at once, and wait under a deadline
	// only when the simulator's queue is full. Nearly every send is one
	// system call with no timer or context callback around it, and sends
	// from several goroutines go out side by side (a datagram socket
	// writes each datagram whole).
	err := t.raw.Control(w.fn)
	if err == nil {
		err = w.err
	}
	if err == unix.EAGAIN {
		err = t.writeWait(ctx, w.buf[:])
	}
	writers.Put(w)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case err == context.DeadlineExceeded:
		return err
	case errors.Is(err, net.ErrClosed):
		return mad.ErrClosed
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("%v: sending: %w", t.cfg, ErrNotRunning)
	}
	return fmt.Errorf("%v: sending: %w", t.cfg, err)
}

// writer is one send's datagram and the function that writes it, bound
// once so that a send allocates nothing.
type writer struct {
	buf [requestSize]byte
	err error
	fn  func(fd uintptr)
}

var writers = sync.Pool{New: func() any {
	w := &writer{}
	w.fn = w.write
	return w
}}

// write writes buf to the data socket once, without waiting; err is
// unix.EAGAIN when the socket has no room. The socket is non-blocking, so
// the call is a raw one: the runtime does not hand the P to another thread
// around it, and its monitor thread, which wakes every 20 µs while some P
// sits in a system call, can stay asleep (in an ibqueryerrors sweep of
// 10,000 nodes, 76,000 sends, that saves about a tenth of the CPU time).
func (w *writer) write(fd uintptr) {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.buf[0])), uintptr(len(w.buf)))
		switch e {
		case unix.EINTR:
			continue
		case 0:
			w.err = nil
		case unix.EAGAIN:
			w.err = unix.EAGAIN
		default:
			w.err = os.NewSyscallError("write", e)
		}
		return
	}
}

// writeWait writes buf through the poller, waiting for room until
// SendTimeout passes or ctx ends.
func (t *Transport) writeWait(ctx context.Context, buf []byte) error {
	t.waitMu.Lock()
	defer t.waitMu.Unlock()
	deadline := time.Now().Add(SendTimeout)
	ctxDeadline := false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, ctxDeadline = d, true
	}
	_ = t.data.SetWriteDeadline(deadline)
	stop := afterFunc(ctx, func() { _ = t.data.SetWriteDeadline(time.Unix(1, 0)) })
	_, err := t.data.Write(buf)
	stop()
	if ctxDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
		// The socket's timer may fire before ctx's own: ctx.Err() can
		// still be nil here.
		return context.DeadlineExceeded
	}
	return err
}

// replyStrays reports whether a reply to request m, which agent sends,
// would go to another agent unless remembered: it goes to the first one
// registered for its class, version and OUI (agentFor) otherwise. Agents
// are never removed, so the first stays first. A client with one agent
// per class has nothing to remember.
func (t *Transport) replyStrays(m []byte, agent int) bool {
	first, ok := t.agentFor(m, false)
	return !ok || first != agent
}

// remember notes that agent sent request tid of class, for its reply.
func (t *Transport) remember(class uint8, tid uint64, agent int, timeout time.Duration) {
	now := time.Now()
	t.pendMu.Lock()
	defer t.pendMu.Unlock()
	if now.Sub(t.lastSweep) > time.Second {
		for k, e := range t.pending {
			if now.After(e.expires) {
				delete(t.pending, k)
			}
		}
		t.lastSweep = now
	}
	t.pending[makePendKey(class, tid)] = pendEntry{agent, now.Add(timeout + pendingGrace)}
}

// takePending returns and forgets the agent that sent the request a reply
// answers.
func (t *Transport) takePending(class uint8, tid uint64) (int, bool) {
	k := makePendKey(class, tid)
	t.pendMu.Lock()
	e, ok := t.pending[k]
	if ok {
		delete(t.pending, k)
	}
	t.pendMu.Unlock()
	return e.agent, ok
}

// deliver fills p with a datagram for the agent that should have it, or
// returns false when no agent should.
func (t *Transport) deliver(p *mad.Packet, r simRequest) bool {
	if len(r.mad) < madHeaderSize {
		return false
	}
	class, method := r.mad[madClassOffset], r.mad[madMethodOffset]
	tid := binary.BigEndian.Uint64(r.mad[madTIDOffset:])
	*p = mad.Packet{
		Addr: mad.Addr{LID: r.slid, QPN: r.sqp},
		MAD:  r.mad,
	}
	if r.sqp == mad.QP1 {
		p.Addr.QKey = mad.QP1QKey
	}
	switch {
	case r.status == statusDropped:
		// Our own request, bounced: it goes back to the agent that sent
		// it, addressed as it was sent.
		agent, ok := t.takePending(class, tid)
		if !ok {
			if agent, ok = t.agentFor(r.mad, false); !ok {
				return false
			}
		}
		p.Agent = agent
		p.Addr = mad.Addr{LID: r.dlid, QPN: r.dqp}
		p.Err = &DroppedError{DLID: r.dlid, Class: class, Method: method, AttrID: binary.BigEndian.Uint16(r.mad[madAttrOffset:]), TID: tid}
	case method&methodResp != 0:
		agent, ok := t.takePending(class, tid)
		if !ok {
			if agent, ok = t.agentFor(r.mad, false); !ok {
				return false
			}
		}
		p.Agent = agent
	default:
		agent, ok := t.agentFor(r.mad, true)
		if !ok {
			return false
		}
		p.Agent = agent
	}
	return true
}

// agentFor finds the first agent registered for the MAD's class (and
// class version and OUI, where the agent names them); for a request the
// agent must also have listed its method.
func (t *Transport) agentFor(m []byte, request bool) (int, bool) {
	class, version, method := m[madClassOffset], m[2], m[madMethodOffset]
	t.agentsMu.RLock()
	defer t.agentsMu.RUnlock()
	for i, a := range t.agents {
		if a.Class != class || (a.ClassVersion != 0 && a.ClassVersion != version) {
			continue
		}
		if isVendorOUIClass(class) && a.OUI != madOUI(m) {
			continue
		}
		if !request {
			return i, true
		}
		for _, want := range a.Methods {
			if want == method {
				return i, true
			}
		}
	}
	return 0, false
}

// LocalPort reads the attached port's NodeInfo and PortInfo from the
// simulator (GET_NODEINFO, GET_PORTINFO). Port GUIDs follow ibsim's rule:
// a switch's is its node GUID, a CA port n's is node GUID + n.
func (t *Transport) LocalPort(ctx context.Context) (mad.LocalPort, error) {
	ni, err := t.ctlCall(ctx, ctlMsg{clientID: t.slot, typ: ctlGetNodeInfo, length: ctlMaxData})
	if err != nil {
		return mad.LocalPort{}, err
	}
	pi, err := t.ctlCall(ctx, ctlMsg{clientID: t.slot, typ: ctlGetPortInfo, length: ctlMaxData})
	if err != nil {
		return mad.LocalPort{}, err
	}
	switch {
	case ni.typ == ctlError:
		return mad.LocalPort{}, fmt.Errorf("%v: reading the attached node (GET_NODEINFO) %s", t.cfg, refusal(&ni))
	case pi.typ == ctlError:
		return mad.LocalPort{}, fmt.Errorf("%v: reading the attached port (GET_PORTINFO) %s", t.cfg, refusal(&pi))
	}
	return localPortFrom(t.nodeID, &ni.data, &pi.data), nil
}

// localPortFrom decodes NodeInfo (IBA 14.2.5.3) and PortInfo (14.2.5.6).
func localPortFrom(nodeID string, ni, pi *[ctlMaxData]byte) mad.LocalPort {
	nodeType := ni[2]
	nodeGUID := iba.GUID(binary.BigEndian.Uint64(ni[12:]))
	portNum := pi[28]
	lp := mad.LocalPort{
		Name:      "ibsim:" + nodeID + "/" + strconv.Itoa(int(portNum)),
		NodeGUID:  nodeGUID,
		PortGUID:  nodeGUID,
		PortNum:   portNum,
		GIDPrefix: binary.BigEndian.Uint64(pi[8:]),
		LID:       binary.BigEndian.Uint16(pi[16:]),
		SMLID:     binary.BigEndian.Uint16(pi[18:]),
		LMC:       pi[34] & 0x7,
		SMSL:      pi[36] & 0xf,
	}
	if nodeType != 2 {
		lp.PortGUID = nodeGUID + iba.GUID(portNum)
	}
	return lp
}

// KernelRMPP is false: the simulator carries single 256-byte MADs.
func (t *Transport) KernelRMPP() bool { return false }

// Node is the id of the node the transport is attached to, as the
// simulator reported it.
func (t *Transport) Node() string { return t.nodeID }

// Slot is the simulator's client slot of this transport.
func (t *Transport) Slot() int { return int(t.slot) }

// Stats counts received datagrams the transport did not hand to Recv.
type Stats struct {
	Overflow  uint64 // the receive queue was full
	Unwanted  uint64 // no registered agent wanted the MAD
	Malformed uint64 // not a 288-byte sim_request
}

// Stats returns the counters since Dial.
func (t *Transport) Stats() Stats {
	return Stats{Overflow: t.overflow.Load(), Unwanted: t.unwanted.Load(), Malformed: t.malformed.Load()}
}

// Close gives up the SM role if the transport had it, sends DISCONNECT so
// the simulator frees the slot, and closes the sockets. Recv and Send
// return mad.ErrClosed afterwards. The error is the DISCONNECT's, if the
// simulator did not answer it.
func (t *Transport) Close() error {
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		close(t.closing)
		if t.issm.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = t.SetISSM(ctx, false)
			cancel()
		}
		err := t.disconnectSlot(t.slot)
		t.closeConns()
		<-t.readerExit
		if err != nil {
			t.closeErr = fmt.Errorf("disconnecting: %w", err)
		}
	})
	return t.closeErr
}

var _ mad.Transport = (*Transport)(nil)
