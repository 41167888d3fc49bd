package ibsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/internal/mmsg"
	"github.com/rdmakit/rdmakit/mad"
)

// fakeSim is a simulator that answers CONNECT and DISCONNECT and otherwise
// does what a test says: it sends the client datagrams of its choosing on
// slot 0's data socket, and reads the client's only when asked, so that
// the client's sends can be made to block.
type fakeSim struct {
	t    *testing.T
	base string
	out  *net.UnixConn // "<base>:out0", connected to the client once it is
	io   *mmsg.Conn
}

var fakeSeq atomic.Int64

func startFakeSim(t *testing.T) *fakeSim {
	t.Helper()
	base := fmt.Sprintf("fakesim%d-%d", time.Now().UnixNano(), fakeSeq.Add(1))
	ctl, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@" + base + ":ctl\x00", Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "@" + base + ":out0\x00", Net: "unixgram"})
	if err != nil {
		ctl.Close()
		t.Fatal(err)
	}
	io, err := mmsg.New(out, 64)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSim{t: t, base: base, out: out, io: io}
	done := make(chan struct{})
	t.Cleanup(func() {
		ctl.Close()
		out.Close()
		<-done
	})
	go func() {
		defer close(done)
		f.control(ctl)
	}()
	return f
}

func (f *fakeSim) control(ctl *net.UnixConn) {
	buf := make([]byte, 256)
	for {
		n, from, err := ctl.ReadFromUnix(buf)
		if err != nil {
			return
		}
		m, err := unmarshalCtl(buf[:n])
		if err != nil {
			continue
		}
		if m.typ == ctlConnect {
			info := getClientInfo(&m.data)
			if err := f.connectOut(info.id); err != nil {
				f.t.Errorf("fake simulator: %v", err)
				m.typ = ctlError
			} else {
				info.id, info.nodeID = 0, "fake"
				info.put(&m.data)
			}
		}
		// Go drops the trailing NUL of the sender's abstract name.
		_, _ = ctl.WriteToUnix(m.marshal(), &net.UnixAddr{Name: from.Name + "\x00", Net: "unixgram"})
	}
}

// connectOut connects slot 0's socket to the client's data socket, as
// ibsim does while handling CONNECT.
func (f *fakeSim) connectOut(id uint32) error {
	raw, err := f.out.SyscallConn()
	if err != nil {
		return err
	}
	sa := &unix.SockaddrUnix{Name: "@" + f.base + ":in" + strconv.FormatUint(uint64(id), 10) + "\x00"}
	var cerr error
	if err := raw.Control(func(fd uintptr) { cerr = unix.Connect(int(fd), sa) }); err != nil {
		return err
	}
	return cerr
}

func (f *fakeSim) dial() *Transport {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr, err := Dial(ctx, Config{SockName: f.base})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { tr.Close() })
	return tr
}

// send writes datagrams to the client, many per system call.
func (f *fakeSim) send(bufs [][]byte) {
	f.t.Helper()
	if err := f.out.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
		f.t.Fatal(err)
	}
	if err := f.io.Write(bufs); err != nil {
		f.t.Fatal(err)
	}
}

// reply is a SubnGetResp datagram with TID tid and the TID repeated
// through its data, so that a MAD that was moved wrongly shows.
func reply(class uint8, tid uint32) []byte {
	m := make([]byte, madSize)
	m[0], m[1], m[2], m[3] = 1, class, 1, 0x81
	for i := madTIDOffset + 4; i+4 <= madSize; i += 4 {
		binary.BigEndian.PutUint32(m[i:], tid)
	}
	b := make([]byte, requestSize)
	(&simRequest{slid: 1, length: madSize, mad: m}).marshal(b)
	return b
}

func checkReply(p *mad.Packet) (uint32, error) {
	if len(p.MAD) != madSize || p.Err != nil || p.Addr.LID != 1 {
		return 0, fmt.Errorf("packet %+v", p)
	}
	tid := binary.BigEndian.Uint32(p.MAD[madTIDOffset+4:])
	for i := madTIDOffset + 4; i+4 <= madSize; i += 4 {
		if binary.BigEndian.Uint32(p.MAD[i:]) != tid {
			return 0, fmt.Errorf("MAD of TID %d garbled at byte %d: %x", tid, i, p.MAD)
		}
	}
	return tid, nil
}

