package diags

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/verbs"
)

func init() {
	register(command{name: "rdma_bw", make: newRDMABW})
}

type bwOptions struct {
	ppOptions
	NumSGE  int
	TxDepth int
	// Bidir is python-rdma's -b: the server writes to the client too.
	Bidir bool
	// IPv6 is python-rdma's -6: the side channel over IPv6.
	IPv6 bool
}

func newRDMABW(e *Env) *cobra.Command {
	var o bwOptions
	return ppCommand(e, "rdma_bw [options] [HOST]", "RDMA WRITE bandwidth and latency between two hosts (python-rdma's rdma_bw)",
		`rdma_bw measures RDMA WRITE over an RC connection, as python-rdma's
rdma_bw: the client writes SIZE bytes into the server's memory ITERS
times, TX-DEPTH writes in flight, and both report the bandwidth; the client
also reports the latency from posting each write to its completion. The
server then checks that its memory holds what the client wrote. Without
HOST it waits for a client. The two sides exchange their QP and memory
region over TCP as one JSON line each. On RoCE give a GID index (-g).
With -b (either side) the server writes to the client at the same time
and reports its own bandwidth; the memory is then not checked. -6 speaks
IPv6 on the side channel.`,
		func(fs *pflag.FlagSet) {
			fs.IntVarP(&o.Port, "port", "p", 4444, "listen on/connect to port `PORT`")
			fs.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device `DEV` (default first device found)")
			fs.IntVarP(&o.IBPort, "ib-port", "i", 1, "use port `PORT` of IB device")
			fs.IntVarP(&o.Size, "size", "s", 1<<20, "bytes per RDMA WRITE (client only)")
			fs.IntVarP(&o.MTU, "mtu", "m", 1024, "path MTU")
			fs.IntVarP(&o.NumSGE, "num-sge", "e", 1, "split each write into `NUM` scatter/gather elements")
			fs.IntVarP(&o.TxDepth, "tx-depth", "t", 100, "RDMA WRITEs in flight")
			fs.IntVarP(&o.Iters, "iters", "n", 1000, "number of RDMA WRITEs (client only)")
			fs.IntVarP(&o.SL, "sl", "l", 0, "service level value")
			fs.IntVarP(&o.GIDIdx, "gid-idx", "g", -1, "local port gid index")
			fs.DurationVar(&o.Idle, "idle-timeout", 10*time.Second, "fail when no completion comes for this long")
			fs.BoolVarP(&o.Bidir, "bidirectional", "b", false, "measure bidirectional bandwidth: the server writes too")
			fs.BoolVarP(&o.IPv6, "ipv6", "6", false, "use IPv6 for the side channel")
		},
		func(args []string) error {
			if len(args) > 1 {
				return usagef("at most one HOST, got %q", args)
			}
			if len(args) == 1 {
				o.Server = args[0]
			}
			o.RxDepth = 2
			if err := o.check(); err != nil {
				return err
			}
			if o.TxDepth < 1 || o.TxDepth > 4096 {
				return usagef("-t %d: 1 to 4096 writes in flight", o.TxDepth)
			}
			if o.NumSGE < 1 || o.NumSGE > o.Size || o.NumSGE > 32 {
				return usagef("-e %d: 1 to 32 SGEs, no more than the size", o.NumSGE)
			}
			return runRDMABW(e, o)
		})
}

// bwInfo is one side's half of the exchange.
type bwInfo struct {
	LID   uint16 `json:"lid"`
	QPN   uint32 `json:"qpn"`
	PSN   uint32 `json:"psn"`
	GID   string `json:"gid"`
	Addr  uint64 `json:"addr"`
	RKey  uint32 `json:"rkey"`
	Size  int    `json:"size"`
	Iters int    `json:"iters"`
	Bidir bool   `json:"bidirectional,omitempty"`
}

// bwDone is the client's report after the last write completed.
type bwDone struct {
	Bytes   int64 `json:"bytes"`
	Nanosec int64 `json:"nanosec"`
}

// RDMABWResult is what rdma_bw measured.
type RDMABWResult struct {
	Role     string       `json:"role"`
	Local    PingpongDest `json:"local"`
	Remote   PingpongDest `json:"remote"`
	Size     int          `json:"size"`
	Iters    int          `json:"iters"`
	TxDepth  int          `json:"tx_depth,omitempty"`
	NumSGE   int          `json:"num_sge,omitempty"`
	Bytes    int64        `json:"bytes"`
	Seconds  float64      `json:"seconds"`
	MBPerSec float64      `json:"mb_per_sec"`
	// Latency of each RDMA WRITE from post to completion (client only).
	LatencyUSec *BWLatency `json:"latency_usec,omitempty"`
	// Verified is the server's check of the data it received (not made
	// with -b, when the server's writes share its memory).
	Verified bool `json:"verified,omitempty"`
	// Bidirectional is -b: both sides wrote.
	Bidirectional bool `json:"bidirectional,omitempty"`
}

