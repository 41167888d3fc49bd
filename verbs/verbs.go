package verbs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
)

// Available reports whether libibverbs can be used here: nil, or an error
// matching ErrNotAvailable that says what to install. The library is
// loaded on the first call of this or of Devices or Open.
func Available() error {
	_, err := load()
	return err
}

// node is one resource in a Context's ownership graph. Closing a node
// first closes its dependents (what was made from it or uses it), newest
// first, then destroys the C object.
type node struct {
	root    *Context
	parents []*node
	deps    []*node
	destroy func() error
	closed  bool
}

// addNode links a new resource under its parents; root.mu is held.
func (c *Context) addNode(destroy func() error, parents ...*node) *node {
	n := &node{root: c, destroy: destroy}
	for _, p := range parents {
		if p == nil {
			continue
		}
		n.parents = append(n.parents, p)
		p.deps = append(p.deps, n)
	}
	return n
}

// close runs with root.mu held for writing.
func (n *node) close() error {
	if n.closed {
		return nil
	}
	var errs []error
	for len(n.deps) > 0 {
		d := n.deps[len(n.deps)-1]
		errs = append(errs, d.close()) // removes itself from n.deps
	}
	n.closed = true
	if n.destroy != nil {
		errs = append(errs, n.destroy())
	}
	for _, p := range n.parents {
		for i, d := range p.deps {
			if d == n {
				p.deps = append(p.deps[:i], p.deps[i+1:]...)
				break
			}
		}
	}
	n.parents = nil
	return errors.Join(errs...)
}

// closeNode closes n under the context lock.
func closeNode(n *node) error {
	c := n.root
	c.mu.Lock()
	defer c.mu.Unlock()
	return n.close()
}

// use takes the context's read lock for one verb on n, failing when n is
// closed; the caller runs release when done.
func (n *node) use(op string) (release func(), err error) {
	n.root.mu.RLock()
	if n.closed {
		n.root.mu.RUnlock()
		return nil, &Error{Op: op, Err: ErrClosed}
	}
	return n.root.mu.RUnlock, nil
}

// DeviceInfo names one RDMA device libibverbs found.
type DeviceInfo struct {
	Name     string
	NodeGUID iba.GUID
	// Transport is "InfiniBand" or "iWARP" and the like (ibv_transport_type).
	Transport string
}

// deviceList runs ibv_get_device_list; the caller frees the list. No
// kernel RDMA support (ENOSYS) is an empty list.
func deviceList(s *symbols) (list uintptr, devs []uintptr, err error) {
	var n int32
	r, errno := call(s.getDeviceList, uintptr(unsafe.Pointer(&n)))
	if r == 0 {
		if errno == syscall.ENOSYS {
			return 0, nil, nil
		}
		return 0, nil, nullErr("listing devices", errno)
	}
	return r, unsafe.Slice(at[uintptr](r), int(n)), nil
}

func deviceName(s *symbols, d uintptr) string {
	r, _ := call(s.getDeviceName, d)
	return goString(r, 64)
}

// Devices lists the RDMA devices with a user-space driver
// (ibv_get_device_list). No devices is an empty list, not an error.
func Devices() ([]DeviceInfo, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	list, devs, err := deviceList(s)
	if err != nil || list == 0 {
		return nil, err
	}
	defer call(s.freeDeviceList, list)
	out := make([]DeviceInfo, 0, len(devs))
	for _, d := range devs {
		g, _ := call(s.getDeviceGUID, d)
		out = append(out, DeviceInfo{
			Name:      deviceName(s, d),
			NodeGUID:  iba.GUID(be64(uint64(g))),
			Transport: transportName(at[cDevice](d).transportType),
		})
	}
	return out, nil
}

func transportName(t int32) string {
	switch t {
	case transportIB:
		return "InfiniBand"
	case transportIWARP:
		return "iWARP"
	case transportUSNIC, transportUSNICUDP:
		return "usNIC"
	case transportUnspecified:
		return "unspecified"
	}
	return fmt.Sprintf("transport %d", t)
}

