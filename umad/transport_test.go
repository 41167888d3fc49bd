package umad

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/mad"
)

// fixturePort reads an end port from package device's fixtures.
func fixturePort(t *testing.T, fixture, name string) *device.Port {
	t.Helper()
	devs, err := device.FS{SysRoot: filepath.Join("..", "device", "testdata", fixture, "sys")}.List()
	if err != nil {
		t.Fatal(err)
	}
	p, err := device.FindEndPort(devs, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeKernel stands in for the umad file: a SOCK_SEQPACKET socket pair keeps
// message boundaries as umad reads and writes do, and ioctls are recorded.
type fakeKernel struct {
	peer *os.File // the kernel's end: read what the transport sent, write what it receives

	mu           sync.Mutex
	registered   []regReq
	unregistered []uint32
	nextID       uint32
	failRegister error
}

func (k *fakeKernel) ioctl(req uintptr, arg unsafe.Pointer) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch req {
	case ioctlRegisterAgent:
		if k.failRegister != nil {
			return k.failRegister
		}
		r := (*regReq)(arg)
		binaryPutID(r, k.nextID)
		k.nextID++
		k.registered = append(k.registered, *r)
		return nil
	case ioctlUnregisterAgent:
		k.unregistered = append(k.unregistered, *(*uint32)(arg))
		return nil
	case ioctlEnablePKey:
		return nil
	}
	return syscall.ENOTTY
}

func binaryPutID(r *regReq, id uint32) { copy(r[0:4], ne32(id)) }

func newFake(t *testing.T, port *device.Port) (*Transport, *fakeKernel) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	k := &fakeKernel{peer: os.NewFile(uintptr(fds[1]), "kernel"), nextID: 0}
	tr := newTransport(port, "/dev/infiniband/umad-test", os.NewFile(uintptr(fds[0]), "umad-test"), k.ioctl)
	t.Cleanup(func() {
		tr.Close()
		k.peer.Close()
	})
	return tr, k
}

