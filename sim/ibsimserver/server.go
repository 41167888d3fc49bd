package ibsimserver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/mmsg"
	"github.com/rdmakit/rdmakit/internal/units"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
)

// Config says where a Server listens.
type Config struct {
	// SockName is the base of the abstract unix socket names, as
	// IBSIM_SOCKNAME gives it; "sim" (ibsim's default) when empty.
	SockName string
	// Inet serves over UDP on Addr (host:port, ":7070" when empty)
	// instead, as ibsim -r does; client slot i then uses port+1+i.
	Inet bool
	Addr string
	// MaxClients bounds the client slots: 64 when 0 (ibsim has 10), at
	// most the package's MaxClients.
	MaxClients int
}

// MaxClients is the most client slots a Server has. Package ibsim's
// client takes a slot number of 1000 or more as a reply that is not a
// simulator's, and each attached client costs about ClientMemory.
const MaxClients = 1000

// ClientMemory is about what one attached client costs: its read and
// write batches (64 datagrams each way) and its two sockets.
const ClientMemory = 64 << 10

// ErrTooManySlots is matched (errors.Is) by Listen's error for a
// Config.MaxClients above MaxClients.
var ErrTooManySlots = errors.New("ibsim server: too many client slots")

// Validate checks the configuration as Listen does, so that a program can
// refuse it before building a fabric.
func (cfg Config) Validate() error {
	switch {
	case cfg.MaxClients < 0:
		return fmt.Errorf("ibsim server: %d client slots: want 1 to %d (0 for 64)", cfg.MaxClients, MaxClients)
	case cfg.MaxClients > MaxClients:
		return fmt.Errorf("%w: %d would need %s for the slot table alone and about %s per attached client (%s with every slot taken); the limit is %d (ibsimserver.MaxClients)",
			ErrTooManySlots, cfg.MaxClients, units.IEC(int64(cfg.MaxClients)*8), units.IEC(ClientMemory), units.IEC(int64(cfg.MaxClients)*ClientMemory), MaxClients)
	}
	return nil
}

// Server serves a fabric over ibsim's protocol.
type Server struct {
	f    *sim.Fabric
	cfg  Config
	base string
	port int // inet control port
	ctl  net.PacketConn

	mu      sync.Mutex
	clients []*client
	closed  bool
	wg      sync.WaitGroup
}

type client struct {
	s      *Server
	slot   int
	node   string
	port   int
	issm   bool
	conn   net.Conn
	io     *mmsg.Conn
	data   *sim.Attachment
	cancel context.CancelFunc
	mu     sync.Mutex
	agents map[uint8]int
	// rmpp is set once the client sends an RMPP MAD (an ACK): it does
	// RMPP itself, as package ibsim's users do. Until then it is taken to
	// be libumad2sim, which has none (see passRMPP); segs1 are the
	// transfers whose first segment it was given (toClient's alone).
	rmpp  atomic.Bool
	segs1 map[uint64]struct{}
}

// Listen opens the control socket. Serve then answers clients.
func Listen(f *sim.Fabric, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxClients == 0 {
		cfg.MaxClients = 64
	}
	s := &Server{f: f, cfg: cfg, base: cfg.SockName, clients: make([]*client, cfg.MaxClients)}
	if s.base == "" {
		s.base = "sim"
	}
	var err error
	if cfg.Inet {
		addr := cfg.Addr
		if addr == "" {
			addr = ":7070"
		}
		var ua *net.UDPAddr
		if ua, err = net.ResolveUDPAddr("udp", addr); err != nil {
			return nil, fmt.Errorf("ibsim server: %w", err)
		}
		var c *net.UDPConn
		if c, err = net.ListenUDP("udp", ua); err != nil {
			return nil, fmt.Errorf("ibsim server: %w", err)
		}
		s.ctl, s.port = c, c.LocalAddr().(*net.UDPAddr).Port
	} else {
		if s.ctl, err = net.ListenUnixgram("unixgram", s.unixAddr("ctl")); err != nil {
			return nil, fmt.Errorf("ibsim server: listening on @%s:ctl: %w", s.base, err)
		}
	}
	return s, nil
}

