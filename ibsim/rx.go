package ibsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/rdmakit/rdmakit/mad"
)

// The receive path. The reader takes every datagram queued on the data
// socket in one recvmmsg(2) call, straight into the memory of the
// Packets it becomes, and hands them to Recv as one batch: per batch, not
// per MAD, one system call and one channel send. The memory of a packet
// that a client hands back (Recycle) holds a later datagram; new memory
// comes in slabs.
const (
	// rxLimit is how many received packets wait for Recv. Beyond that
	// they are dropped: blocking would stop us reading the socket, and
	// ibsim, which is single-threaded, spins on a client that does not
	// read.
	rxLimit = 4096
	// rxBatch bounds the datagrams read in one system call.
	rxBatch = 64
	// rxSlab is how many datagrams share one allocation when no recycled
	// ones are left, and rxRoom how many batches' worth of room the
	// reader takes at once for the lists of the packets it hands over.
	rxSlab = 64
	rxRoom = 16 * rxBatch
)

// rxSlot is one received datagram and the Packet made of it; the Packet's
// MAD points into raw. The Packet comes first: Recycle finds its slot
// from it.
type rxSlot struct {
	pkt mad.Packet
	// One byte past a request: a longer datagram shows as such and is
	// dropped, as ibsim drops it.
	raw [requestSize + 1]byte
}

// rxQueue holds what the reader received until Recv takes it. A batch
// belongs to Recv once sent on rx; Recv pops packets from the batches it
// holds under heldMu, so that any number of goroutines may call it.
type rxQueue struct {
	rx     chan []*rxSlot
	queued atomic.Int64 // packets in rx and held, not yet returned by Recv
	heldMu sync.Mutex
	held   [][]*rxSlot // batches taken from rx, oldest first, none empty

	// Slots handed back by Recycle, for the reader, and new ones not
	// yet used.
	free sync.Pool
	slab []rxSlot
}

func newRxQueue() rxQueue {
	// Every batch holds at least one packet, so rx never fills before
	// rxLimit packets do.
	return rxQueue{rx: make(chan []*rxSlot, rxLimit)}
}

// push hands a batch to Recv and returns how many of its packets fitted;
// the rest are dropped.
func (q *rxQueue) push(b []*rxSlot) int {
	room := rxLimit - int(q.queued.Load()) // only push adds: room only grows meanwhile
	if room <= 0 {
		return 0
	}
	b = b[:min(len(b), room):min(len(b), room)]
	q.queued.Add(int64(len(b)))
	select {
	case q.rx <- b:
		return len(b)
	default:
		q.queued.Add(-int64(len(b)))
		return 0
	}
}

// pop returns the oldest packet of the held batches, after adding b (nil
// for none) to them.
func (q *rxQueue) pop(b []*rxSlot) *mad.Packet {
	q.heldMu.Lock()
	if len(b) > 0 {
		q.held = append(q.held, b)
	}
	if len(q.held) == 0 {
		q.heldMu.Unlock()
		return nil
	}
	first := q.held[0]
	p := &first[0].pkt
	first[0] = nil // the slot is Recv's caller's
	if len(first) > 1 {
		q.held[0] = first[1:]
	} else {
		n := copy(q.held, q.held[1:])
		q.held[n] = nil
		q.held = q.held[:n]
	}
	q.heldMu.Unlock()
	q.queued.Add(-1)
	return p
}

// Recv returns the next MAD for a registered agent. A request that the
// simulator bounced comes back with Err set to a *DroppedError.
func (t *Transport) Recv(ctx context.Context) (*mad.Packet, error) {
	if t.closed.Load() {
		return nil, mad.ErrClosed
	}
	if p := t.pop(nil); p != nil {
		return p, nil
	}
	select {
	case b := <-t.rx:
		return t.pop(b), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.closing:
		return nil, mad.ErrClosed
	case <-t.readerExit:
		select {
		case b := <-t.rx:
			return t.pop(b), nil
		case <-t.closing:
			return nil, mad.ErrClosed
		default:
		}
		if p := t.pop(nil); p != nil {
			return p, nil
		}
		return nil, fmt.Errorf("%v: receiving: %w", t.cfg, t.readErr)
	}
}

// freeSlot returns memory for a datagram: a recycled slot, or a new one.
func (q *rxQueue) freeSlot() *rxSlot {
	if s, ok := q.free.Get().(*rxSlot); ok {
		return s
	}
	if len(q.slab) == 0 {
		q.slab = make([]rxSlot, rxSlab)
	}
	s := &q.slab[0]
	q.slab = q.slab[1:]
	return s
}

// Recycle takes back a packet that Recv returned and that its caller, and
// whoever it gave the packet to, no longer use: its memory holds a later
// datagram. A packet whose MAD does not lie where a received one's does,
// right after the Packet (one that did not come from Recv), is left
// alone.
func (t *Transport) Recycle(p *mad.Packet) {
	if p == nil || len(p.MAD) == 0 {
		return
	}
	// The slot's raw bytes follow its Packet; the MAD lies in them.
	base := uintptr(unsafe.Pointer(p)) + unsafe.Offsetof(rxSlot{}.raw)
	if off := uintptr(unsafe.Pointer(unsafe.SliceData(p.MAD))) - base; off >= requestSize {
		return
	}
	s := (*rxSlot)(unsafe.Pointer(p))
	s.pkt = mad.Packet{}
	t.free.Put(s)
}

// reader moves datagrams from the data socket to the receive queue until
// the socket is closed.
func (t *Transport) reader() {
	defer close(t.readerExit)
	bufs := make([][]byte, rxBatch)
	sizes := make([]int, rxBatch)
	// Room for the slots of the batches to come; those before it are
	// Recv's. A slot in it is the reader's, to fill.
	var room []*rxSlot
	for {
		if len(room) < rxBatch {
			fresh := make([]*rxSlot, rxRoom)
			copy(fresh, room) // slots read into but not handed over
			room = fresh
		}
		for i := range rxBatch {
			if room[i] == nil {
				room[i] = t.freeSlot()
			}
			bufs[i] = room[i].raw[:]
		}
		n, err := t.batch.Read(bufs, sizes)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				continue // an ICMP error for an earlier UDP send
			}
			t.readErr = err
			return
		}
		kept := t.decodeBatch(room[:n], sizes)
		if kept == 0 {
			continue
		}
		sent := t.push(room[:kept:kept])
		if sent < kept {
			t.overflow.Add(uint64(kept - sent))
		}
		room = room[sent:]
	}
}

// decodeBatch turns the datagrams in slots (sizes[i] bytes each) into
// Packets, moves those an agent wants to the front and returns how many
// there are; the others are counted and forgotten.
func (t *Transport) decodeBatch(slots []*rxSlot, sizes []int) int {
	kept := 0
	for i, s := range slots {
		r, err := unmarshalRequest(s.raw[:sizes[i]])
		if err != nil {
			t.malformed.Add(1)
			continue
		}
		if !t.deliver(&s.pkt, r) {
			t.unwanted.Add(1)
			continue
		}
		slots[i], slots[kept] = slots[kept], s
		kept++
	}
	return kept
}
