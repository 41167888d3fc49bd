package umad

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/mad"
)

// ABIVersion is the only umad ABI this package speaks
// (IB_USER_MAD_ABI_VERSION).
const ABIVersion = 5

// maxMAD bounds the buffer grown for RMPP-reassembled MADs; an SA table of
// this size is far beyond any fabric, and a header claiming more is broken.
const maxMAD = 64 << 20

// Management classes whose MADs go to QP0 (IBA 13.4.4): LID routed and
// directed route subnet management.
const (
	classSubnLID = 0x01
	classSubnDR  = 0x81
)

type ioctlFunc func(req uintptr, arg unsafe.Pointer) error

// Transport is a mad.Transport over one /dev/infiniband/umadN file. It is
// safe for concurrent use: any number of goroutines Send while one or more
// Recv (receives are handed out one at a time).
type Transport struct {
	port  *device.Port
	path  string
	file  *os.File
	ioctl ioctlFunc
	read  func([]byte) (int, error) // file.Read; tests replace it

	recvSem chan struct{} // one reader at a time owns buf and the read deadline
	buf     []byte

	mu     sync.Mutex
	agents map[int]mad.AgentSpec
	closed bool
	done   chan struct{}
}

var _ mad.Transport = (*Transport)(nil)

// Open opens the umad device of the end port p (p.Umad): it checks the
// ABI version, opens the file and switches it to the P_Key index header
// layout. On a planarized HCA, open p.SMIPort for SMPs and p.GSIPort for
// GMPs (see package device).
func Open(p *device.Port) (*Transport, error) {
	if p == nil {
		return nil, errors.New("umad: no end port")
	}
	f := p.Device.FS()
	if p.Umad == nil {
		return nil, fmt.Errorf("end port %s: %w (no umadN in sysfs class/infiniband_mad names it): is ib_umad loaded (modprobe ib_umad)?",
			p, ErrNoUmad)
	}
	abi, err := f.MADABIVersion()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("end port %s: %w: reading the umad ABI version: %v; is ib_umad loaded (modprobe ib_umad)?",
				p, ErrNoUmad, err)
		}
		return nil, fmt.Errorf("end port %s: reading the umad ABI version: %w", p, err)
	}
	if abi != ABIVersion {
		return nil, &ABIError{Path: filepath.Join(p.Umad.SysDir, "..", "abi_version"), Version: abi}
	}
	path := p.Umad.Path
	// The runtime poller takes the file (umad supports poll), so a read
	// waits without a thread and ends with a deadline or Close.
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	t := newTransport(p, path, file, fileIoctl(file))
	// Before any agent exists, as rdma/ib_user_mad.h requires.
	if err := t.ioctl(ioctlEnablePKey, nil); err != nil {
		file.Close()
		return nil, fmt.Errorf("enabling P_Key index mode on %s: %w", path, err)
	}
	return t, nil
}

// OpenSMI opens the umad device that carries SMPs for p: its own on an
// ordinary HCA, the SMI device's on a planarized one (p.SMIPort).
func OpenSMI(p *device.Port) (*Transport, error) {
	if p == nil {
		return nil, errors.New("umad: no end port")
	}
	if p.SMIPort == nil {
		return nil, fmt.Errorf("end port %s (link layer %v) has no SMI: no device takes its SMPs", p, p.LinkLayer)
	}
	return Open(p.SMIPort)
}

func newTransport(p *device.Port, path string, file *os.File, ioctl ioctlFunc) *Transport {
	return &Transport{
		port:    p,
		path:    path,
		file:    file,
		ioctl:   ioctl,
		read:    file.Read,
		recvSem: make(chan struct{}, 1),
		buf:     make([]byte, HeaderSize+mad.Size),
		agents:  map[int]mad.AgentSpec{},
		done:    make(chan struct{}),
	}
}