// unixAddr names an abstract socket with the trailing NUL that ibsim and
// libumad2sim count in the address length.
func (s *Server) unixAddr(suffix string) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + s.base + ":" + suffix + "\x00", Net: "unixgram"}
}

// Addr is the control address: the UDP address in inet mode, the abstract
// socket name otherwise.
func (s *Server) Addr() net.Addr { return s.ctl.LocalAddr() }

// Serve answers control messages until ctx ends or Close is called.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	buf := make([]byte, 512)
	out := make([]byte, ctlSize)
	for {
		n, from, err := s.ctl.ReadFrom(buf)
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return nil
			}
			return fmt.Errorf("ibsim server: reading control messages: %w", err)
		}
		m, ok := parseCtl(buf[:n])
		if !ok {
			continue // not ours: ibsim ignores it too
		}
		reply := s.control(ctx, m, from)
		s.ctl.WriteTo(reply.marshal(out), replyAddr(from))
	}
}

// replyAddr restores the trailing NUL of an abstract socket name: the
// clients' names carry one (ibsim counts it in the address length), but
// Go's address conversion ends names at the first NUL.
func replyAddr(a net.Addr) net.Addr {
	if u, ok := a.(*net.UnixAddr); ok && strings.HasPrefix(u.Name, "@") && !strings.HasSuffix(u.Name, "\x00") {
		return &net.UnixAddr{Name: u.Name + "\x00", Net: u.Net}
	}
	return a
}

// Close stops the server and disconnects every client.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cs := append([]*client(nil), s.clients...)
	s.mu.Unlock()
	err := s.ctl.Close()
	for _, c := range cs {
		if c != nil {
			c.close()
		}
	}
	s.wg.Wait()
	return err
}

// control answers one control request. A refusal is ibsim's reply type 0
// (SIM_CTL_ERROR), whose data ibsim leaves as the request's; this server
// puts its reason there, "refused: " and NUL-terminated text, which
// package ibsim shows and libumad2sim ignores.
func (s *Server) control(ctx context.Context, m ctlMsg, from net.Addr) ctlMsg {
	reply := ctlMsg{clientID: m.clientID, typ: m.typ, length: m.length}
	fail := func(err error) ctlMsg {
		r := ctlMsg{clientID: m.clientID, typ: ctlError}
		putReason(&r.data, err.Error())
		return r
	}
	if m.typ == ctlConnect {
		c, err := s.connect(ctx, m, from)
		if err != nil {
			return fail(err)
		}
		binary.LittleEndian.PutUint32(reply.data[0:], uint32(c.slot))
		copy(reply.data[infoNodeID:infoNodeID+nodeIDLen-1], c.node)
		reply.clientID = uint32(c.slot)
		return reply
	}
	s.mu.Lock()
	var c *client
	if int(m.clientID) < len(s.clients) {
		c = s.clients[m.clientID]
	}
	s.mu.Unlock()
	if c == nil {
		return fail(fmt.Errorf("no client in slot %d (not connected, or disconnected)", m.clientID))
	}
	var data []byte
	var err error
	switch m.typ {
	case ctlDisconnect:
		c.close()
		return reply
	case ctlGetPort:
		var pi iba.PortInfo
		if err = c.get(&pi, 0); err == nil {
			binary.LittleEndian.PutUint16(reply.data[0:], pi.LID)
			reply.data[2] = uint8(pi.PortState)
		}
	case ctlGetVendor:
		var ni iba.NodeInfo
		if err = c.get(&ni, 0); err == nil {
			binary.LittleEndian.PutUint32(reply.data[0:], ni.VendorID)
			binary.LittleEndian.PutUint32(reply.data[4:], uint32(ni.DeviceID))
			binary.LittleEndian.PutUint32(reply.data[8:], ni.Revision)
			binary.LittleEndian.PutUint64(reply.data[16:], 1)
		}
	case ctlGetGID:
		var pi iba.PortInfo
		var ni iba.NodeInfo
		if err = c.get(&pi, 0); err == nil {
			err = c.get(&ni, 0)
		}
		// ibsim's quirk: the prefix in wire order, then the node GUID in
		// host order.
		binary.BigEndian.PutUint64(reply.data[0:], pi.GIDPrefix)
		binary.LittleEndian.PutUint64(reply.data[8:], uint64(ni.NodeGUID))
	case ctlGetGUID:
		var ni iba.NodeInfo
		if err = c.get(&ni, 0); err == nil {
			binary.LittleEndian.PutUint64(reply.data[0:], uint64(ni.NodeGUID))
		}
	case ctlGetNodeInfo:
		data, err = c.raw(0x11, 0)
	case ctlGetPortInfo:
		mod := uint32(m.data[0])
		if mod == 0 {
			mod = uint32(c.port)
		}
		data, err = c.raw(0x15, mod)
	case ctlSetISSM:
		on := binary.LittleEndian.Uint32(m.data[:]) != 0
		if err = c.setISSM(on); err == nil {
			reply.length = 0
		}
	case ctlGetPKeys:
		data, err = c.raw(0x16, 0) // block 0 of the client's own port
	default:
		return fail(fmt.Errorf("unknown control request type %d", m.typ))
	}
	if err != nil {
		return fail(err)
	}
	copy(reply.data[:], data)
	return reply
}

