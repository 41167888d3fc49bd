package diags

// What rc_pingpong, ud_pingpong and rdma_bw share: their command lines,
// the TCP exchange of queue pair addresses, the ping-pong loop over an RC
// or UD QP (package verbs) and the results. rc_pingpong.go, ud_pingpong.go
// and rdma_bw.go hold the commands.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/verbs"
)

// ppDest is one side's queue pair address, as rdma-core's pingpong
// examples exchange it.
type ppDest struct {
	LID uint16  `json:"lid"`
	QPN uint32  `json:"qpn"`
	PSN uint32  `json:"psn"`
	GID iba.GID `json:"-"`
}

// ppWireLen is the length of the address message: "LLLL:QQQQQQ:PPPPPP:"
// and 32 hex digits of GID, with the C string's NUL.
const ppWireLen = len("0000:000000:000000:00000000000000000000000000000000") + 1

// ppDone is what the client sends after reading the server's address.
var ppDone = []byte("done\x00")

// marshal formats the address as the C examples' sprintf("%04x:%06x:%06x:%s")
// does, the GID as its 16 bytes in hex (gid_to_wire_gid).
func (d ppDest) marshal() []byte {
	b := make([]byte, ppWireLen)
	s := fmt.Sprintf("%04x:%06x:%06x:%x", d.LID, d.QPN&0xffffff, d.PSN&0xffffff, d.GID[:])
	copy(b, s)
	return b
}

// parsePPDest reads an address message: four ':'-separated hex fields,
// text up to the first NUL.
func parsePPDest(b []byte) (ppDest, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f := strings.Split(string(b), ":")
	if len(f) != 4 {
		return ppDest{}, fmt.Errorf("peer address %q: want LID:QPN:PSN:GID", b)
	}
	var v [3]uint64
	for i, bits := range []int{16, 24, 24} {
		n, err := strconv.ParseUint(f[i], 16, bits)
		if err != nil {
			return ppDest{}, fmt.Errorf("peer address %q: field %d: %w", b, i+1, err)
		}
		v[i] = n
	}
	if len(f[3]) != 32 {
		return ppDest{}, fmt.Errorf("peer address %q: GID is not 32 hex digits", b)
	}
	var d ppDest
	for i := 0; i < 16; i++ {
		n, err := strconv.ParseUint(f[3][2*i:2*i+2], 16, 8)
		if err != nil {
			return ppDest{}, fmt.Errorf("peer address %q: GID: %w", b, err)
		}
		d.GID[i] = byte(n)
	}
	d.LID, d.QPN, d.PSN = uint16(v[0]), uint32(v[1]), uint32(v[2])
	return d, nil
}

// String prints the address as the C examples do ("LID 0x0000, QPN ...").
func (d ppDest) String() string {
	return fmt.Sprintf("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", d.LID, d.QPN, d.PSN, d.GID)
}

// ppExchangeTimeout bounds each read and write of the exchange once
// connected, so a silent peer cannot hang us.
const ppExchangeTimeout = 30 * time.Second

// ppClientExchange connects to the server, sends our address, reads the
// server's and says "done" (pp_client_exch_dest).
func ppClientExchange(ctx context.Context, host string, port int, my ppDest) (ppDest, error) {
	var dialer net.Dialer
	dctx, cancel := context.WithTimeout(ctx, ppExchangeTimeout)
	defer cancel()
	conn, err := dialer.DialContext(dctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return ppDest{}, fmt.Errorf("couldn't connect to %s:%d: %w", host, port, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(ppExchangeTimeout))
	if _, err := conn.Write(my.marshal()); err != nil {
		return ppDest{}, fmt.Errorf("couldn't send local address: %w", err)
	}
	msg := make([]byte, ppWireLen)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return ppDest{}, fmt.Errorf("couldn't read remote address: %w", err)
	}
	rem, err := parsePPDest(msg)
	if err != nil {
		return ppDest{}, err
	}
	if _, err := conn.Write(ppDone); err != nil {
		return ppDest{}, fmt.Errorf("couldn't write done: %w", err)
	}
	return rem, nil
}