// BWLatency summarises write latencies in microseconds.
type BWLatency struct {
	Avg float64 `json:"avg"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// bwWriter is one side's RDMA WRITEs: Iters writes of its whole memory
// region into the peer's, TxDepth in flight.
type bwWriter struct {
	ctx  context.Context
	qp   *verbs.QP
	cq   *verbs.CQ
	mr   *verbs.MR
	peer bwInfo
	o    bwOptions
}

// run writes and puts the totals and latencies into res.
func (w *bwWriter) run(res *RDMABWResult) error {
	o := w.o
	buf := w.mr.Buf()
	for i := range buf {
		buf[i] = bwPattern(i)
	}
	sges := make([]verbs.SGE, o.NumSGE)
	chunk := o.Size / o.NumSGE
	for i := range sges {
		n := chunk
		if i == len(sges)-1 {
			n = o.Size - chunk*i
		}
		sges[i] = w.mr.SGE(i*chunk, n)
	}
	posted := make([]time.Time, o.TxDepth)
	var lat BWLatency
	lat.Min = -1
	var latSum time.Duration
	free := make([]int, 0, o.TxDepth)
	for i := o.TxDepth - 1; i >= 0; i-- {
		free = append(free, i)
	}
	wcs := make([]verbs.WC, 16)
	start := time.Now()
	last := start
	sent, done := 0, 0
	for done < o.Iters {
		for sent < o.Iters && len(free) > 0 {
			slot := free[len(free)-1]
			free = free[:len(free)-1]
			posted[slot] = time.Now()
			if err := w.qp.PostSend(verbs.SendWR{ID: uint64(slot), Opcode: verbs.OpRDMAWrite, Flags: verbs.SendSignaled,
				SGEs: sges, RemoteAddr: w.peer.Addr, RKey: w.peer.RKey}); err != nil {
				return fmt.Errorf("posting RDMA WRITE %d: %w", sent+1, err)
			}
			sent++
		}
		n, err := w.cq.Poll(wcs)
		if err != nil {
			return err
		}
		now := time.Now()
		if n == 0 {
			if w.ctx.Err() != nil {
				return w.ctx.Err()
			}
			if now.Sub(last) > o.Idle {
				return fmt.Errorf("after %d of %d RDMA WRITEs: no completion for %v", done, o.Iters, o.Idle)
			}
			continue
		}
		last = now
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return fmt.Errorf("RDMA WRITE %d: %w", done+1, err)
			}
			slot := int(wc.ID)
			if slot < 0 || slot >= o.TxDepth {
				return fmt.Errorf("completion for unknown wr_id %d", wc.ID)
			}
			d := now.Sub(posted[slot])
			latSum += d
			us := float64(d) / float64(time.Microsecond)
			if lat.Min < 0 || us < lat.Min {
				lat.Min = us
			}
			lat.Max = max(lat.Max, us)
			free = append(free, slot)
			done++
		}
	}
	elapsed := time.Since(start)
	lat.Avg = float64(latSum) / float64(time.Microsecond) / float64(o.Iters)
	res.Bytes = int64(o.Size) * int64(o.Iters)
	res.Seconds = elapsed.Seconds()
	res.MBPerSec = float64(res.Bytes) / 1e6 / max(res.Seconds, 1e-9)
	res.LatencyUSec = &lat
	return nil
}

// bwPattern is the byte the client writes at offset i.
func bwPattern(i int) byte { return byte(i*13 + 7) }

func runRDMABW(e *Env, o bwOptions) error {
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	vc, err := verbs.Open(o.Device)
	if err != nil {
		return err
	}
	defer vc.Close()
	res, err := rdmaBW(ctx, e, vc, o)
	if err != nil {
		return err
	}
	if e.JSON {
		return e.writeJSON("rdma_bw", res)
	}
	renderRDMABW(e.Stdout, res)
	return nil
}

func renderRDMABW(w io.Writer, r *RDMABWResult) {
	fmt.Fprintf(w, "%d iterations of %d is %d bytes\n", r.Iters, r.Size, r.Bytes)
	fmt.Fprintf(w, "%d bytes in %.2f seconds = %.1f MB/sec\n", r.Bytes, r.Seconds, r.MBPerSec)
	if l := r.LatencyUSec; l != nil {
		fmt.Fprintf(w, "RDMA WRITE latency: avg %.1f usec, min %.1f usec, max %.1f usec\n", l.Avg, l.Min, l.Max)
	}
	if r.Role == "server" && !r.Bidirectional {
		fmt.Fprintf(w, "data verified: %v\n", r.Verified)
	}
}

// bwConn is the TCP side channel: one JSON document per line.
type bwConn struct {
	c net.Conn
	r *bufio.Reader
}

func (b *bwConn) send(v any) error {
	_ = b.c.SetWriteDeadline(time.Now().Add(ppExchangeTimeout))
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = b.c.Write(append(buf, '\n'))
	return err
}

// bwMaxLine bounds a line of the side channel; its documents are under
// 300 bytes.
const bwMaxLine = 4096

// recv reads one line into v; wait bounds the wait for it. The reader's
// buffer is the bound: a peer that sends more without a newline is cut
// off there, not buffered.
func (b *bwConn) recv(v any, wait time.Duration) error {
	_ = b.c.SetReadDeadline(time.Now().Add(wait))
	line, err := b.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return fmt.Errorf("reading from the peer: a line longer than %d bytes", bwMaxLine)
	}
	if err != nil {
		return fmt.Errorf("reading from the peer: %w", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("reading from the peer: %w", err)
	}
	return nil
}

func bwDial(ctx context.Context, o bwOptions) (*bwConn, error) {
	network := "tcp"
	if o.IPv6 {
		network = "tcp6"
	}
	if o.Server != "" {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, ppExchangeTimeout)
		defer cancel()
		c, err := d.DialContext(dctx, network, net.JoinHostPort(o.Server, strconv.Itoa(o.Port)))
		if err != nil {
			return nil, fmt.Errorf("couldn't connect to %s:%d: %w", o.Server, o.Port, err)
		}
		return &bwConn{c: c, r: bufio.NewReaderSize(c, bwMaxLine)}, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, network, ":"+strconv.Itoa(o.Port))
	if err != nil {
		return nil, fmt.Errorf("couldn't listen to port %d: %w", o.Port, err)
	}
	defer ln.Close()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	c, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for a client: %w", ctx.Err())
		}
		return nil, fmt.Errorf("accept() failed: %w", err)
	}
	return &bwConn{c: c, r: bufio.NewReaderSize(c, bwMaxLine)}, nil
}

func rdmaBW(ctx context.Context, e *Env, vc *verbs.Context, o bwOptions) (*RDMABWResult, error) {
	pa, err := vc.QueryPort(o.IBPort)
	if err != nil {
		return nil, err
	}
	var gid iba.GID
	if o.GIDIdx >= 0 {
		if gid, err = vc.QueryGID(o.IBPort, o.GIDIdx); err != nil {
			return nil, fmt.Errorf("can't read sgid of index %d: %w", o.GIDIdx, err)
		}
	}
	conn, err := bwDial(ctx, o)
	if err != nil {
		return nil, err
	}
	defer conn.c.Close()
	stop := context.AfterFunc(ctx, func() { conn.c.SetDeadline(time.Now()) })
	defer stop()

	// The server learns the size from the client before registering memory.
	var peer bwInfo
	if o.Server == "" {
		if err := conn.recv(&peer, ppExchangeTimeout); err != nil {
			return nil, err
		}
		if peer.Size < 1 || peer.Size > 1<<30 || peer.Iters < 1 {
			return nil, fmt.Errorf("the client asks for %d writes of %d bytes: refused", peer.Iters, peer.Size)
		}
		o.Size, o.Iters = peer.Size, peer.Iters
		o.Bidir = o.Bidir || peer.Bidir
	}
	pd, err := vc.AllocPD()
	if err != nil {
		return nil, err
	}
	mr, err := pd.AllocMR(o.Size, verbs.AccessLocalWrite|verbs.AccessRemoteWrite)
	if err != nil {
		return nil, err
	}
	cq, err := vc.CreateCQ(o.TxDepth+1, nil)
	if err != nil {
		return nil, err
	}
	qp, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: o.TxDepth, MaxRecvWR: 1, MaxSendSGE: o.NumSGE, MaxRecvSGE: 1}})
	if err != nil {
		return nil, err
	}
	if err := qp.Init(verbs.InitAttr{Port: uint8(o.IBPort), Access: verbs.AccessRemoteWrite}); err != nil {
		return nil, err
	}
	my := ppDest{LID: pa.LID, QPN: qp.QPN(), PSN: ppPSN(), GID: gid}
	mine := bwInfo{LID: my.LID, QPN: my.QPN, PSN: my.PSN, GID: hex.EncodeToString(gid[:]), Addr: mr.Addr(), RKey: mr.RKey(), Size: o.Size, Iters: o.Iters, Bidir: o.Bidir}
	if o.Server != "" {
		if err := conn.send(mine); err != nil {
			return nil, err
		}
		if err := conn.recv(&peer, ppExchangeTimeout); err != nil {
			return nil, err
		}
		o.Bidir = o.Bidir || peer.Bidir // the server's -b
	} else if err := conn.send(mine); err != nil {
		return nil, err
	}
	rem := ppDest{LID: peer.LID, QPN: peer.QPN, PSN: peer.PSN}
	if g, err := hex.DecodeString(peer.GID); err != nil || len(g) != 16 {
		return nil, fmt.Errorf("peer GID %q: not 32 hex digits", peer.GID)
	} else {
		copy(rem.GID[:], g)
	}
	if !e.JSON {
		fmt.Fprintf(e.Stdout, "  local address:  %v\n  remote address: %v\n", my, rem)
	}
	av := verbs.AHAttr{DLID: rem.LID, SL: uint8(o.SL), PortNum: uint8(o.IBPort)}
	if rem.GID.GUID() != 0 {
		av.GRH = &verbs.GlobalRoute{DGID: rem.GID, SGIDIndex: uint8(max(o.GIDIdx, 0)), HopLimit: 64}
	}
	mtu, _ := verbs.MTUOf(o.MTU)
	if err := qp.RTR(verbs.RTRAttr{AH: av, PathMTU: mtu, DestQPN: rem.QPN, RQPSN: rem.PSN, MaxDestRDAtomic: 1, MinRNRTimer: 12}); err != nil {
		return nil, err
	}
	if err := qp.RTS(verbs.RTSAttr{SQPSN: my.PSN, Timeout: 14, RetryCount: 7, RNRRetry: 7, MaxRDAtomic: 1}); err != nil {
		return nil, err
	}
	res := &RDMABWResult{Local: my.result(), Remote: rem.result(), Size: o.Size, Iters: o.Iters, Bidirectional: o.Bidir}
	w := &bwWriter{ctx: ctx, qp: qp, cq: cq, mr: mr, peer: peer, o: o}
	if o.Server == "" {
		// Ready: the client may write. Then wait for its report.
		res.Role = "server"
		if err := conn.send(map[string]bool{"ready": true}); err != nil {
			return nil, err
		}
		if o.Bidir {
			// -b: the server writes too, and reports its own writes.
			res.TxDepth, res.NumSGE = o.TxDepth, o.NumSGE
			if err := w.run(res); err != nil {
				return nil, err
			}
		}
		var done bwDone
		if err := conn.recv(&done, 24*time.Hour); err != nil {
			return nil, err
		}
		if !o.Bidir {
			res.Bytes, res.Seconds = done.Bytes, float64(done.Nanosec)/1e9
			res.MBPerSec = float64(done.Bytes) / 1e6 / max(res.Seconds, 1e-9)
			res.Verified = true
			for i, b := range mr.Buf() {
				if b != bwPattern(i) {
					res.Verified = false
					break
				}
			}
		}
		if err := conn.send(map[string]bool{"verified": res.Verified || o.Bidir}); err != nil {
			return nil, err
		}
		if !res.Verified && !o.Bidir {
			return res, errors.New("the server's memory does not hold what the client wrote")
		}
		return res, nil
	}
	res.Role, res.TxDepth, res.NumSGE = "client", o.TxDepth, o.NumSGE
	var ready map[string]bool
	if err := conn.recv(&ready, ppExchangeTimeout); err != nil || !ready["ready"] {
		return nil, fmt.Errorf("waiting for the server to be ready: %v", err)
	}
	if err := w.run(res); err != nil {
		return nil, err
	}
	elapsed := time.Duration(res.Seconds * float64(time.Second))
	if err := conn.send(bwDone{Bytes: res.Bytes, Nanosec: elapsed.Nanoseconds()}); err != nil {
		return nil, err
	}
	var verdict map[string]bool
	if err := conn.recv(&verdict, ppExchangeTimeout); err != nil {
		return nil, fmt.Errorf("waiting for the server's check: %w", err)
	}
	if !verdict["verified"] {
		return res, errors.New("the server found its memory different from what was written")
	}
	return res, nil
}