func fileIoctl(f *os.File) ioctlFunc {
	return func(req uintptr, arg unsafe.Pointer) error {
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		var errno syscall.Errno
		err = rc.Control(func(fd uintptr) {
			_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, req, uintptr(arg))
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

// Path is the device file.
func (t *Transport) Path() string { return t.path }

// Port is the end port the transport was opened for.
func (t *Transport) Port() *device.Port { return t.port }

// KernelRMPP is true: the kernel segments and reassembles RMPP for agents
// registered with RMPPVersion 1.
func (t *Transport) KernelRMPP() bool { return true }

// Register opens a kernel MAD agent (IB_USER_MAD_REGISTER_AGENT) on QP0 for
// the subnet management classes and QP1 for the others. Methods make it a
// server agent; OUI is required for the vendor classes 0x30-0x4f.
func (t *Transport) Register(spec mad.AgentSpec) (int, error) {
	qpn := uint8(1)
	if spec.Class == classSubnLID || spec.Class == classSubnDR {
		qpn = 0
	}
	vendorOUI := spec.Class >= 0x30 && spec.Class <= 0x4f
	what := fmt.Sprintf("registering a MAD agent for class %#02x version %d on %s", spec.Class, spec.ClassVersion, t.path)
	switch {
	case vendorOUI && spec.OUI == 0:
		return 0, fmt.Errorf("%s: vendor class %#02x needs an OUI", what, spec.Class)
	case !vendorOUI && spec.OUI != 0:
		return 0, fmt.Errorf("%s: an OUI is only for the vendor classes 0x30-0x4f", what)
	}
	if qpn == 0 && t.port.SMIPort != t.port {
		hint := "it has no SMI"
		switch {
		case t.port.LinkLayer != device.LinkLayerInfiniBand:
			hint = fmt.Sprintf("its link layer is %v, which carries no SMPs", t.port.LinkLayer)
		case t.port.SMIPort != nil:
			hint = fmt.Sprintf("its SMPs go through %s (%s)", t.port.SMIPort, t.port.SMIPort.Umad)
		}
		return 0, fmt.Errorf("%s: end port %s takes no SMPs: %s", what, t.port, hint)
	}
	req, err := marshalRegReq(qpn, spec.Class, spec.ClassVersion, spec.Methods, spec.OUI, spec.RMPPVersion)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, mad.ErrClosed
	}
	if err := t.ioctl(ioctlRegisterAgent, unsafe.Pointer(&req[0])); err != nil {
		if errors.Is(err, syscall.EINVAL) && len(spec.Methods) > 0 {
			return 0, fmt.Errorf("%s: %w (is another agent serving these methods?)", what, err)
		}
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	id := int(req.id())
	t.agents[id] = spec
	return id, nil
}

// Send writes the umad header and the MAD. A request with p.Timeout > 0 is
// tracked by the kernel: its reply, or a Packet with a *StatusError, comes
// back through Recv for the same agent.
func (t *Transport) Send(ctx context.Context, p *mad.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(p.MAD) < minSendMAD {
		return fmt.Errorf("sending on %s: MAD of %d bytes, the kernel needs at least %d", t.path, len(p.MAD), minSendMAD)
	}
	t.mu.Lock()
	_, known := t.agents[p.Agent]
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return mad.ErrClosed
	}
	if !known {
		return fmt.Errorf("sending on %s: agent %d is not registered", t.path, p.Agent)
	}
	h := sendHeader(p)
	buf := make([]byte, HeaderSize+len(p.MAD))
	if err := h.MarshalTo(buf); err != nil {
		return err
	}
	copy(buf[HeaderSize:], p.MAD)
	n, err := t.file.Write(buf)
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return mad.ErrClosed
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("sending MAD on %s (agent %d, LID %d, QP %d): %w", t.path, p.Agent, p.Addr.LID, p.Addr.QPN, err)
	}
	if n != len(buf) {
		return fmt.Errorf("sending MAD on %s: wrote %d of %d bytes", t.path, n, len(buf))
	}
	return nil
}

// Recv waits for the next MAD for any agent of this file, or for a request
// the kernel gave up on (Packet.Err set, MAD holding the request's header).
// It grows its buffer when the kernel reports ENOSPC for an RMPP-reassembled
// MAD longer than it.
func (t *Transport) Recv(ctx context.Context) (*mad.Packet, error) {
	select {
	case t.recvSem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.done:
		return nil, mad.ErrClosed
	}
	defer func() { <-t.recvSem }()

	deadline, hasDeadline := ctx.Deadline()
	// Cancellation moves the read deadline into the past, which ends a
	// read the runtime poller is waiting in. A stale call from an earlier
	// Recv can do that too; the loop below then just reads again.
	stop := context.AfterFunc(ctx, func() { t.file.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		if t.isClosed() {
			return nil, mad.ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if hasDeadline && !time.Now().Before(deadline) {
			return nil, context.DeadlineExceeded
		}
		if err := t.file.SetReadDeadline(deadline); err != nil {
			if t.isClosed() {
				return nil, mad.ErrClosed
			}
			return nil, fmt.Errorf("receiving on %s: %w", t.path, err)
		}
		p, retry, err := t.readPacket()
		if err != nil || !retry {
			return p, err
		}
	}
}

// readPacket does one read. retry is true when the read should be repeated:
// the deadline passed, or the buffer was grown after ENOSPC (the kernel
// keeps the MAD queued).
func (t *Transport) readPacket() (p *mad.Packet, retry bool, err error) {
	n, err := t.read(t.buf)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, true, nil
	case errors.Is(err, os.ErrClosed) || t.isClosed():
		return nil, false, mad.ErrClosed
	case errors.Is(err, syscall.ENOSPC):
		// The kernel copied the header and the first segment; the
		// header's length is the whole MAD.
		h, herr := UnmarshalHeader(t.buf)
		if herr != nil {
			return nil, false, fmt.Errorf("receiving on %s: %w", t.path, herr)
		}
		need := int(h.Length)
		if need <= len(t.buf) || need > HeaderSize+maxMAD {
			return nil, false, fmt.Errorf("receiving on %s: ENOSPC with a MAD length of %d bytes", t.path, need)
		}
		t.buf = make([]byte, need)
		return nil, true, nil
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, false, fmt.Errorf("receiving on %s: %w", t.path, err)
	}
	p, err = decodePacket(t.buf[:n])
	if err != nil {
		return nil, false, fmt.Errorf("receiving on %s: %w", t.path, err)
	}
	return p, false, nil
}

// decodePacket turns one read (header and MAD) into a Packet; the MAD is
// copied out of the read buffer.
func decodePacket(b []byte) (*mad.Packet, error) {
	h, err := UnmarshalHeader(b)
	if err != nil {
		return nil, err
	}
	p := &mad.Packet{
		Agent: int(h.AgentID),
		Addr:  h.addr(),
		MAD:   append([]byte(nil), b[HeaderSize:]...),
	}
	if h.Status != 0 {
		p.Err = &StatusError{Agent: p.Agent, Errno: syscall.Errno(h.Status)}
	}
	return p, nil
}

func (t *Transport) isClosed() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// LocalPort reads the end port's current attributes from sysfs.
func (t *Transport) LocalPort(ctx context.Context) (mad.LocalPort, error) {
	if err := ctx.Err(); err != nil {
		return mad.LocalPort{}, err
	}
	p, err := t.port.Reload()
	if err != nil {
		return mad.LocalPort{}, err
	}
	return mad.LocalPort{
		Name:      p.String(),
		NodeGUID:  p.Device.NodeGUID,
		PortGUID:  p.PortGUID,
		PortNum:   p.Num,
		GIDPrefix: p.GIDPrefix,
		LID:       p.LID,
		LMC:       p.LMC,
		SMLID:     p.SMLID,
		SMSL:      p.SMSL,
	}, nil
}

// Close unregisters the agents and closes the file; a Recv waiting in
// another goroutine returns mad.ErrClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	ids := make([]int, 0, len(t.agents))
	for id := range t.agents {
		ids = append(ids, id)
	}
	t.agents = nil
	t.mu.Unlock()
	close(t.done)

	sort.Ints(ids)
	var errs []error
	for _, id := range ids {
		v := uint32(id)
		if err := t.ioctl(ioctlUnregisterAgent, unsafe.Pointer(&v)); err != nil {
			errs = append(errs, fmt.Errorf("unregistering agent %d on %s: %w", id, t.path, err))
		}
	}
	if err := t.file.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing %s: %w", t.path, err))
	}
	return errors.Join(errs...)
}
