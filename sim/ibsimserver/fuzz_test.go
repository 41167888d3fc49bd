package ibsimserver

import (
	"context"
	"net"
	"testing"
)

// FuzzControl feeds arbitrary control datagrams to the server: it answers
// or ignores them, and never panics.
func FuzzControl(f *testing.F) {
	var m ctlMsg
	m.typ = ctlConnect
	copy(m.data[infoNodeID:], "hca1")
	var b [ctlSize]byte
	f.Add(append([]byte(nil), m.marshal(b[:])...))
	m = ctlMsg{typ: ctlGetPortInfo}
	f.Add(append([]byte(nil), m.marshal(b[:])...))
	f.Add([]byte("short"))
	_, s, _ := serve(f, true)
	from := &net.UnixAddr{Name: "@fuzz-nobody\x00", Net: "unixgram"}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, ok := parseCtl(in)
		if !ok {
			return
		}
		r := s.control(context.Background(), m, from)
		if r.typ != m.typ && r.typ != ctlError {
			t.Fatalf("reply type %d to %d", r.typ, m.typ)
		}
	})
}

// FuzzRequest checks the data header codec round trip.
func FuzzRequest(f *testing.F) {
	f.Add(uint16(0xFFFF), uint16(0), uint32(0), uint32(1), uint32(110))
	f.Fuzz(func(t *testing.T, dlid, slid uint16, dqp, sqp, status uint32) {
		b := make([]byte, reqSize)
		r := request{dlid: dlid, slid: slid, dqp: dqp, sqp: sqp, status: status}
		r.marshal(b)
		if parseRequest(b) != r {
			t.Fatalf("%+v back as %+v", r, parseRequest(b))
		}
	})
}