// be64 reads a big-endian value that was loaded as a host-order word.
func be64(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

// Context is an open device (ibv_context): the root of every resource made
// on it.
type Context struct {
	mu   sync.RWMutex
	c    *cContext
	name string
	node *node

	// The data path verbs of the device's provider (ibv_context_ops), as
	// verbs.h's inlines call them.
	postSend, postRecv, postSRQRecv, pollCQ, reqNotifyCQ uintptr

	// objects maps C handles to their Go values, for async events.
	objects map[uintptr]any
}

// Open opens the named device ("" opens the first one).
func Open(name string) (*Context, error) {
	s, err := load()
	if err != nil {
		return nil, err
	}
	list, devs, err := deviceList(s)
	if err != nil {
		return nil, err
	}
	if list != 0 {
		defer call(s.freeDeviceList, list)
	}
	var names []string
	for _, d := range devs {
		dn := deviceName(s, d)
		names = append(names, dn)
		if name != "" && dn != name {
			continue
		}
		r, errno := call(s.openDevice, d)
		if r == 0 {
			return nil, nullErr("opening "+dn, errno)
		}
		cc := at[cContext](r)
		c := &Context{c: cc, name: dn, objects: map[uintptr]any{},
			postSend: cc.ops.postSend, postRecv: cc.ops.postRecv, postSRQRecv: cc.ops.postSRQRecv,
			pollCQ: cc.ops.pollCQ, reqNotifyCQ: cc.ops.reqNotifyCQ}
		c.node = &node{root: c, destroy: func() error {
			if rc, errno := call(s.closeDevice, r); rc != 0 {
				return errnoErr("closing "+dn, cint(rc), errno)
			}
			return nil
		}}
		if err := unix.SetNonblock(int(cc.asyncFD), true); err != nil {
			call(s.closeDevice, r)
			return nil, &Error{Op: "making the async event file of " + dn + " non-blocking", Err: err}
		}
		return c, nil
	}
	return nil, noDevice(name, names)
}

// noDevice is Open's error when no device matched: ENODEV, naming the
// devices there are. When libibverbs sees none but the kernel has some,
// the provider (the device's user-space driver) is missing.
func noDevice(name string, names []string) error {
	what := "opening the first device"
	if name != "" {
		what = fmt.Sprintf("opening %s (devices: %v)", name, names)
	}
	if len(names) == 0 {
		if ents, err := os.ReadDir("/sys/class/infiniband"); err == nil && len(ents) > 0 {
			var k []string
			for _, e := range ents {
				k = append(k, e.Name())
			}
			what += fmt.Sprintf(": the kernel has %s but libibverbs has no provider for them (install ibverbs-providers, or the device's rdma-core provider)",
				strings.Join(k, ", "))
		} else {
			what += ": no RDMA devices"
		}
	}
	return &Error{Op: what, Err: syscall.ENODEV}
}

// Name is the device's name.
func (c *Context) Name() string { return c.name }

// Close closes every resource made on the device, then the device.
func (c *Context) Close() error { return closeNode(c.node) }

func (c *Context) handle() uintptr { return addr(c.c) }

func (c *Context) register(h uintptr, v any) { c.objects[h] = v }

func (c *Context) unregister(h uintptr) { delete(c.objects, h) }

// DeviceAttr is what ibv_query_device reports (IBA 11.2.1.2 Query HCA).
type DeviceAttr struct {
	FWVersion       string
	NodeGUID        iba.GUID
	SysImageGUID    iba.GUID
	MaxMRSize       uint64
	PageSizeCap     uint64
	VendorID        uint32
	VendorPartID    uint32
	HWVersion       uint32
	MaxQP           int
	MaxQPWR         int
	DeviceCapFlags  uint32
	MaxSGE          int
	MaxCQ           int
	MaxCQE          int
	MaxMR           int
	MaxPD           int
	MaxQPRDAtom     int
	MaxQPInitRDAtom int
	AtomicCap       int // IBV_ATOMIC_NONE, _HCA, _GLOB
	MaxAH           int
	MaxSRQ          int
	MaxSRQWR        int
	MaxSRQSGE       int
	MaxPKeys        int
	// LocalCAAckDelay is the HCA's ACK delay n, 4.096 µs × 2^n: what a
	// requester adds to twice the packet lifetime for the local ACK
	// timeout of a QP sending to this HCA (ibpath.IBPath.ACKTimeout).
	LocalCAAckDelay uint8
	PhysPortCount   int
}

// QueryDevice reads the device's attributes.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	release, err := c.node.use("querying the device")
	if err != nil {
		return DeviceAttr{}, err
	}
	defer release()
	var a cDeviceAttr
	if rc, errno := call(lib.queryDevice, c.handle(), uintptr(unsafe.Pointer(&a))); rc != 0 {
		return DeviceAttr{}, errnoErr("querying "+c.name, cint(rc), errno)
	}
	fw := a.fwVer[:]
	if i := strings.IndexByte(string(fw), 0); i >= 0 {
		fw = fw[:i]
	}
	return DeviceAttr{
		FWVersion:       string(fw),
		NodeGUID:        iba.GUID(binary.BigEndian.Uint64(a.nodeGUID[:])),
		SysImageGUID:    iba.GUID(binary.BigEndian.Uint64(a.sysImageGUID[:])),
		MaxMRSize:       a.maxMRSize,
		PageSizeCap:     a.pageSizeCap,
		VendorID:        a.vendorID,
		VendorPartID:    a.vendorPartID,
		HWVersion:       a.hwVer,
		MaxQP:           int(a.maxQP),
		MaxQPWR:         int(a.maxQPWR),
		DeviceCapFlags:  a.deviceCapFlags,
		MaxSGE:          int(a.maxSGE),
		MaxCQ:           int(a.maxCQ),
		MaxCQE:          int(a.maxCQE),
		MaxMR:           int(a.maxMR),
		MaxPD:           int(a.maxPD),
		MaxQPRDAtom:     int(a.maxQPRDAtom),
		MaxQPInitRDAtom: int(a.maxQPInitRDAtom),
		AtomicCap:       int(a.atomicCap),
		MaxAH:           int(a.maxAH),
		MaxSRQ:          int(a.maxSRQ),
		MaxSRQWR:        int(a.maxSRQWR),
		MaxSRQSGE:       int(a.maxSRQSGE),
		MaxPKeys:        int(a.maxPKeys),
		LocalCAAckDelay: a.localCAAckDelay,
		PhysPortCount:   int(a.physPortCnt),
	}, nil
}

