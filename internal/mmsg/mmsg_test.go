package mmsg

import (
	"bytes"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair returns two connected unix datagram sockets under Go's poller.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "dgram")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	return conns[0], conns[1]
}

// TestBatches writes 10 datagrams in one Write through a Conn of batch
// size 4 and reads them back in batches of at most 3, an oversized one
// cut to its buffer.
func TestBatches(t *testing.T) {
	a, b := pair(t)
	wa, err := New(a, 4)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := New(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for i := range 10 {
		out = append(out, bytes.Repeat([]byte{byte(i)}, 10+i))
	}
	if err := wa.Write(out); err != nil {
		t.Fatal(err)
	}
	bufs := make([][]byte, 5)
	for i := range bufs {
		bufs[i] = make([]byte, 16)
	}
	sizes := make([]int, 5)
	var got [][]byte
	for len(got) < len(out) {
		n, err := rb.Read(bufs, sizes)
		if err != nil {
			t.Fatal(err)
		}
		if n < 1 || n > 3 {
			t.Fatalf("read %d datagrams, want 1 to 3", n)
		}
		for i := range n {
			got = append(got, append([]byte(nil), bufs[i][:sizes[i]]...))
		}
	}
	for i, g := range got {
		want := out[i]
		if len(want) > 16 {
			want = want[:16]
		}
		if !bytes.Equal(g, want) {
			t.Errorf("datagram %d: %x, want %x", i, g, want)
		}
	}
}

// TestReadDeadline checks that an empty socket waits under the socket's
// read deadline, as Read on the net.Conn would.
func TestReadDeadline(t *testing.T) {
	_, b := pair(t)
	rb, err := New(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = rb.Read([][]byte{make([]byte, 8)}, make([]int, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read on an empty socket: %v, want a deadline error", err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("Read returned after %v, before its deadline", d)
	}
	b.Close()
	if _, err := rb.Read([][]byte{make([]byte, 8)}, make([]int, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

func TestNewRejects(t *testing.T) {
	a, _ := pair(t)
	if _, err := New(a, 0); err == nil {
		t.Error("batch size 0 accepted")
	}
	if _, err := New(struct{ net.Conn }{a}, 1); err == nil {
		t.Error("a net.Conn without a file descriptor accepted")
	}
}