// ppServerExchange accepts one client, reads its address, lets connect
// bring our QP up to it, then sends our address and waits for "done"
// (pp_server_exch_dest). listening, when not nil, is called once the
// socket listens.
func ppServerExchange(ctx context.Context, port int, my ppDest, connect func(ppDest) error, listening func()) (ppDest, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return ppDest{}, fmt.Errorf("couldn't listen to port %d: %w", port, err)
	}
	defer ln.Close()
	if listening != nil {
		listening()
	}
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopLn()
	conn, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return ppDest{}, fmt.Errorf("waiting for a client: %w", ctx.Err())
		}
		return ppDest{}, fmt.Errorf("accept() failed: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(ppExchangeTimeout))
	msg := make([]byte, ppWireLen)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return ppDest{}, fmt.Errorf("couldn't read remote address: %w", err)
	}
	rem, err := parsePPDest(msg)
	if err != nil {
		return ppDest{}, err
	}
	if err := connect(rem); err != nil {
		return ppDest{}, fmt.Errorf("couldn't connect to remote QP: %w", err)
	}
	if _, err := conn.Write(my.marshal()); err != nil {
		return ppDest{}, fmt.Errorf("couldn't send local address: %w", err)
	}
	done := make([]byte, len(ppDone))
	if _, err := io.ReadFull(conn, done); err != nil || !bytes.Equal(done, ppDone) {
		return ppDest{}, fmt.Errorf("couldn't read done (%q): %v", done, err)
	}
	return rem, nil
}

// ppOptions are rdma-core's pingpong options (-p -d -i -s -m -r -n -l -e -g).
type ppOptions struct {
	Port    int
	Device  string
	IBPort  int
	Size    int
	MTU     int
	RxDepth int
	Iters   int
	SL      int
	Events  bool
	GIDIdx  int
	Idle    time.Duration
	Server  string // host to connect to; "" runs the server
}

// ppFlags declares the options on fs with the C tool's defaults.
func ppFlags(fs *pflag.FlagSet, o *ppOptions, defSize int, withMTU bool) {
	fs.IntVarP(&o.Port, "port", "p", 18515, "listen on/connect to port `PORT`")
	fs.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device `DEV` (default first device found)")
	fs.IntVarP(&o.IBPort, "ib-port", "i", 1, "use port `PORT` of IB device")
	fs.IntVarP(&o.Size, "size", "s", defSize, "size of message to exchange")
	if withMTU {
		fs.IntVarP(&o.MTU, "mtu", "m", 1024, "path MTU")
	}
	fs.IntVarP(&o.RxDepth, "rx-depth", "r", 500, "number of receives to post at a time")
	fs.IntVarP(&o.Iters, "iters", "n", 1000, "number of exchanges")
	fs.IntVarP(&o.SL, "sl", "l", 0, "service level value")
	fs.BoolVarP(&o.Events, "events", "e", false, "sleep on CQ events (default poll)")
	fs.IntVarP(&o.GIDIdx, "gid-idx", "g", -1, "local port gid index")
	fs.DurationVar(&o.Idle, "idle-timeout", 10*time.Second, "fail when no completion comes for this long")
}

func (o *ppOptions) check() error {
	switch {
	case o.Port < 0 || o.Port > 65535:
		return usagef("-p %d: not a TCP port", o.Port)
	case o.IBPort < 1 || o.IBPort > 255:
		return usagef("-i %d: not a port number", o.IBPort)
	case o.Size < 1:
		return usagef("-s %d: the size must be at least 1", o.Size)
	case o.RxDepth < 2 || o.RxDepth > 1<<16:
		return usagef("-r %d: the receive depth must be 2 to 65536", o.RxDepth)
	case o.Iters < 1:
		return usagef("-n %d: at least one exchange", o.Iters)
	case o.SL < 0 || o.SL > 15:
		return usagef("-l %d: SL is 0 to 15", o.SL)
	case o.GIDIdx < -1 || o.GIDIdx > 255:
		return usagef("-g %d: not a GID index", o.GIDIdx)
	case o.Idle <= 0:
		return usagef("--idle-timeout %v: must be positive", o.Idle)
	}
	if o.MTU != 0 {
		switch o.MTU {
		case 256, 512, 1024, 2048, 4096:
		default:
			return usagef("-m %d: the MTU is 256, 512, 1024, 2048 or 4096", o.MTU)
		}
	}
	return nil
}

