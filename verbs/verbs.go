//go:build linux && cgo

package verbs

/*
#cgo LDFLAGS: -libverbs
#include "cverbs.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
)

// Error is a failed verb: the operation and the errno libibverbs gave.
type Error struct {
	Op  string
	Err error // a syscall.Errno
}

func (e *Error) Error() string { return "verbs: " + e.Op + ": " + e.Err.Error() }

// Unwrap gives the errno, for errors.Is(err, syscall.EINVAL).
func (e *Error) Unwrap() error { return e.Err }

// ErrClosed is matched by operations on a closed resource.
var ErrClosed = errors.New("verbs: resource closed")

// errOf turns a libibverbs failure into an *Error: rc is a returned errno
// (positive, or negative as some providers give it), cerr the errno cgo
// captured.
func errOf(op string, rc C.int, cerr error) error { return errnoErr(op, int(rc), cerr) }

func errnoErr(op string, rc int, cerr error) error {
	var no syscall.Errno
	switch {
	case rc > 0:
		no = syscall.Errno(rc)
	case rc < 0 && rc != -1:
		no = syscall.Errno(-rc)
	default:
		if errors.As(cerr, &no) && no != 0 {
			break
		}
		no = syscall.EIO
	}
	return &Error{Op: op, Err: no}
}

// nullErr is errOf for functions that return NULL and set errno.
func nullErr(op string, cerr error) error { return errOf(op, -1, cerr) }

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

// Devices lists the RDMA devices with a user-space driver
// (ibv_get_device_list). No devices is an empty list, not an error.
func Devices() ([]DeviceInfo, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		if errors.Is(err, syscall.ENOSYS) {
			return nil, nil // no RDMA support in this kernel
		}
		return nil, nullErr("listing devices", err)
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	out := make([]DeviceInfo, 0, len(devs))
	for _, d := range devs {
		out = append(out, DeviceInfo{
			Name:      C.GoString(C.ibv_get_device_name(d)),
			NodeGUID:  iba.GUID(be64(uint64(C.ibv_get_device_guid(d)))),
			Transport: transportName(d.transport_type),
		})
	}
	return out, nil
}

func transportName(t C.enum_ibv_transport_type) string {
	switch t {
	case C.IBV_TRANSPORT_IB:
		return "InfiniBand"
	case C.IBV_TRANSPORT_IWARP:
		return "iWARP"
	case C.IBV_TRANSPORT_USNIC, C.IBV_TRANSPORT_USNIC_UDP:
		return "usNIC"
	case C.IBV_TRANSPORT_UNSPECIFIED:
		return "unspecified"
	}
	return fmt.Sprintf("transport %d", int(t))
}

// be64 swaps a big-endian value read as host order (x86, arm64: little).
func be64(v uint64) uint64 {
	var b [8]byte
	*(*uint64)(unsafe.Pointer(&b[0])) = v
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// Context is an open device (ibv_context): the root of every resource made
// on it.
type Context struct {
	mu   sync.RWMutex
	c    *C.struct_ibv_context
	name string
	node *node

	// objects maps C handles to their Go values, for async events.
	objects map[unsafe.Pointer]any
}

// Open opens the named device ("" opens the first one).
func Open(name string) (*Context, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		if errors.Is(err, syscall.ENOSYS) {
			return nil, &Error{Op: fmt.Sprintf("opening %q: no RDMA devices (the kernel has no RDMA support)", name), Err: syscall.ENODEV}
		}
		return nil, nullErr("listing devices", err)
	}
	defer C.ibv_free_device_list(list)
	var names []string
	for _, d := range unsafe.Slice(list, int(n)) {
		dn := C.GoString(C.ibv_get_device_name(d))
		names = append(names, dn)
		if name != "" && dn != name {
			continue
		}
		ctx, err := C.ibv_open_device(d)
		if ctx == nil {
			return nil, nullErr("opening "+dn, err)
		}
		c := &Context{c: ctx, name: dn, objects: map[unsafe.Pointer]any{}}
		c.node = &node{root: c, destroy: func() error {
			if rc := C.ibv_close_device(ctx); rc != 0 {
				return errOf("closing "+dn, rc, nil)
			}
			return nil
		}}
		if rc := C.go_set_nonblock(ctx.async_fd); rc != 0 {
			C.ibv_close_device(ctx)
			return nil, errOf("making the async event file of "+dn+" non-blocking", rc, nil)
		}
		return c, nil
	}
	if name == "" {
		return nil, &Error{Op: "opening the first device", Err: syscall.ENODEV}
	}
	return nil, &Error{Op: fmt.Sprintf("opening %s (devices: %v)", name, names), Err: syscall.ENODEV}
}

// Name is the device's name.
func (c *Context) Name() string { return c.name }

// Close closes every resource made on the device, then the device.
func (c *Context) Close() error { return closeNode(c.node) }

func (c *Context) register(h unsafe.Pointer, v any) {
	c.objects[h] = v
}

func (c *Context) unregister(h unsafe.Pointer) { delete(c.objects, h) }

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
	PhysPortCount   int
}

// QueryDevice reads the device's attributes.
func (c *Context) QueryDevice() (DeviceAttr, error) {
	release, err := c.node.use("querying the device")
	if err != nil {
		return DeviceAttr{}, err
	}
	defer release()
	var a C.struct_ibv_device_attr
	if rc := C.ibv_query_device(c.c, &a); rc != 0 {
		return DeviceAttr{}, errOf("querying "+c.name, rc, nil)
	}
	return DeviceAttr{
		FWVersion:       C.GoString(&a.fw_ver[0]),
		NodeGUID:        iba.GUID(be64(uint64(a.node_guid))),
		SysImageGUID:    iba.GUID(be64(uint64(a.sys_image_guid))),
		MaxMRSize:       uint64(a.max_mr_size),
		PageSizeCap:     uint64(a.page_size_cap),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		HWVersion:       uint32(a.hw_ver),
		MaxQP:           int(a.max_qp),
		MaxQPWR:         int(a.max_qp_wr),
		DeviceCapFlags:  uint32(a.device_cap_flags),
		MaxSGE:          int(a.max_sge),
		MaxCQ:           int(a.max_cq),
		MaxCQE:          int(a.max_cqe),
		MaxMR:           int(a.max_mr),
		MaxPD:           int(a.max_pd),
		MaxQPRDAtom:     int(a.max_qp_rd_atom),
		MaxQPInitRDAtom: int(a.max_qp_init_rd_atom),
		AtomicCap:       int(a.atomic_cap),
		MaxAH:           int(a.max_ah),
		MaxSRQ:          int(a.max_srq),
		MaxSRQWR:        int(a.max_srq_wr),
		MaxSRQSGE:       int(a.max_srq_sge),
		MaxPKeys:        int(a.max_pkeys),
		PhysPortCount:   int(a.phys_port_cnt),
	}, nil
}

// Port states (IBA 14.2.5.6 PortInfo PortState; ibv_port_state).
type PortState int

const (
	PortNop         PortState = C.IBV_PORT_NOP
	PortDown        PortState = C.IBV_PORT_DOWN
	PortInit        PortState = C.IBV_PORT_INIT
	PortArmed       PortState = C.IBV_PORT_ARMED
	PortActive      PortState = C.IBV_PORT_ACTIVE
	PortActiveDefer PortState = C.IBV_PORT_ACTIVE_DEFER
)

func (s PortState) String() string {
	return C.GoString(C.ibv_port_state_str(C.enum_ibv_port_state(s)))
}

// Link layers of a port.
const (
	LinkLayerUnspecified = C.IBV_LINK_LAYER_UNSPECIFIED
	LinkLayerInfiniBand  = C.IBV_LINK_LAYER_INFINIBAND
	LinkLayerEthernet    = C.IBV_LINK_LAYER_ETHERNET
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
	var a C.struct_ibv_port_attr
	if rc := C.go_query_port(c.c, C.uint8_t(n), &a); rc != 0 {
		return PortAttr{}, errOf(fmt.Sprintf("querying %s/%d", c.name, n), rc, nil)
	}
	return PortAttr{
		State: PortState(a.state), MaxMTU: MTU(a.max_mtu), ActiveMTU: MTU(a.active_mtu),
		GIDTableLen: int(a.gid_tbl_len), PortCapFlags: uint32(a.port_cap_flags), MaxMsgSize: uint32(a.max_msg_sz),
		BadPKeyCntr: uint32(a.bad_pkey_cntr), QKeyViolCntr: uint32(a.qkey_viol_cntr), PKeyTableLen: int(a.pkey_tbl_len),
		LID: uint16(a.lid), SMLID: uint16(a.sm_lid), LMC: uint8(a.lmc), MaxVLNum: uint8(a.max_vl_num), SMSL: uint8(a.sm_sl),
		SubnetTimeout: uint8(a.subnet_timeout), InitTypeReply: uint8(a.init_type_reply), ActiveWidth: uint8(a.active_width),
		ActiveSpeed: uint8(a.active_speed), PhysState: uint8(a.phys_state), LinkLayer: int(a.link_layer),
	}, nil
}

// QueryGID reads entry index of port n's GID table.
func (c *Context) QueryGID(port, index int) (iba.GID, error) {
	release, err := c.node.use("querying a GID")
	if err != nil {
		return iba.GID{}, err
	}
	defer release()
	var g C.union_ibv_gid
	if rc := C.ibv_query_gid(c.c, C.uint8_t(port), C.int(index), &g); rc != 0 {
		return iba.GID{}, errOf(fmt.Sprintf("querying GID %d of %s/%d", index, c.name, port), rc, nil)
	}
	return iba.GID(*(*[16]byte)(unsafe.Pointer(&g))), nil
}

// QueryPKey reads entry index of port n's P_Key table.
func (c *Context) QueryPKey(port, index int) (uint16, error) {
	release, err := c.node.use("querying a P_Key")
	if err != nil {
		return 0, err
	}
	defer release()
	var pk C.__be16
	if rc := C.ibv_query_pkey(c.c, C.uint8_t(port), C.int(index), &pk); rc != 0 {
		return 0, errOf(fmt.Sprintf("querying P_Key %d of %s/%d", index, c.name, port), rc, nil)
	}
	v := uint16(pk)
	return v<<8 | v>>8, nil
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
