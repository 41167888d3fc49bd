//go:build linux && cgo

package verbs

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// These run on any machine with libibverbs; the tests with a device run
// in the VM (guest_test.go).

func TestVerbsErrors(t *testing.T) {
	err := errnoErr("moving QP 0x11 to RTR", int(syscall.EINVAL), nil)
	if !errors.Is(err, syscall.EINVAL) || err.Error() != "verbs: moving QP 0x11 to RTR: invalid argument" {
		t.Errorf("errnoErr(EINVAL) = %v", err)
	}
	if err := errnoErr("x", -int(syscall.EBUSY), nil); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("errnoErr(-EBUSY) = %v", err)
	}
	if err := nullErr("x", syscall.ENOMEM); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("nullErr(ENOMEM) = %v", err)
	}
	if err := nullErr("x", nil); !errors.Is(err, syscall.EIO) {
		t.Errorf("nullErr(nil) = %v, want EIO", err)
	}
	pe := &PostError{Index: 2, Err: &Error{Op: "posting", Err: syscall.ENOMEM}}
	if !errors.Is(pe, syscall.ENOMEM) || !strings.Contains(pe.Error(), "work request 2") {
		t.Errorf("PostError = %v", pe)
	}
	we := (&WC{ID: 5, Status: WCRemAccessErr, QPNum: 0x11}).Err()
	if we == nil || !strings.Contains(we.Error(), "remote access error") {
		t.Errorf("WC error = %v", we)
	}
	if (&WC{}).Err() != nil {
		t.Error("a successful WC reports an error")
	}
}

func TestVerbsMTU(t *testing.T) {
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
	if QPStateRTS.String() != "RTS" || QPTypeUD.String() != "UD" || PortActive.String() != "active" {
		t.Errorf("names: %v %v %v", QPStateRTS, QPTypeUD, PortActive)
	}
}

// TestVerbsNoDevice: on a machine without RDMA devices (the build hosts)
// listing works and opening says which device is missing.
func TestVerbsNoDevice(t *testing.T) {
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