// Port states (IBA 14.2.5.6 PortInfo PortState; ibv_port_state).
type PortState int

const (
	PortNop         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

// String names the state as ibv_port_state_str does.
func (s PortState) String() string {
	switch s {
	case PortNop:
		return "no state change (NOP)"
	case PortDown:
		return "down"
	case PortInit:
		return "init"
	case PortArmed:
		return "armed"
	case PortActive:
		return "active"
	case PortActiveDefer:
		return "active defer"
	}
	return "unknown"
}

// Link layers of a port.
const (
	LinkLayerUnspecified = 0
	LinkLayerInfiniBand  = 1
	LinkLayerEthernet    = 2
)

// PortAttr is what ibv_query_port reports (IBA 11.2.1.2, PortInfo 14.2.5.6).
type PortAttr struct {
	State         PortState
	MaxMTU        MTU
	ActiveMTU     MTU
	GIDTableLen   int
	PortCapFlags  uint32
	MaxMsgSize    uint32
	BadPKeyCntr   uint32
	QKeyViolCntr  uint32
	PKeyTableLen  int
	LID           uint16
	SMLID         uint16
	LMC           uint8
	MaxVLNum      uint8
	SMSL          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8
	ActiveSpeed   uint8
	PhysState     uint8
	LinkLayer     int
}

// QueryPort reads port n's attributes.
func (c *Context) QueryPort(n int) (PortAttr, error) {
	release, err := c.node.use("querying a port")
	if err != nil {
		return PortAttr{}, err
	}
	defer release()
	if n < 0 || n > 255 {
		return PortAttr{}, &Error{Op: fmt.Sprintf("querying %s/%d", c.name, n), Err: syscall.EINVAL}
	}
	var a cPortAttr
	if rc, errno := call(lib.queryPort, c.handle(), uintptr(n), uintptr(unsafe.Pointer(&a))); rc != 0 {
		return PortAttr{}, errnoErr(fmt.Sprintf("querying %s/%d", c.name, n), cint(rc), errno)
	}
	return PortAttr{
		State: PortState(a.state), MaxMTU: MTU(a.maxMTU), ActiveMTU: MTU(a.activeMTU),
		GIDTableLen: int(a.gidTblLen), PortCapFlags: a.portCapFlags, MaxMsgSize: a.maxMsgSz,
		BadPKeyCntr: a.badPKeyCntr, QKeyViolCntr: a.qkeyViolCntr, PKeyTableLen: int(a.pkeyTblLen),
		LID: a.lid, SMLID: a.smLID, LMC: a.lmc, MaxVLNum: a.maxVLNum, SMSL: a.smSL,
		SubnetTimeout: a.subnetTimeout, InitTypeReply: a.initTypeReply, ActiveWidth: a.activeWidth,
		ActiveSpeed: a.activeSpeed, PhysState: a.physState, LinkLayer: int(a.linkLayer),
	}, nil
}

// QueryGID reads entry index of port n's GID table.
func (c *Context) QueryGID(port, index int) (iba.GID, error) {
	release, err := c.node.use("querying a GID")
	if err != nil {
		return iba.GID{}, err
	}
	defer release()
	return c.queryGID(port, index)
}

func (c *Context) queryGID(port, index int) (iba.GID, error) {
	var g iba.GID
	if port < 0 || port > 255 || index < 0 {
		return g, &Error{Op: fmt.Sprintf("querying GID %d of %s/%d", index, c.name, port), Err: syscall.EINVAL}
	}
	if rc, errno := call(lib.queryGID, c.handle(), uintptr(port), uintptr(index), uintptr(unsafe.Pointer(&g))); rc != 0 {
		return iba.GID{}, errnoErr(fmt.Sprintf("querying GID %d of %s/%d", index, c.name, port), cint(rc), errno)
	}
	return g, nil
}

// QueryPKey reads entry index of port n's P_Key table.
func (c *Context) QueryPKey(port, index int) (uint16, error) {
	release, err := c.node.use("querying a P_Key")
	if err != nil {
		return 0, err
	}
	defer release()
	var pk [2]byte // __be16
	if port < 0 || port > 255 || index < 0 {
		return 0, &Error{Op: fmt.Sprintf("querying P_Key %d of %s/%d", index, c.name, port), Err: syscall.EINVAL}
	}
	if rc, errno := call(lib.queryPKey, c.handle(), uintptr(port), uintptr(index), uintptr(unsafe.Pointer(&pk))); rc != 0 {
		return 0, errnoErr(fmt.Sprintf("querying P_Key %d of %s/%d", index, c.name, port), cint(rc), errno)
	}
	return binary.BigEndian.Uint16(pk[:]), nil
}

// waitFD waits until fd is readable or ctx ends. Polling in slices keeps
// cancellation prompt without a second file descriptor.
func waitFD(ctx context.Context, fd int) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ms := 50
		if d, ok := ctx.Deadline(); ok {
			if left := time.Until(d); left < 50*time.Millisecond {
				ms = max(int(left/time.Millisecond), 1)
			}
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}
