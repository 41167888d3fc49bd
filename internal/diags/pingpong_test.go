package diags

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

func TestPingpongWireFormat(t *testing.T) {
	gid, _ := iba.ParseGID("::ffff:10.0.0.1")
	d := ppDest{LID: 0x12, QPN: 0x11, PSN: 0xabcdef, GID: gid}
	b := d.marshal()
	// ibv_rc_pingpong's sprintf("%04x:%06x:%06x:%s") and gid_to_wire_gid,
	// sent with the C string's NUL: 52 bytes.
	want := "0012:000011:abcdef:00000000000000000000ffff0a000001\x00"
	if string(b) != want {
		t.Fatalf("marshal = %q, want %q", b, want)
	}
	got, err := parsePPDest(b)
	if err != nil || got != d {
		t.Fatalf("parse = %+v, %v; want %+v", got, err, d)
	}
	if s := d.String(); s != "LID 0x0012, QPN 0x000011, PSN 0xabcdef, GID ::ffff:10.0.0.1" {
		t.Errorf("String = %q", s)
	}
	for _, bad := range []string{
		"", "0012:000011:abcdef", "0012:000011:abcdef:0000", "zz12:000011:abcdef:00000000000000000000ffff0a000001",
		"10000:000011:abcdef:00000000000000000000ffff0a000001", "0012:1000000:abcdef:00000000000000000000ffff0a000001",
		"0012:000011:abcdef:0000000000000000000gffff0a000001", "0012:000011:abcdef:00000000000000000000ffff0a000001:9",
	} {
		if d, err := parsePPDest([]byte(bad)); err == nil {
			t.Errorf("parse %q = %+v, want an error", bad, d)
		}
	}
}

func FuzzPingpongParseDest(f *testing.F) {
	f.Add([]byte("0012:000011:abcdef:00000000000000000000ffff0a000001\x00"))
	f.Add([]byte("0000:000000:000000:fe800000000000000000000000000001"))
	f.Add([]byte(":::"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parsePPDest(b)
		if err != nil {
			return
		}
		// What parses re-encodes to the same fields.
		if e, err := parsePPDest(d.marshal()); err != nil || e != d {
			t.Fatalf("round trip of %q: %+v, %v", b, e, err)
		}
	})
}

// TestPingpongExchange runs both sides of the TCP exchange on loopback:
// the server brings its QP up (connect) before it answers.
func TestPingpongExchange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srvDest := ppDest{LID: 1, QPN: 0x100, PSN: 0x123}
	cliDest := ppDest{LID: 2, QPN: 0x200, PSN: 0x456}
	cliDest.GID[15] = 9
	listening := make(chan struct{})
	type out struct {
		d         ppDest
		connected ppDest
		err       error
	}
	srvOut := make(chan out, 1)
	const port = 28515
	go func() {
		var o out
		o.d, o.err = ppServerExchange(ctx, port, srvDest, func(r ppDest) error { o.connected = r; return nil }, func() { close(listening) })
		srvOut <- o
	}()
	select {
	case <-listening:
	case <-ctx.Done():
		t.Fatal("server never listened")
	}
	got, err := ppClientExchange(ctx, "127.0.0.1", port, cliDest)
	if err != nil || got != srvDest {
		t.Fatalf("client got %+v, %v; want %+v", got, err, srvDest)
	}
	s := <-srvOut
	if s.err != nil || s.d != cliDest || s.connected != cliDest {
		t.Fatalf("server got %+v (connected to %+v), %v; want %+v", s.d, s.connected, s.err, cliDest)
	}

	// A server whose QP cannot connect reports it; a client with nobody
	// listening fails at once; a cancelled server stops waiting.
	go func() {
		_, err := ppServerExchange(ctx, port, srvDest, func(ppDest) error { return errors.New("no route") }, nil)
		srvOut <- out{err: err}
	}()
	time.Sleep(100 * time.Millisecond)
	_, _ = ppClientExchange(ctx, "127.0.0.1", port, cliDest)
	if s := <-srvOut; s.err == nil || !strings.Contains(s.err.Error(), "no route") {
		t.Errorf("server with a failing connect: %v", s.err)
	}
	if _, err := ppClientExchange(ctx, "127.0.0.1", 1, cliDest); err == nil {
		t.Error("client with no server: no error")
	}
	short, cancel2 := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel2()
	if _, err := ppServerExchange(short, port+1, srvDest, func(ppDest) error { return nil }, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("server with no client: %v, want a deadline", err)
	}
}

func TestPingpongResultRender(t *testing.T) {
	r := newPingpongResult(ppDest{QPN: 1}, ppDest{QPN: 2}, 4096, 1000, 2*time.Second)
	var b strings.Builder
	renderPingpongTotals(&b, r)
	want := "8192000 bytes in 2.00 seconds = 32.77 Mbit/sec\n1000 iters in 2.00 seconds = 2000.00 usec/iter\n"
	if b.String() != want {
		t.Errorf("render = %q, want %q", b.String(), want)
	}
}
