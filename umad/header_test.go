package umad

import (
	"bytes"
	"encoding/binary"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// ne writes host-order fields of the expected bytes, as the kernel reads
// them.
func ne32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func ne16(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var testGID = iba.GID{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x14, 0x91}

// headerBytes is a header with every field set, laid out as struct
// ib_user_mad_hdr.
var headerBytes = cat(
	ne32(3),                        // id
	ne32(110),                      // status (ETIMEDOUT)
	ne32(1500),                     // timeout_ms
	ne32(2),                        // retries
	ne32(64+256),                   // length
	[]byte{0, 0, 0, 1},             // qpn, big-endian
	[]byte{0x80, 0x01, 0x00, 0x00}, // qkey
	[]byte{0x12, 0x34},             // lid
	[]byte{5, 1},                   // sl, path_bits
	[]byte{1, 2, 64, 0x20},         // grh_present, gid_index, hop_limit, traffic_class
	testGID[:],
	[]byte{0x00, 0x0a, 0xbc, 0xde}, // flow_label
	ne16(7),                        // pkey_index
	make([]byte, 6),                // reserved
)

var headerValue = Header{
	AgentID: 3, Status: 110, TimeoutMS: 1500, Retries: 2, Length: 320, QPN: 1, QKey: 0x80010000,
	LID: 0x1234, SL: 5, PathBits: 1, GRHPresent: true, GIDIndex: 2, HopLimit: 64, TrafficClass: 0x20,
	GID: testGID, FlowLabel: 0xabcde, PKeyIndex: 7,
}

func TestHeaderLayout(t *testing.T) {
	if len(headerBytes) != HeaderSize {
		t.Fatalf("test vector is %d bytes", len(headerBytes))
	}
	b := make([]byte, HeaderSize)
	for i := range b {
		b[i] = 0xee // reserved bytes must be cleared
	}
	if err := headerValue.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, headerBytes) {
		t.Errorf("MarshalTo:\n got % x\nwant % x", b, headerBytes)
	}
	h, err := UnmarshalHeader(headerBytes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(headerValue, h); diff != "" {
		t.Errorf("UnmarshalHeader (-want +got):\n%s", diff)
	}
}

func TestHeaderShort(t *testing.T) {
	if _, err := UnmarshalHeader(make([]byte, HeaderSize-1)); err == nil {
		t.Error("UnmarshalHeader of 63 bytes: no error")
	}
	if err := headerValue.MarshalTo(make([]byte, 10)); err == nil {
		t.Error("MarshalTo into 10 bytes: no error")
	}
	if _, err := decodePacket(nil); err == nil {
		t.Error("decodePacket(nil): no error")
	}
}

func TestSendHeader(t *testing.T) {
	tests := []struct {
		name string
		p    mad.Packet
		want Header
	}{
		{
			name: "GMP to LID, default Q_Key",
			p: mad.Packet{Agent: 2, MAD: make([]byte, 256), Timeout: 1500 * time.Millisecond,
				Addr: mad.Addr{LID: 5, SL: 3, QPN: 1, PKeyIndex: 1}},
			want: Header{AgentID: 2, TimeoutMS: 1500, Length: 320, QPN: 1, QKey: mad.QP1QKey, LID: 5, SL: 3, PKeyIndex: 1},
		},
		{
			name: "DR SMP, no reply tracking below 1 ms rounds up",
			p:    mad.Packet{Agent: 0, MAD: make([]byte, 256), Timeout: 10 * time.Microsecond, Addr: mad.Addr{LID: 0xffff}},
			want: Header{AgentID: 0, TimeoutMS: 1, Length: 320, LID: 0xffff},
		},
		{
			name: "reply without timeout, explicit Q_Key, GRH",
			p: mad.Packet{Agent: 4, MAD: make([]byte, 100), Addr: mad.Addr{QPN: 0x123456, QKey: 0x1234, PathBits: 2,
				GRH: &mad.GRH{SGIDIndex: 1, HopLimit: 255, TrafficClass: 3, FlowLabel: 0xfffffff, GID: testGID}}},
			want: Header{AgentID: 4, Length: 164, QPN: 0x123456, QKey: 0x1234, PathBits: 2, GRHPresent: true,
				GIDIndex: 1, HopLimit: 255, TrafficClass: 3, FlowLabel: 0xfffff, GID: testGID},
		},
		{
			name: "huge timeout saturates",
			p:    mad.Packet{Agent: 1, MAD: make([]byte, 256), Timeout: 10000 * time.Hour, Addr: mad.Addr{QPN: 1}},
			want: Header{AgentID: 1, TimeoutMS: 0xffffffff, Length: 320, QPN: 1, QKey: mad.QP1QKey},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sendHeader(&tt.p)); diff != "" {
				t.Errorf("sendHeader (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodePacket(t *testing.T) {
	madBytes := bytes.Repeat([]byte{0xab}, 256)
	p, err := decodePacket(append(append([]byte(nil), headerBytes...), madBytes...))
	if err != nil {
		t.Fatal(err)
	}
	want := &mad.Packet{
		Agent: 3,
		Addr: mad.Addr{LID: 0x1234, SL: 5, PathBits: 1, QPN: 1, QKey: 0x80010000, PKeyIndex: 7,
			GRH: &mad.GRH{SGIDIndex: 2, HopLimit: 64, TrafficClass: 0x20, FlowLabel: 0xabcde, GID: testGID}},
		MAD: madBytes,
	}
	got := *p
	got.Err = nil // checked below
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("decodePacket (-want +got):\n%s", diff)
	}
	var se *StatusError
	if !errors.As(p.Err, &se) || !errors.Is(p.Err, syscall.ETIMEDOUT) || !errors.Is(p.Err, mad.ErrTimeout) ||
		!se.Timeout() || se.Agent != 3 {
		t.Errorf("Err = %v, want a timeout *StatusError of agent 3", p.Err)
	}
	// A reply's addressing sends the answer back (the server side uses it as is).
	back := sendHeader(&mad.Packet{Agent: 3, MAD: madBytes, Addr: p.Addr})
	if back.LID != 0x1234 || back.QPN != 1 || !back.GRHPresent || back.GID != testGID || back.GIDIndex != 2 {
		t.Errorf("reply header %+v does not mirror the received address", back)
	}
}

func TestStatusErrorText(t *testing.T) {
	tests := []struct {
		err  *StatusError
		want string
	}{
		{&StatusError{Agent: 1, Errno: syscall.ETIMEDOUT}, "umad agent 1: request timed out in the kernel"},
		{&StatusError{Agent: 2, Errno: syscall.EIO}, "umad agent 2: send failed: input/output error"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	if e := (&StatusError{Errno: syscall.EIO}); e.Timeout() || errors.Is(e, mad.ErrTimeout) {
		t.Error("EIO reported as a timeout")
	}
}

// FuzzDecodePacket feeds arbitrary reads to the decoder: no input may panic,
// and a decoded header must marshal back to the bytes it came from (apart
// from the reserved bytes and the GRH flag's normalisation).
func FuzzDecodePacket(f *testing.F) {
	f.Add(append(append([]byte(nil), headerBytes...), make([]byte, 256)...))
	f.Add(headerBytes[:HeaderSize-1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePacket(b)
		if err != nil {
			if len(b) >= HeaderSize {
				t.Fatalf("decodePacket of %d bytes: %v", len(b), err)
			}
			return
		}
		if len(p.MAD) != len(b)-HeaderSize {
			t.Fatalf("MAD of %d bytes from a read of %d", len(p.MAD), len(b))
		}
		h, _ := UnmarshalHeader(b)
		out := make([]byte, HeaderSize)
		if err := h.MarshalTo(out); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), b[:HeaderSize]...)
		if want[32] != 0 {
			want[32] = 1
		}
		clear(want[58:64])
		if !bytes.Equal(out, want) {
			t.Fatalf("round trip:\n got % x\nwant % x", out, want)
		}
	})
}
