//go:build cgo

package diags

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/verbs"
)

func init() {
	register(command{name: "rc_pingpong", make: newRCPingpong})
}

func newRCPingpong(e *Env) *cobra.Command {
	var o ppOptions
	return ppCommand(e, "rc_pingpong [options] [HOST]", "ping-pong over an RC connection, as rdma-core's ibv_rc_pingpong",
		`rc_pingpong exchanges messages over a reliable connection (RC QP) with a
peer running rc_pingpong or rdma-core's ibv_rc_pingpong. Without HOST it
waits for a client; with HOST it connects to that server. The QP addresses
(LID, QPN, PSN, GID) go over TCP in ibv_rc_pingpong's format. On RoCE give
a GID index (-g).`,
		func(fs *pflag.FlagSet) { ppFlags(fs, &o, 4096, true) },
		func(args []string) error {
			if len(args) > 1 {
				return usagef("at most one HOST, got %q", args)
			}
			if len(args) == 1 {
				o.Server = args[0]
			}
			if err := o.check(); err != nil {
				return err
			}
			return runPingpong(e, "rc_pingpong", verbs.QPTypeRC, o)
		})
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
