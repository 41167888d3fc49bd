package mad

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/rdmakit/rdmakit/iba"
	"time"
)

// This file is the RMPP engine (IBA 13.6) for transports without kernel
// RMPP: segmentation and the sender's window, reassembly and the receiver's
// acknowledgements, STOP and ABORT.
//
// Layout on the wire, as the Linux kernel's implementation has it: every
// segment repeats the class header (for SA the whole SA header, 56 bytes)
// and carries Size-hdrLen bytes of data. PayloadLength counts from the end
// of the RMPP header, so a full segment counts RMPPSegmentPayload (220): in
// the first segment it is the total, segments×220 less the padding of the
// last one; in the last it is 220 less that padding.

// segment cuts a transfer (class header followed by data) into segments.
func segment(buf []byte, hdrLen int) [][]byte {
	data := buf[hdrLen:]
	chunk := Size - hdrLen
	n := max(1, (len(data)+chunk-1)/chunk)
	pad := n*chunk - len(data)
	segs := make([][]byte, n)
	for i := range segs {
		s := make([]byte, Size)
		copy(s[:hdrLen], buf[:hdrLen])
		copy(s[hdrLen:], data[i*chunk:min(len(data), (i+1)*chunk)])
		flags := uint8(RMPPFlagActive)
		var paylen uint32
		if i == 0 {
			flags |= RMPPFlagFirst
			paylen = uint32(n*RMPPSegmentPayload - pad)
		}
		if i == n-1 {
			flags |= RMPPFlagLast
			paylen = uint32(RMPPSegmentPayload - pad)
		}
		setRMPP(s, RMPPTypeData, flags, 0, uint32(i+1), paylen)
		segs[i] = s
	}
	return segs
}

// reassembly is the receiving side of one transfer.
type reassembly struct {
	x          *exchange
	addr       Addr
	hdrLen     int
	header     []byte
	data       []byte
	last       []byte // the latest in-order segment, for ACK headers
	expected   uint32 // the next segment number wanted
	windowLast uint32
	prompted   uint32 // expected value a resend or gap was already answered for
	progressed bool
}

// add takes one DATA segment; done reports the transfer complete.
func (ra *reassembly) add(mad []byte, r rmppInfo) (done bool, err error) {
	ra.progressed = false
	seg := r.data1
	switch {
	case seg == ra.expected:
		if len(mad) < ra.hdrLen {
			return false, nil
		}
		if seg == 1 {
			ra.header = append([]byte(nil), mad[:ra.hdrLen]...)
		}
		chunk := mad[ra.hdrLen:min(len(mad), Size)]
		ra.data = append(ra.data, chunk...)
		ra.last = mad
		ra.expected++
		ra.progressed = true
		if r.flags&RMPPFlagLast != 0 {
			pad := RMPPSegmentPayload - int(r.data2)
			if pad < 0 || pad > len(chunk) {
				pad = 0 // as the kernel does with an inconsistent length
			}
			ra.data = ra.data[:len(ra.data)-pad]
			ra.ack()
			return true, nil
		}
		if ra.expected > maxRMPPSegments {
			ra.send(RMPPTypeStop, RMPPStatusResources, 0, 0)
			return false, &RMPPError{RPC: ra.x.name, Target: ra.x.tname(), Type: RMPPTypeStop, Status: RMPPStatusResources, Local: true, Request: ra.x.request, Reply: mad}
		}
		if seg >= ra.windowLast {
			ra.windowLast = seg + RMPPWindow
			ra.ack()
		}
	default:
		// A resent segment we have (our ACK was lost) or a gap (a
		// segment was): say once where we are, so that the sender goes
		// on or back. More would make it resend the window once per ACK;
		// if this one is lost too, our idle timeout says it again.
		if ra.prompted != ra.expected {
			ra.prompted = ra.expected
			ra.ack()
		}
	}
	return false, nil
}

func (ra *reassembly) result() []byte {
	out := make([]byte, 0, len(ra.header)+len(ra.data))
	out = append(out, ra.header...)
	return append(out, ra.data...)
}

func (ra *reassembly) ack() {
	ra.send(RMPPTypeAck, RMPPStatusNormal, ra.expected-1, ra.windowLast)
}

func (ra *reassembly) abort(status uint8) { ra.send(RMPPTypeAbort, status, 0, 0) }

// send answers the sender with an ACK, STOP or ABORT: the data's MAD
// header with the R bit flipped, as the kernel formats it.
func (ra *reassembly) send(typ, status uint8, d1, d2 uint32) {
	if ra.last == nil {
		return
	}
	b := control(ra.last, typ, status, d1, d2)
	x := ra.x
	x.c.emit(TraceEvent{Kind: TraceRMPP, RPC: x.name, Attr: x.attr, Target: x.tname(), MAD: b, Addr: ra.addr})
	// A lost ACK is recovered by the sender's timeout; nothing to report.
	_ = x.c.t.Send(x.ctx, &Packet{Agent: x.agent, Addr: gsiAddr(ra.addr), MAD: b})
}