// ppCommand makes a command that parses its own flags: the pingpong tools
// use -d, -i, -p and -t as rdma-core's do, which ibtool's global flags
// would shadow. parse declares the flags; run gets the positional arguments.
func ppCommand(e *Env, use, short, long string, parse func(fs *pflag.FlagSet), run func(args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short,
		Long:               long,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, argv []string) error {
			fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.SortFlags = false
			parse(fs)
			fs.BoolVar(&e.JSON, "json", e.JSON, "print a versioned JSON document instead of text")
			help := fs.BoolP("help", "h", false, "help")
			if err := fs.Parse(argv); err != nil {
				return usagef("%v", err)
			}
			if *help {
				fmt.Fprintf(e.Stdout, "%s\n\nUsage:\n  ibtool %s\n\nOptions:\n%s", long, use, fs.FlagUsages())
				return nil
			}
			return run(fs.Args())
		},
	}
}

// PingpongResult is what rc_pingpong and ud_pingpong measured.
type PingpongResult struct {
	Local  PingpongDest `json:"local"`
	Remote PingpongDest `json:"remote"`
	// Bytes counts both directions: size × iters × 2, as the C tools do.
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	MbitPerSec  float64 `json:"mbit_per_sec"`
	Iters       int     `json:"iters"`
	USecPerIter float64 `json:"usec_per_iter"`
}

// PingpongDest is a queue pair address in a result.
type PingpongDest struct {
	LID uint16 `json:"lid"`
	QPN uint32 `json:"qpn"`
	PSN uint32 `json:"psn"`
	GID string `json:"gid"`
}

func (d ppDest) result() PingpongDest {
	return PingpongDest{LID: d.LID, QPN: d.QPN, PSN: d.PSN, GID: d.GID.String()}
}

func newPingpongResult(local, remote ppDest, size, iters int, elapsed time.Duration) *PingpongResult {
	usec := float64(elapsed) / float64(time.Microsecond)
	if usec <= 0 {
		usec = 1
	}
	bytes := int64(size) * int64(iters) * 2
	return &PingpongResult{
		Local: local.result(), Remote: remote.result(), Bytes: bytes, Seconds: usec / 1e6,
		MbitPerSec: float64(bytes) * 8 / usec, Iters: iters, USecPerIter: usec / float64(iters),
	}
}

// renderPingpongTotals prints the C tools' two result lines.
func renderPingpongTotals(w io.Writer, r *PingpongResult) {
	fmt.Fprintf(w, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", r.Bytes, r.Seconds, r.MbitPerSec)
	fmt.Fprintf(w, "%d iters in %.2f seconds = %.2f usec/iter\n", r.Iters, r.Seconds, r.USecPerIter)
}

// Work request IDs of the pingpong loop, as the C tools use them.
const (
	ppRecvWRID = 1
	ppSendWRID = 2
)

// pingpong is one side of rc_pingpong or ud_pingpong.
type pingpong struct {
	o     ppOptions
	typ   verbs.QPType
	vc    *verbs.Context
	pd    *verbs.PD
	mr    *verbs.MR
	cq    *verbs.CQ
	qp    *verbs.QP
	ah    *verbs.AH
	flags verbs.SendFlags
	grh   int // bytes kept before the data: 40 for the GRH of UD receives
	rem   ppDest
}

func ppPSN() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:]) & 0xffffff
}