// TestRecvFromManyGoroutines has four goroutines in Recv while the
// simulator sends replies in bursts, mixed with datagrams that are
// malformed or that no agent wants: every reply arrives exactly once and
// intact, and the rest are counted. The replies of even TIDs are
// recycled as they come; those of odd ones are kept, and are still intact
// at the end. A packet that Recv did not return is not recycled.
func TestRecvFromManyGoroutines(t *testing.T) {
	f := startFakeSim(t)
	tr := f.dial()
	foreign := &mad.Packet{MAD: reply(0x81, 1)[requestSize-madSize:]}
	tr.Recycle(foreign)
	tr.Recycle(nil)
	tr.Recycle(&mad.Packet{})
	if _, err := tr.Register(mad.AgentSpec{Class: 0x81}); err != nil {
		t.Fatal(err)
	}
	const replies = 3000
	var bufs [][]byte
	var want Stats
	for i := range replies {
		bufs = append(bufs, reply(0x81, uint32(i)))
		switch {
		case i%7 == 3:
			bufs = append(bufs, make([]byte, 100))
			want.Malformed++
		case i%11 == 5:
			bufs = append(bufs, make([]byte, requestSize+12))
			want.Malformed++
		case i%13 == 1:
			bufs = append(bufs, reply(0x04, uint32(i))) // no PMA agent
			want.Unwanted++
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		mu   sync.Mutex
		seen = map[uint32]int{}
		kept = map[uint32]*mad.Packet{}
		wg   sync.WaitGroup
	)
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p, err := tr.Recv(ctx)
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						errs <- err
					}
					return
				}
				tid, err := checkReply(p)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				if p == foreign {
					errs <- errors.New("Recv returned a packet it did not make")
				}
				mu.Lock()
				seen[tid]++
				if tid%2 == 1 {
					kept[tid] = p
				}
				if len(seen) == replies {
					cancel()
				}
				mu.Unlock()
				if tid%2 == 0 {
					tr.Recycle(p)
				}
			}
		}()
	}
	for len(bufs) > 0 {
		k := min(len(bufs), 200)
		f.send(bufs[:k])
		bufs = bufs[k:]
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != replies {
		t.Errorf("%d of %d replies received", len(seen), replies)
	}
	for tid, n := range seen {
		if n != 1 {
			t.Errorf("TID %d received %d times", tid, n)
		}
	}
	for tid, p := range kept {
		if got, err := checkReply(p); err != nil || got != tid {
			t.Errorf("kept packet of TID %d: now TID %d, %v", tid, got, err)
		}
	}
	// The last datagrams may be being counted still.
	deadline := time.Now().Add(5 * time.Second)
	for tr.Stats() != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := tr.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestRecvOverflow sends more than the receive queue holds while nobody
// calls Recv: the excess is dropped and counted, and what was kept comes
// out in order.
func TestRecvOverflow(t *testing.T) {
	f := startFakeSim(t)
	tr := f.dial()
	if _, err := tr.Register(mad.AgentSpec{Class: 0x81}); err != nil {
		t.Fatal(err)
	}
	const extra = 500
	var bufs [][]byte
	for i := range rxLimit + extra {
		bufs = append(bufs, reply(0x81, uint32(i)))
	}
	f.send(bufs)
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stats().Overflow < extra {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %d overflows", tr.Stats(), extra)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range rxLimit {
		p, err := tr.Recv(ctx)
		if err != nil {
			t.Fatalf("Recv %d: %v", i, err)
		}
		if tid, err := checkReply(p); err != nil || tid != uint32(i) {
			t.Fatalf("Recv %d: TID %d, %v", i, tid, err)
		}
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if p, err := tr.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Recv after the queue emptied: %+v, %v", p, err)
	}
	if got := tr.Stats(); got != (Stats{Overflow: extra}) {
		t.Errorf("stats %+v", got)
	}
	// The queue has room again.
	f.send([][]byte{reply(0x81, 7)})
	if p, err := tr.Recv(ctx); err != nil {
		t.Error(err)
	} else if tid, err := checkReply(p); err != nil || tid != 7 {
		t.Errorf("TID %d, %v", tid, err)
	}
}

// TestSendBlocked fills the simulator's queue: a send then waits, and ends
// with its context's deadline or cancellation, or with Close; once the
// simulator reads again, sends go through.
func TestSendBlocked(t *testing.T) {
	f := startFakeSim(t)
	tr := f.dial()
	agent, err := tr.Register(mad.AgentSpec{Class: 0x81})
	if err != nil {
		t.Fatal(err)
	}
	p := &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: make([]byte, madSize)}
	p.MAD[0], p.MAD[1], p.MAD[2], p.MAD[3] = 1, 0x81, 1, 1

	// Fill: the first send that times out is the one that found no room.
	sent := 0
	for ; ; sent++ {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := tr.Send(ctx, p)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("send %d: %v", sent, err)
		}
		if sent > 1<<20 {
			t.Fatal("a million sends and the queue is not full")
		}
	}
	if sent == 0 {
		t.Fatal("the first send found the queue full")
	}

	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- tr.Send(ctx, p) }()
	time.Sleep(30 * time.Millisecond)
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled send: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end a blocked send")
	}

	// Drain, and sends pass again without waiting for a deadline.
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, requestSize+1)
	}
	sizes := make([]int, 64)
	for drained := 0; drained < sent; {
		if err := f.out.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := f.io.Read(bufs, sizes)
		if err != nil {
			t.Fatalf("draining after %d of %d: %v", drained, sent, err)
		}
		for i := range n {
			if sizes[i] != requestSize {
				t.Fatalf("the simulator got a %d-byte datagram", sizes[i])
			}
		}
		drained += n
	}
	for i := range 10 {
		if err := tr.Send(context.Background(), p); err != nil {
			t.Fatalf("send %d after draining: %v", i, err)
		}
	}

	// Refill, and Close ends the blocked send.
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := tr.Send(ctx, p)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	go func() { got <- tr.Send(context.Background(), p) }()
	time.Sleep(30 * time.Millisecond)
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("send blocked at Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a blocked send")
	}
}