// control builds an RMPP ACK, STOP or ABORT answering the segment data. It
// carries the segment's whole class header, as the kernel's ACKs do (IBA
// 13.6.2.1): a vendor-OUI class needs its OUI there to be matched.
func control(data []byte, typ, status uint8, d1, d2 uint32) []byte {
	b := make([]byte, Size)
	n := HeaderSize
	if len(data) > 1 {
		n = max(n, min(classOf(iba.Class(data[1])).dataOff, len(data)))
	}
	copy(b[:n], data)
	b[offMethod] ^= 0x80
	binary.BigEndian.PutUint16(b[offStatus:], 0)
	setRMPP(b, typ, RMPPFlagActive, status, d1, d2)
	return b
}

// gsiAddr fills the QP1 defaults into the address of a received GMP so
// it can be answered.
func gsiAddr(a Addr) Addr {
	if a.QPN == 0 {
		a.QPN = QP1
	}
	if a.QKey == 0 {
		a.QKey = QP1QKey
	}
	return a
}

// sendSession is an outgoing transfer waiting for ACKs.
type sendSession struct {
	ch chan event
}

// transfer describes an outgoing RMPP transfer.
type transfer struct {
	ctx     context.Context
	key     sessionKey
	agent   int
	addr    Addr
	segs    [][]byte
	timeout time.Duration
	tries   int
	rpc     string
	target  string
}

// sendTransfer runs the sender's side (IBA 13.6.3.1): a window of segments
// at a time, going back to the first unacknowledged one on a repeated ACK
// or a timeout, until the last is acknowledged.
func (c *Client) sendTransfer(t transfer) error {
	s := &sendSession{ch: make(chan event, 4*RMPPWindow)}
	c.mu.Lock()
	if _, busy := c.sending[t.key]; busy {
		c.mu.Unlock()
		return fmt.Errorf("%s to %s: an RMPP transfer with this TID is under way", t.rpc, t.target)
	}
	c.sending[t.key] = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.sending, t.key)
		c.mu.Unlock()
	}()
	n := uint32(len(t.segs))
	var lastAcked uint32
	next, windowLast := uint32(1), uint32(1)
	var wentBack uint32 // where the last go-back restarted
	idle := 0
	sendCtl := func(typ, status uint8) {
		b := control(t.segs[0], typ, status, 0, 0)
		b[offMethod] ^= 0x80 // control() answers data; this one goes with it
		_ = c.t.Send(t.ctx, &Packet{Agent: t.agent, Addr: t.addr, MAD: b})
	}
	timer := time.NewTimer(t.timeout)
	defer timer.Stop()
	for lastAcked < n {
		for next <= min(windowLast, n) {
			seg := t.segs[next-1]
			c.emit(TraceEvent{Kind: TraceRMPP, RPC: t.rpc, Target: t.target, MAD: seg, Addr: t.addr})
			if err := c.t.Send(t.ctx, &Packet{Agent: t.agent, Addr: t.addr, MAD: seg, Timeout: t.timeout}); err != nil {
				return fmt.Errorf("%s to %s: sending RMPP segment %d: %w", t.rpc, t.target, next, err)
			}
			next++
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(t.timeout)
		select {
		case <-t.ctx.Done():
			sendCtl(RMPPTypeAbort, RMPPStatusUnspecified)
			return fmt.Errorf("%s to %s: %w", t.rpc, t.target, t.ctx.Err())
		case <-c.dead:
			return fmt.Errorf("%s to %s: %w", t.rpc, t.target, c.rdErr)
		case <-timer.C:
			idle++
			if idle >= t.tries {
				sendCtl(RMPPTypeAbort, RMPPStatusTooManyRetries)
				return &TimeoutError{RPC: t.rpc, Target: t.target, Tries: idle, Timeout: t.timeout,
					Last: fmt.Errorf("RMPP segment %d of %d not acknowledged", lastAcked+1, n), Request: t.segs[0]}
			}
			next = lastAcked + 1
			wentBack = next
		case ev := <-s.ch:
			r := readRMPP(ev.p.MAD)
			switch r.typ {
			case RMPPTypeStop, RMPPTypeAbort:
				return &RMPPError{RPC: t.rpc, Target: t.target, Type: r.typ, Status: r.status, Request: t.segs[0], Reply: ev.p.MAD}
			case RMPPTypeAck:
			default:
				continue
			}
			seg, nwl := r.data1, r.data2
			if seg > n || nwl < seg {
				sendCtl(RMPPTypeAbort, RMPPStatusNewWindowLast)
				return &RMPPError{RPC: t.rpc, Target: t.target, Type: RMPPTypeAbort, Status: RMPPStatusNewWindowLast, Local: true, Request: t.segs[0], Reply: ev.p.MAD}
			}
			if seg < lastAcked {
				continue // stale
			}
			if seg > lastAcked {
				lastAcked = seg
				idle = 0
				wentBack = 0
			}
			if next > seg+1 && wentBack != seg+1 {
				// The receiver reports a gap: go back, once per gap.
				next = seg + 1
				wentBack = next
			}
			windowLast = max(windowLast, nwl)
		}
	}
	return nil
}

// sendTransfer sends a segmented request.
func (x *exchange) sendTransfer(segs [][]byte) error {
	return x.c.sendTransfer(transfer{
		ctx: x.ctx, key: sessionKey{uint8(x.class), uint32(x.tid), x.addr.LID}, agent: x.agent, addr: x.addr,
		segs: segs, timeout: x.timeout, tries: x.tries, rpc: x.name, target: x.tname(),
	})
}