func (s *Server) connect(ctx context.Context, m ctlMsg, from net.Addr) (*client, error) {
	id := binary.LittleEndian.Uint32(m.data[0:])
	issm := binary.LittleEndian.Uint32(m.data[8:]) != 0
	want := nodeID(m.data[:])
	var node string
	var port int
	if want == "" {
		node, port = s.f.DefaultNode()
	} else {
		var ok bool
		if node, port, ok = s.f.FindNode(want); !ok {
			return nil, fmt.Errorf("no node %q", want)
		}
	}
	s.mu.Lock()
	slot := -1
	for i, c := range s.clients {
		if c == nil && slot < 0 {
			slot = i
		}
		if c != nil && issm && c.issm && c.node == node {
			s.mu.Unlock()
			return nil, fmt.Errorf("node %s has an SM client already", node)
		}
	}
	if slot < 0 || s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("all %d client slots are in use", len(s.clients))
	}
	c := &client{s: s, slot: slot, node: node, port: port, agents: map[uint8]int{}}
	s.clients[slot] = c // reserved while the sockets open
	s.mu.Unlock()
	err := c.open(ctx, id, from)
	if err == nil && issm {
		err = c.setISSM(true)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *client) open(ctx context.Context, id uint32, from net.Addr) error {
	s := c.s
	var conn net.Conn
	var err error
	if s.cfg.Inet {
		ua, ok := from.(*net.UDPAddr)
		if !ok {
			return errors.New("CONNECT from a non-UDP address")
		}
		laddr := &net.UDPAddr{Port: s.port + 1 + c.slot}
		var u *net.UDPConn
		if u, err = net.DialUDP("udp", laddr, &net.UDPAddr{IP: ua.IP, Port: int(id)}); err == nil {
			conn = u
		}
	} else {
		var u *net.UnixConn
		if u, err = net.DialUnix("unixgram", s.unixAddr("out"+strconv.Itoa(c.slot)), s.unixAddr("in"+strconv.Itoa(int(id)))); err == nil {
			conn = u
		}
	}
	if err != nil {
		// ibsim dies here; refusing the client is enough.
		return fmt.Errorf("connecting to the client's data socket: %w", err)
	}
	c.conn = conn
	if c.io, err = mmsg.New(conn, batchSize); err != nil {
		return err
	}
	t, err := s.f.Attach(c.node, c.port)
	if err != nil {
		return err
	}
	c.data = t.(*sim.Attachment)
	cctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	s.wg.Add(2)
	go c.fromClient()
	go c.toClient(cctx)
	return nil
}

func (c *client) close() {
	s := c.s
	s.mu.Lock()
	if s.clients[c.slot] == c {
		s.clients[c.slot] = nil
	}
	s.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	if c.conn != nil {
		c.conn.Close()
	}
	if c.data != nil {
		c.data.Close()
	}
}