func (k *fakeKernel) deliver(t *testing.T, h Header, m []byte) {
	t.Helper()
	b := make([]byte, HeaderSize+len(m))
	if err := h.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	copy(b[HeaderSize:], m)
	if _, err := k.peer.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestRegister(t *testing.T) {
	ib := fixturePort(t, "mlx5-ib", "mlx5_0/1")
	tr, k := newFake(t, ib)
	specs := []mad.AgentSpec{
		{Class: 0x81, ClassVersion: 1},                                              // DR SMP client
		{Class: 0x01, ClassVersion: 1, Methods: []uint8{0x01, 0x02}},                // SMP server
		{Class: 0x03, ClassVersion: 1, RMPPVersion: 0},                              // PMA client
		{Class: 0x03, ClassVersion: 1, Methods: []uint8{0x01, 0x02, 0x7f}},          // PMA server
		{Class: 0x09, ClassVersion: 1, Methods: []uint8{0x01}},                      // vendor range 1
		{Class: 0x0a, ClassVersion: 1, RMPPVersion: 1},                              // SA-like with RMPP
		{Class: 0x33, ClassVersion: 1, OUI: 0x001405, Methods: []uint8{0x01, 0x40}}, // vendor OUI class
	}
	for i, s := range specs {
		id, err := tr.Register(s)
		if err != nil {
			t.Fatalf("Register(%+v): %v", s, err)
		}
		if id != i {
			t.Errorf("Register(%+v) = agent %d, want %d", s, id, i)
		}
	}
	want := []struct {
		qpn, class, version, rmpp uint8
		oui                       [3]byte
		methods                   []uint8
	}{
		{0, 0x81, 1, 0, [3]byte{}, nil},
		{0, 0x01, 1, 0, [3]byte{}, []uint8{1, 2}},
		{1, 0x03, 1, 0, [3]byte{}, nil},
		{1, 0x03, 1, 0, [3]byte{}, []uint8{1, 2, 0x7f}},
		{1, 0x09, 1, 0, [3]byte{}, []uint8{1}},
		{1, 0x0a, 1, 1, [3]byte{}, nil},
		{1, 0x33, 1, 0, [3]byte{0x00, 0x14, 0x05}, []uint8{1, 0x40}},
	}
	for i, w := range want {
		r := k.registered[i]
		got := [3]byte{r[23], r[24], r[25]}
		if r[20] != w.qpn || r[21] != w.class || r[22] != w.version || r[26] != w.rmpp || got != w.oui ||
			!slices.Equal(r.methodMask(), w.methods) {
			t.Errorf("agent %d: ioctl got qpn %d class %#x version %d rmpp %d oui % x methods %v; want %+v",
				i, r[20], r[21], r[22], r[26], got, r.methodMask(), w)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.unregistered, []uint32{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("Close unregistered %v, want agents 0-6", k.unregistered)
	}
	if _, err := tr.Register(specs[0]); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Register after Close = %v, want ErrClosed", err)
	}
}

func TestMethodMaskLayout(t *testing.T) {
	r, err := marshalRegReq(1, 0x09, 1, []uint8{0, 1, 63, 64, 127}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Bit m of the 128-bit map is bit m%8 of byte m/8 on a little-endian
	// machine whatever the long size; on big-endian ones it is per long.
	if littleEndian() {
		want := []byte{0x03, 0, 0, 0, 0, 0, 0, 0x80, 0x01, 0, 0, 0, 0, 0, 0, 0x80}
		if !bytes.Equal(r[4:20], want) {
			t.Errorf("method mask bytes % x, want % x", r[4:20], want)
		}
	}
	if got := r.methodMask(); !slices.Equal(got, []uint8{0, 1, 63, 64, 127}) {
		t.Errorf("method mask decodes to %v", got)
	}
}

func littleEndian() bool {
	v := uint16(1)
	return *(*byte)(unsafe.Pointer(&v)) == 1
}

func TestIoctlNumbers(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" && runtime.GOARCH != "386" && runtime.GOARCH != "arm" && runtime.GOARCH != "riscv64" {
		t.Skipf("numbers checked for the generic _IOC encoding; GOARCH %s", runtime.GOARCH)
	}
	// The values of IB_USER_MAD_* on x86_64 (rdma/ib_user_mad.h, size 28 and 4).
	for _, tt := range []struct {
		name      string
		got, want uintptr
	}{
		{"REGISTER_AGENT", ioctlRegisterAgent, 0xc01c1b01},
		{"UNREGISTER_AGENT", ioctlUnregisterAgent, 0x40041b02},
		{"ENABLE_PKEY", ioctlEnablePKey, 0x1b03},
	} {
		if tt.got != tt.want {
			t.Errorf("IB_USER_MAD_%s = %#x, want %#x", tt.name, tt.got, tt.want)
		}
	}
}

func TestRegisterErrors(t *testing.T) {
	tests := []struct {
		fixture, port string
		spec          mad.AgentSpec
		kernelErr     error
		want          string
	}{
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x33, ClassVersion: 1}, nil, "vendor class 0x33 needs an OUI"},
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x03, ClassVersion: 1, OUI: 0x1405}, nil, "OUI is only for the vendor classes"},
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x33, ClassVersion: 1, OUI: 0x1000000}, nil, "wider than 24 bits"},
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x03, ClassVersion: 1, Methods: []uint8{0x81}}, nil, "only request methods"},
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x03, ClassVersion: 1, Methods: []uint8{1}}, syscall.EINVAL,
			"invalid argument (is another agent serving these methods?)"},
		{"mlx5-ib", "mlx5_0/1", mad.AgentSpec{Class: 0x03, ClassVersion: 1}, syscall.ENOMEM, "cannot allocate memory"},
		{"roce", "mlx5_0/1", mad.AgentSpec{Class: 0x81, ClassVersion: 1}, nil, "link layer is Ethernet, which carries no SMPs"},
		{"smi-split", "mlx5_0/1", mad.AgentSpec{Class: 0x01, ClassVersion: 1}, nil, "its SMPs go through smi1/1 (/dev/infiniband/umad2)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			tr, k := newFake(t, fixturePort(t, tt.fixture, tt.port))
			k.failRegister = tt.kernelErr
			_, err := tr.Register(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Register(%+v) = %v, want an error containing %q", tt.spec, err, tt.want)
			}
			if tt.kernelErr != nil && !errors.Is(err, tt.kernelErr) {
				t.Errorf("error %v does not wrap %v", err, tt.kernelErr)
			}
		})
	}
	// The SMI device of a planarized HCA takes SMPs.
	tr, _ := newFake(t, fixturePort(t, "smi-split", "smi1/1"))
	if _, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1}); err != nil {
		t.Errorf("Register SMP on the SMI device: %v", err)
	}
}