func runPingpong(e *Env, name string, typ verbs.QPType, o ppOptions) error {
	pp := &pingpong{o: o, typ: typ, flags: verbs.SendSignaled}
	if typ == verbs.QPTypeUD {
		pp.grh = 40
	}
	var err error
	if pp.vc, err = verbs.Open(o.Device); err != nil {
		return err
	}
	defer pp.vc.Close()
	res, err := pp.run(e)
	if err != nil {
		return err
	}
	if e.JSON {
		return e.writeJSON(name, res)
	}
	renderPingpongTotals(e.Stdout, res)
	return nil
}

func (pp *pingpong) setup() error {
	o := pp.o
	pa, err := pp.vc.QueryPort(o.IBPort)
	if err != nil {
		return err
	}
	if pp.typ == verbs.QPTypeUD && o.Size > pa.ActiveMTU.Bytes() {
		return fmt.Errorf("requested size larger than port MTU (%d)", pa.ActiveMTU.Bytes())
	}
	if pp.pd, err = pp.vc.AllocPD(); err != nil {
		return err
	}
	if pp.mr, err = pp.pd.AllocMR(o.Size+pp.grh, verbs.AccessLocalWrite); err != nil {
		return err
	}
	for i := range pp.mr.Buf() {
		pp.mr.Buf()[i] = 0x7b
	}
	var ch *verbs.CompChannel
	if o.Events {
		if ch, err = pp.vc.CreateCompChannel(); err != nil {
			return err
		}
	}
	if pp.cq, err = pp.vc.CreateCQ(o.RxDepth+1, ch); err != nil {
		return err
	}
	pp.qp, err = pp.pd.CreateQP(verbs.QPInitAttr{Type: pp.typ, SendCQ: pp.cq, RecvCQ: pp.cq,
		Cap: verbs.QPCap{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return err
	}
	if pp.qp.Cap.MaxInlineData >= o.Size {
		pp.flags |= verbs.SendInline
	}
	return pp.qp.Init(verbs.InitAttr{Port: uint8(o.IBPort), QKey: 0x11111111})
}

// connect brings the QP to RTS towards rem (pp_connect_ctx).
func (pp *pingpong) connect(myPSN uint32, rem ppDest) error {
	o := pp.o
	av := verbs.AHAttr{DLID: rem.LID, SL: uint8(o.SL), PortNum: uint8(o.IBPort)}
	if rem.GID.GUID() != 0 {
		hop := uint8(1)
		if pp.typ == verbs.QPTypeUD {
			hop = 64
		}
		av.GRH = &verbs.GlobalRoute{DGID: rem.GID, SGIDIndex: uint8(max(o.GIDIdx, 0)), HopLimit: hop}
	}
	mtu, _ := verbs.MTUOf(max(o.MTU, 256))
	if err := pp.qp.RTR(verbs.RTRAttr{AH: av, PathMTU: mtu, DestQPN: rem.QPN, RQPSN: rem.PSN,
		MaxDestRDAtomic: 1, MinRNRTimer: 12}); err != nil {
		return err
	}
	if err := pp.qp.RTS(verbs.RTSAttr{SQPSN: myPSN, Timeout: 14, RetryCount: 7, RNRRetry: 7, MaxRDAtomic: 1}); err != nil {
		return err
	}
	if pp.typ == verbs.QPTypeUD {
		var err error
		if pp.ah, err = pp.pd.CreateAH(av); err != nil {
			return err
		}
	}
	pp.rem = rem
	return nil
}

func (pp *pingpong) postRecv(n int) int {
	wr := verbs.RecvWR{ID: ppRecvWRID, SGEs: []verbs.SGE{pp.mr.SGE(0, pp.o.Size+pp.grh)}}
	for i := 0; i < n; i++ {
		if pp.qp.PostRecv(wr) != nil {
			return i
		}
	}
	return n
}

func (pp *pingpong) postSend() error {
	wr := verbs.SendWR{ID: ppSendWRID, Opcode: verbs.OpSend, Flags: pp.flags, SGEs: []verbs.SGE{pp.mr.SGE(pp.grh, pp.o.Size)}}
	if pp.ah != nil {
		wr.AH, wr.RemoteQPN, wr.RemoteQKey = pp.ah, pp.rem.QPN, 0x11111111
	}
	return pp.qp.PostSend(wr)
}

func (pp *pingpong) run(e *Env) (*PingpongResult, error) {
	o := pp.o
	if err := pp.setup(); err != nil {
		return nil, err
	}
	routs := pp.postRecv(o.RxDepth)
	if routs < o.RxDepth {
		return nil, fmt.Errorf("couldn't post receive (%d)", routs)
	}
	pa, err := pp.vc.QueryPort(o.IBPort)
	if err != nil {
		return nil, err
	}
	my := ppDest{LID: pa.LID, QPN: pp.qp.QPN(), PSN: ppPSN()}
	if pp.typ == verbs.QPTypeRC && pa.LinkLayer != verbs.LinkLayerEthernet && my.LID == 0 {
		return nil, errors.New("couldn't get local LID")
	}
	if o.GIDIdx >= 0 {
		if my.GID, err = pp.vc.QueryGID(o.IBPort, o.GIDIdx); err != nil {
			return nil, fmt.Errorf("can't read sgid of index %d: %w", o.GIDIdx, err)
		}
	}
	sep := ","
	if pp.typ == verbs.QPTypeUD {
		sep = ":" // as ibv_ud_pingpong prints it
	}
	if !e.JSON {
		fmt.Fprintf(e.Stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", my.LID, my.QPN, my.PSN, sep, my.GID)
	}
	ctx := e.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var rem ppDest
	if o.Server != "" {
		if rem, err = ppClientExchange(ctx, o.Server, o.Port, my); err != nil {
			return nil, err
		}
	} else {
		if rem, err = ppServerExchange(ctx, o.Port, my, func(r ppDest) error { return pp.connect(my.PSN, r) }, nil); err != nil {
			return nil, err
		}
	}
	if !e.JSON {
		fmt.Fprintf(e.Stdout, "  remote address: %v\n", rem)
	}
	if o.Server != "" {
		if err := pp.connect(my.PSN, rem); err != nil {
			return nil, err
		}
	}
	pending := ppRecvWRID
	if o.Server != "" {
		if err := pp.postSend(); err != nil {
			return nil, fmt.Errorf("couldn't post send: %w", err)
		}
		pending |= ppSendWRID
	}
	start := time.Now()
	rcnt, scnt := 0, 0
	wcs := make([]verbs.WC, 2)
	last := time.Now()
	for rcnt < o.Iters || scnt < o.Iters {
		var n int
		if o.Events {
			wctx, cancel := context.WithTimeout(ctx, o.Idle)
			n, err = pp.cq.Wait(wctx, wcs)
			cancel()
		} else {
			n, err = pp.cq.Poll(wcs)
			if n == 0 && err == nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if time.Since(last) > o.Idle {
					err = fmt.Errorf("no completion for %v", o.Idle)
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("after %d receives and %d sends of %d: %w", rcnt, scnt, o.Iters, err)
		}
		if n > 0 {
			last = time.Now()
		}
		for _, wc := range wcs[:n] {
			if err := wc.Err(); err != nil {
				return nil, fmt.Errorf("failed status %s (%d) for wr_id %d: %w", wc.Status, int(wc.Status), wc.ID, err)
			}
			switch wc.ID {
			case ppSendWRID:
				scnt++
			case ppRecvWRID:
				if routs--; routs <= 1 {
					routs += pp.postRecv(o.RxDepth - routs)
					if routs < o.RxDepth {
						return nil, fmt.Errorf("couldn't post receive (%d)", routs)
					}
				}
				rcnt++
			default:
				return nil, fmt.Errorf("completion for unknown wr_id %d", wc.ID)
			}
			pending &^= int(wc.ID)
			if scnt < o.Iters && pending == 0 {
				if err := pp.postSend(); err != nil {
					return nil, fmt.Errorf("couldn't post send: %w", err)
				}
				pending = ppRecvWRID | ppSendWRID
			}
		}
	}
	return newPingpongResult(my, rem, o.Size, o.Iters, time.Since(start)), nil
}