// get reads an attribute of the client's own port: what its SMA answers
// a zero-hop directed-route SubnGet with, read outside the fabric, so
// that the latency and loss model never touch the control protocol.
func (c *client) get(a iba.Attribute, mod uint32) error {
	b, err := c.raw(a.Desc().AttrID, mod)
	if err != nil {
		return err
	}
	return a.Unmarshal(b)
}

func (c *client) raw(attr uint16, mod uint32) ([]byte, error) {
	b, err := c.data.GetLocal(attr, mod)
	if err != nil {
		return nil, fmt.Errorf("reading the attached port: %w", err)
	}
	return b, nil
}

// serverClasses are the classes whose requests go to an issm client, as
// ibsim forwards every request its SMA and PMA do not answer: SMInfo and
// traps, the SA, and the GS classes of the diags' servers. Congestion
// control (0x21) and the ibping and ibsysstat classes (0x32, 0x33) are
// not among them: every simulated node's own agent answers those.
var serverClasses = func() []uint8 {
	c := []uint8{0x01, 0x81, 0x03, 0x05, 0x06, 0x07, 0x08}
	for x := uint8(0x09); x <= 0x0F; x++ {
		c = append(c, x)
	}
	for x := uint8(0x30); x <= 0x4F; x++ {
		if x != 0x32 && x != 0x33 {
			c = append(c, x)
		}
	}
	return c
}()

var requestMethods = []uint8{0x01, 0x02, 0x03, 0x05, 0x06, 0x12, 0x13, 0x14, 0x15}

func (c *client) setISSM(on bool) error {
	c.data.SetIsSM(on)
	c.mu.Lock()
	defer c.mu.Unlock()
	if on && !c.issm {
		for _, cl := range serverClasses {
			if _, err := c.data.Register(mad.AgentSpec{Class: cl, ClassVersion: 1, Methods: requestMethods}); err != nil {
				return err
			}
			if cl == 0x03 {
				// SA class version 2.
				if _, err := c.data.Register(mad.AgentSpec{Class: cl, ClassVersion: 2, Methods: requestMethods}); err != nil {
					return err
				}
			}
		}
	}
	// Server agents stay registered after SET_ISSM 0: the transport has no
	// way to drop single agents, and OpenSM clears the bit only on exit.
	c.issm = c.issm || on
	return nil
}

func (c *client) agent(class, version uint8) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.agents[class]; ok {
		return id, nil
	}
	id, err := c.data.Register(mad.AgentSpec{Class: class, ClassVersion: version})
	if err != nil {
		return 0, err
	}
	c.agents[class] = id
	return id, nil
}

// batchSize bounds the datagrams read or written in one system call.
const batchSize = 64

// fromClient carries the client's MADs into the fabric, bouncing those the
// fabric drops with status 110 as ibsim does (libibnetdisc waits for every
// reply without a timer of its own). It reads every datagram queued at
// once and hands each to the fabric, which answers it before the next.
func (c *client) fromClient() {
	defer c.s.wg.Done()
	defer c.close()
	bufs := make([][]byte, batchSize)
	for i := range bufs {
		// Room past a request: a longer datagram shows as such and is
		// ignored, as ibsim ignores it.
		bufs[i] = make([]byte, 2*reqSize)
	}
	sizes := make([]int, batchSize)
	for {
		n, err := c.io.Read(bufs, sizes)
		if err != nil {
			return
		}
		for i := 0; i < n; i++ {
			if sizes[i] != reqSize {
				continue
			}
			if !c.request(bufs[i]) {
				return
			}
		}
	}
}