// TestSendFromManyGoroutines has eight goroutines sending at once: the
// simulator gets every datagram exactly once and intact (each send has
// its own buffer; no lock keeps them apart).
func TestSendFromManyGoroutines(t *testing.T) {
	f := startFakeSim(t)
	tr := f.dial()
	agent, err := tr.Register(mad.AgentSpec{Class: 0x81})
	if err != nil {
		t.Fatal(err)
	}
	const senders, each = 8, 200
	errs := make(chan error, senders)
	for g := range senders {
		go func() {
			for i := range each {
				m := make([]byte, madSize)
				m[0], m[1], m[2], m[3] = 1, 0x81, 1, 1
				id := uint32(g*each + i)
				for o := madTIDOffset + 4; o+4 <= madSize; o += 4 {
					binary.BigEndian.PutUint32(m[o:], id)
				}
				if err := tr.Send(context.Background(), &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: m}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	seen := make([]bool, senders*each)
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, requestSize+1)
	}
	sizes := make([]int, 64)
	for got := 0; got < senders*each; {
		if err := f.out.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		n, err := f.io.Read(bufs, sizes)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", got, senders*each, err)
		}
		for i := range n {
			r, err := unmarshalRequest(bufs[i][:sizes[i]])
			if err != nil {
				t.Fatalf("datagram %d: %v", got+i, err)
			}
			id := binary.BigEndian.Uint32(r.mad[madTIDOffset+4:])
			for o := madTIDOffset + 4; o+4 <= madSize; o += 4 {
				if binary.BigEndian.Uint32(r.mad[o:]) != id {
					t.Fatalf("MAD %d garbled at byte %d", id, o)
				}
			}
			if int(id) >= len(seen) || seen[id] {
				t.Fatalf("MAD %d unknown or seen twice", id)
			}
			seen[id] = true
		}
		got += n
	}
	for range senders {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
