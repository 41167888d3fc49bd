package verbs

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
)

// These run on the build machines, which have no RDMA device; the tests
// with a device run in the VM (guest_test.go).

func TestVerbsErrors(t *testing.T) {
	err := errnoErr("moving QP 0x11 to RTR", int(syscall.EINVAL), 0)
	if !errors.Is(err, syscall.EINVAL) || err.Error() != "verbs: moving QP 0x11 to RTR: invalid argument" {
		t.Errorf("errnoErr(EINVAL) = %v", err)
	}
	if err := errnoErr("x", -int(syscall.EBUSY), 0); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("errnoErr(-EBUSY) = %v", err)
	}
	if err := errnoErr("x", -1, syscall.EAGAIN); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("errnoErr(-1, EAGAIN) = %v", err)
	}
	if err := nullErr("x", syscall.ENOMEM); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("nullErr(ENOMEM) = %v", err)
	}
	if err := nullErr("x", 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("nullErr(0) = %v, want EIO", err)
	}
	pe := &PostError{Index: 2, Err: &Error{Op: "posting", Err: syscall.ENOMEM}}
	if !errors.Is(pe, syscall.ENOMEM) || !strings.Contains(pe.Error(), "work request 2") {
		t.Errorf("PostError = %v", pe)
	}
	we := (&WC{ID: 5, Status: WCRemAccessErr, QPNum: 0x11}).Err()
	var wce *WCError
	if !errors.As(we, &wce) || !strings.Contains(we.Error(), "remote access error") || wce.WC.ID != 5 {
		t.Errorf("WC error = %v", we)
	}
	if (&WC{}).Err() != nil {
		t.Error("a successful WC reports an error")
	}
	le := &LoadError{Library: "libibverbs.so.1", Reason: "cannot open shared object file", Install: true}
	if !errors.Is(le, ErrNotAvailable) || errors.Is(le, syscall.ENOENT) || !strings.Contains(le.Error(), "libibverbs1 ibverbs-providers") ||
		!strings.Contains(le.Error(), "dnf install libibverbs") {
		t.Errorf("LoadError = %v", le)
	}
	if err := (&Error{Op: "x", Err: le}); !errors.Is(err, ErrNotAvailable) {
		t.Errorf("an Error wrapping a LoadError does not match ErrNotAvailable")
	}
}

func TestVerbsNames(t *testing.T) {
	for m, b := range map[MTU]int{MTU256: 256, MTU1024: 1024, MTU4096: 4096, 0: 0, 6: 0} {
		if m.Bytes() != b {
			t.Errorf("MTU %d = %d bytes, want %d", m, m.Bytes(), b)
		}
	}
	if m, err := MTUOf(2048); err != nil || m != MTU2048 {
		t.Errorf("MTUOf(2048) = %v, %v", m, err)
	}
	if _, err := MTUOf(1500); err == nil {
		t.Error("MTUOf(1500): no error")
	}
	for _, c := range []struct{ got, want string }{
		{QPStateRTS.String(), "RTS"}, {QPTypeUD.String(), "UD"}, {PortActive.String(), "active"},
		{PortState(9).String(), "unknown"}, {WCRetryExcErr.String(), "transport retry counter exceeded"},
		{WCStatus(-1).String(), "unknown"}, {EventSRQLimitReached.String(), "SRQ limit reached"},
		{EventType(99).String(), "unknown"}, {WCRecvRDMAWithImm.String(), "RECV_RDMA_WITH_IMM"},
	} {
		if c.got != c.want {
			t.Errorf("name %q, want %q", c.got, c.want)
		}
	}
}

// needLib skips (locally) or fails (in CI) when libibverbs cannot be
// loaded on this machine.
func needLib(t *testing.T) {
	t.Helper()
	err := Available()
	floor.Need(t, err == nil, "libibverbs (apt-get install libibverbs1 ibverbs-providers)")
}

// TestVerbsNoDevice: on a machine without RDMA devices (the build hosts)
// listing works and opening says which device is missing.
func TestVerbsNoDevice(t *testing.T) {
	needLib(t)
	devs, err := Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	for _, d := range devs {
		if d.Name == "nosuchdev0" {
			t.Fatal("a device named nosuchdev0")
		}
	}
	if _, err := Open("nosuchdev0"); !errors.Is(err, syscall.ENODEV) || !strings.Contains(err.Error(), "nosuchdev0") {
		t.Errorf("Open(nosuchdev0) = %v, want ENODEV naming it", err)
	}
}