func TestSend(t *testing.T) {
	tr, k := newFake(t, fixturePort(t, "mlx5-ib", "mlx5_0/1"))
	id, err := tr.Register(mad.AgentSpec{Class: 0x03, ClassVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := bytes.Repeat([]byte{0x5a}, 256)
	p := &mad.Packet{Agent: id, MAD: m, Timeout: 2 * time.Second, Addr: mad.Addr{LID: 9, QPN: 1, SL: 2}}
	if err := tr.Send(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1024)
	n, err := k.peer.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != HeaderSize+256 || !bytes.Equal(buf[HeaderSize:n], m) {
		t.Fatalf("kernel got %d bytes, want header and the MAD", n)
	}
	h, _ := UnmarshalHeader(buf)
	want := Header{AgentID: uint32(id), TimeoutMS: 2000, Length: 320, QPN: 1, QKey: mad.QP1QKey, LID: 9, SL: 2}
	if h != want {
		t.Errorf("header %+v, want %+v", h, want)
	}

	for _, tt := range []struct {
		name string
		ctx  context.Context
		p    *mad.Packet
		want string
	}{
		{"unknown agent", context.Background(), &mad.Packet{Agent: 7, MAD: m}, "agent 7 is not registered"},
		{"short MAD", context.Background(), &mad.Packet{Agent: id, MAD: m[:35]}, "the kernel needs at least 36"},
		{"cancelled", canceled(), &mad.Packet{Agent: id, MAD: m}, "context canceled"},
	} {
		if err := tr.Send(tt.ctx, tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Send = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	tr.Close()
	if err := tr.Send(context.Background(), p); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestRecv(t *testing.T) {
	tr, k := newFake(t, fixturePort(t, "mlx5-ib", "mlx5_0/1"))
	reply := bytes.Repeat([]byte{0x11}, 256)
	k.deliver(t, Header{AgentID: 1, Length: 320, QPN: 1, QKey: mad.QP1QKey, LID: 3, SL: 1, PKeyIndex: 2}, reply)
	k.deliver(t, Header{AgentID: 2, Status: uint32(syscall.ETIMEDOUT), Length: 64 + 24}, reply[:24])

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := tr.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Agent != 1 || p.Err != nil || !bytes.Equal(p.MAD, reply) ||
		p.Addr != (mad.Addr{LID: 3, SL: 1, QPN: 1, QKey: mad.QP1QKey, PKeyIndex: 2}) {
		t.Errorf("Recv = %+v", p)
	}
	p, err = tr.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Agent != 2 || len(p.MAD) != 24 || !errors.Is(p.Err, syscall.ETIMEDOUT) {
		t.Errorf("timed-out request: Recv = %+v, want agent 2, 24-byte MAD header, ETIMEDOUT", p)
	}
}

func TestRecvCancel(t *testing.T) {
	tr, _ := newFake(t, fixturePort(t, "mlx5-ib", "mlx5_0/1"))
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if _, err := tr.Recv(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv after cancel = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Recv took %v to notice the cancel", d)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	if _, err := tr.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Recv past the deadline = %v, want DeadlineExceeded", err)
	}

	// A stale cancellation does not break the next Recv.
	k2ctx, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := tr.Recv(k2ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Recv = %v, want DeadlineExceeded", err)
	}

	// Close ends a waiting Recv, and nothing is left running.
	errc := make(chan error, 1)
	go func() {
		_, err := tr.Recv(context.Background())
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("Recv during Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Recv still waiting 5 s after Close")
	}
	if _, err := tr.Recv(context.Background()); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestRecvENOSPC replays what the kernel does with an RMPP-reassembled MAD
// longer than the buffer: ENOSPC with the header (whole length) and first
// segment copied, then the whole MAD on a large enough read.
func TestRecvENOSPC(t *testing.T) {
	tr, _ := newFake(t, fixturePort(t, "mlx5-ib", "mlx5_0/1"))
	whole := make([]byte, 56+200*10) // SA header + 10 records
	for i := range whole {
		whole[i] = byte(i)
	}
	h := Header{AgentID: 0, Length: uint32(HeaderSize + len(whole)), QPN: 1}
	var sizes []int
	tr.read = func(b []byte) (int, error) {
		sizes = append(sizes, len(b))
		if err := h.MarshalTo(b); err != nil {
			return 0, err
		}
		if len(b) < int(h.Length) {
			copy(b[HeaderSize:], whole[:256])
			return 0, &fs.PathError{Op: "read", Path: "umad", Err: syscall.ENOSPC}
		}
		return HeaderSize + copy(b[HeaderSize:], whole), nil
	}
	p, err := tr.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.MAD, whole) {
		t.Errorf("got a MAD of %d bytes, want the reassembled %d", len(p.MAD), len(whole))
	}
	if !slices.Equal(sizes, []int{320, HeaderSize + len(whole)}) {
		t.Errorf("read sizes %v, want 320 then %d", sizes, HeaderSize+len(whole))
	}

	for _, bad := range []uint32{100, HeaderSize + maxMAD + 1} {
		h.Length = bad
		tr.buf = make([]byte, 320)
		tr.read = func(b []byte) (int, error) {
			h.MarshalTo(b)
			return 0, syscall.ENOSPC
		}
		if _, err := tr.Recv(context.Background()); err == nil || !strings.Contains(err.Error(), "ENOSPC") {
			t.Errorf("ENOSPC with length %d: Recv = %v, want an error", bad, err)
		}
	}
	tr.read = func([]byte) (int, error) { return 0, syscall.EIO }
	if _, err := tr.Recv(context.Background()); !errors.Is(err, syscall.EIO) {
		t.Errorf("read error: Recv = %v, want EIO", err)
	}
	tr.read = func([]byte) (int, error) { return 10, nil }
	if _, err := tr.Recv(context.Background()); err == nil {
		t.Error("short read: no error")
	}
}

func TestLocalPort(t *testing.T) {
	tr, _ := newFake(t, fixturePort(t, "two-port", "mlx4_0/2"))
	lp, err := tr.LocalPort(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := mad.LocalPort{Name: "mlx4_0/2", NodeGUID: 0x0002c90300001490, PortGUID: 0x0002c90300001492, PortNum: 2,
		GIDPrefix: 0xfe80000000000000, LID: 12, LMC: 2, SMLID: 1, SMSL: 1}
	if lp != want {
		t.Errorf("LocalPort = %+v, want %+v", lp, want)
	}
	if _, err := tr.LocalPort(canceled()); !errors.Is(err, context.Canceled) {
		t.Errorf("LocalPort(cancelled) = %v", err)
	}
	if !tr.KernelRMPP() || tr.Path() != "/dev/infiniband/umad-test" || tr.Port().String() != "mlx4_0/2" {
		t.Error("KernelRMPP, Path or Port wrong")
	}
}

// copyFixture copies a device fixture so a test can change it, and gives a
// /dev root of its own.
func copyFixture(t *testing.T, name string) (device.FS, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "sys"), os.DirFS(filepath.Join("..", "device", "testdata", name, "sys"))); err != nil {
		t.Fatal(err)
	}
	return device.FS{SysRoot: filepath.Join(root, "sys"), DevRoot: filepath.Join(root, "dev")}, root
}

func openFirst(t *testing.T, f device.FS) (*Transport, error) {
	t.Helper()
	devs, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	return Open(devs[0].Ports[0])
}

func TestOpenErrors(t *testing.T) {
	t.Run("no device node", func(t *testing.T) {
		f, _ := copyFixture(t, "mlx5-ib")
		_, err := openFirst(t, f)
		var oe *OpenError
		if !errors.As(err, &oe) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "is ib_umad loaded") ||
			!strings.HasSuffix(oe.Path, "/dev/infiniband/umad0") {
			t.Errorf("Open without the node = %v, want an *OpenError for .../dev/infiniband/umad0 asking about ib_umad", err)
		}
	})
	t.Run("not a umad device", func(t *testing.T) {
		f, root := copyFixture(t, "mlx5-ib")
		if err := os.MkdirAll(filepath.Join(root, "dev", "infiniband"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "dev", "infiniband", "umad0"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := openFirst(t, f)
		if !errors.Is(err, syscall.ENOTTY) || !strings.Contains(err.Error(), "enabling P_Key index mode") {
			t.Errorf("Open of a plain file = %v, want ENOTTY from IB_USER_MAD_ENABLE_PKEY", err)
		}
	})
	t.Run("ABI 4", func(t *testing.T) {
		f, root := copyFixture(t, "mlx5-ib")
		if err := os.WriteFile(filepath.Join(root, "sys", "class", "infiniband_mad", "abi_version"), []byte("4\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := openFirst(t, f)
		var ae *ABIError
		if !errors.As(err, &ae) || ae.Version != 4 || !strings.Contains(err.Error(), "infiniband_mad/abi_version: umad ABI version 4") {
			t.Errorf("Open with ABI 4 = %v, want an *ABIError", err)
		}
	})
	t.Run("no abi_version", func(t *testing.T) {
		f, root := copyFixture(t, "mlx5-ib")
		if err := os.Remove(filepath.Join(root, "sys", "class", "infiniband_mad", "abi_version")); err != nil {
			t.Fatal(err)
		}
		_, err := openFirst(t, f)
		if !errors.Is(err, ErrNoUmad) || !strings.Contains(err.Error(), "modprobe ib_umad") {
			t.Errorf("Open without abi_version = %v, want ErrNoUmad", err)
		}
	})
	t.Run("no umad class device", func(t *testing.T) {
		f, root := copyFixture(t, "mlx5-ib")
		if err := os.RemoveAll(filepath.Join(root, "sys", "class", "infiniband_mad", "umad0")); err != nil {
			t.Fatal(err)
		}
		_, err := openFirst(t, f)
		if !errors.Is(err, ErrNoUmad) || !strings.Contains(err.Error(), "mlx5_0/1") {
			t.Errorf("Open without umad0 = %v, want ErrNoUmad naming the port", err)
		}
	})
	if _, err := Open(nil); err == nil {
		t.Error("Open(nil): no error")
	}
	if _, err := OpenSMI(nil); err == nil {
		t.Error("OpenSMI(nil): no error")
	}
}

func TestOpenSMI(t *testing.T) {
	f, _ := copyFixture(t, "smi-split")
	devs, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	plane, _ := device.FindEndPort(devs, "mlx5_1/1")
	_, err = OpenSMI(plane)
	var oe *OpenError
	if !errors.As(err, &oe) || !strings.HasSuffix(oe.Path, "/dev/infiniband/umad2") {
		t.Errorf("OpenSMI(mlx5_1/1) = %v, want it to open smi1's umad2", err)
	}
	_, err = OpenSMI(fixturePort(t, "roce", "mlx5_0/1"))
	if err == nil || !strings.Contains(err.Error(), "has no SMI") {
		t.Errorf("OpenSMI(RoCE port) = %v, want a no-SMI error", err)
	}
}

func TestOpenErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/dev/infiniband/umad0", Err: syscall.EACCES},
			"opening /dev/infiniband/umad0: permission denied: run as root, or allow your user with a udev rule"},
		{&fs.PathError{Op: "open", Path: "/dev/infiniband/umad0", Err: syscall.ENOENT},
			"opening /dev/infiniband/umad0: no such file or directory: is ib_umad loaded (modprobe ib_umad)"},
		{syscall.ENODEV, "opening /dev/infiniband/umad0: no such device: the RDMA device went away"},
		{syscall.EIO, "opening /dev/infiniband/umad0: input/output error"},
	}
	for _, tt := range tests {
		err := openError("/dev/infiniband/umad0", tt.err)
		if !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("openError(%v) = %q, want prefix %q", tt.err, err, tt.want)
		}
	}
	if err := openError("x", &fs.PathError{Err: syscall.EACCES}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v does not match fs.ErrPermission", err)
	}
}