// request hands one request datagram to the fabric; false when the
// attachment is closed.
func (c *client) request(buf []byte) bool {
	r := parseRequest(buf)
	b := buf[reqMAD:reqSize]
	if rmppActive(b) {
		c.rmpp.Store(true)
	}
	if b[0] != 1 {
		c.bounce(buf, r)
		return true
	}
	ag, err := c.agent(b[1], b[2])
	if err != nil {
		c.bounce(buf, r)
		return true
	}
	addr := mad.Addr{LID: r.dlid, QPN: r.dqp}
	if r.dqp != 0 {
		addr.QKey = mad.QP1QKey
	}
	ok, err := c.data.SendChecked(context.Background(), &mad.Packet{Agent: ag, Addr: addr, MAD: b})
	if errors.Is(err, mad.ErrClosed) {
		return false
	}
	method := b[3]
	if (err != nil || !ok) && method&0x80 == 0 && method != 0x07 {
		c.bounce(buf, r)
	}
	return true
}

func (c *client) bounce(buf []byte, r request) {
	if r.slid == 0 {
		if lp, err := c.data.LocalPort(context.Background()); err == nil {
			r.slid = lp.LID
		}
	}
	r.status = statusTimed
	r.marshal(buf)
	c.conn.Write(buf[:reqSize])
}

// toClient writes the fabric's MADs for the client to its data socket:
// every MAD waiting when it wakes goes out in one system call.
func (c *client) toClient(ctx context.Context) {
	defer c.s.wg.Done()
	out := make([][]byte, batchSize)
	for i := range out {
		out[i] = make([]byte, reqSize)
	}
	// A context that is over: Recv returns what is queued, never waits.
	now, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		p, err := c.data.Recv(ctx)
		if err != nil {
			return
		}
		lp, _ := c.data.LocalPort(ctx)
		n := 0
		for p != nil {
			if !c.passRMPP(p.MAD) {
				p, _ = c.data.Recv(now)
				continue
			}
			r := request{dlid: lp.LID, slid: p.Addr.LID, dqp: 1, sqp: p.Addr.QPN}
			if cl := p.MAD[1]; cl == 0x01 || cl == 0x81 {
				r.dqp = 0
			}
			r.marshal(out[n])
			copy(out[n][reqMAD:], p.MAD)
			clear(out[n][reqMAD+len(p.MAD):])
			n++
			p = nil
			if n < batchSize {
				p, _ = c.data.Recv(now)
			}
		}
		if n == 0 {
			continue
		}
		if err := c.io.Write(out[:n]); err != nil {
			// The client is gone (ibsim frees the slot the same way).
			c.close()
			return
		}
	}
}

// RMPP header (IBA 13.6.2.1) in a MAD: version, type, flags, segment.
const (
	offRMPPVersion = 24
	offRMPPType    = 25
	offRMPPFlags   = 26
	offRMPPSeg     = 28
	rmppTypeData   = 1
	rmppFlagActive = 0x01
)

func rmppActive(b []byte) bool {
	return len(b) > offRMPPSeg+4 && b[offRMPPVersion] == 1 && b[offRMPPFlags]&rmppFlagActive != 0
}

// passRMPP says whether a MAD for the client goes out. A client that has
// never sent an RMPP MAD is libumad2sim, which has no RMPP: it gets the
// first segment of a transfer once, as ibsim gives it (a table cut to its
// first segment), and nothing more of it. More would be the sender's
// retransmissions of that segment (no ACK ever comes) and its final
// ABORT, arriving after the program has closed its agent for the class:
// libumad2sim 0.10 dereferences a NULL pointer for a MAD of a class with
// no agent, and infiniband-diags' ibqueryerrors crashed so. A MAD whose
// RMPP header is active but has no type is no segment: it is what OpenSM
// under libumad2sim sends for a whole table (its first 256 bytes, left
// for a kernel's RMPP that is not there), and it goes out as ibsim passes
// it, to every client.
func (c *client) passRMPP(b []byte) bool {
	if c.rmpp.Load() || !rmppActive(b) || b[offRMPPType] == 0 {
		return true
	}
	if b[offRMPPType] != rmppTypeData || binary.BigEndian.Uint32(b[offRMPPSeg:]) != 1 {
		return false
	}
	tid := binary.BigEndian.Uint64(b[8:16])
	if _, seen := c.segs1[tid]; seen {
		return false
	}
	if c.segs1 == nil || len(c.segs1) >= 4096 {
		c.segs1 = map[uint64]struct{}{}
	}
	c.segs1[tid] = struct{}{}
	return true
}
