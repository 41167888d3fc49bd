package diags

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/openib"
)

func init() {
	register(command{name: "ibping", make: newIBPing})
}

// IBPingResult is an ibping client run: every ping and the statistics the
// C tool prints at the end.
type IBPingResult struct {
	Target      string       `json:"target"`
	Host        string       `json:"host"`
	Pings       []IBPingPong `json:"pings"`
	Transmitted int          `json:"transmitted"`
	Received    int          `json:"received"`
	LossPercent int          `json:"lossPercent"`
	// Times in microseconds.
	TotalUS int64 `json:"totalUs"`
	MinUS   int64 `json:"minUs"`
	AvgUS   int64 `json:"avgUs"`
	MaxUS   int64 `json:"maxUs"`
}

// IBPingPong is one ping: the responder's host name and the round trip,
// or the error.
type IBPingPong struct {
	Host  string `json:"host,omitempty"`
	RTTUS int64  `json:"rttUs,omitempty"`
	Error string `json:"error,omitempty"`
}

type ibpingFlags struct {
	addr   addrFlags
	count  string
	flood  bool
	oui    string
	server bool
}

func newIBPing(e *Env) *cobra.Command {
	var f ibpingFlags
	c := &cobra.Command{
		Use:   "ibping [flags] <dest lid|guid>",
		Short: "ping a port with the OpenIB ping vendor class, or answer pings (infiniband-diags ibping)",
		Long: `ibping sends vendor MADs of the OpenIB ping class (0x32, OUI 0x001405) to a
port and shows the responder's host name and the round trip time, once a
second until -c pings or Ctrl-C, as infiniband-diags' ibping does. With -S
it answers pings instead, until Ctrl-C. (On ibsim a server attaches as its
node's SM client, the only client ibsim hands requests to.)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBPing(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.count, "count", "c", "", "stop after count packets")
	fl.BoolVarP(&f.flood, "flood", "f", false, "flood destination")
	fl.StringVarP(&f.oui, "oui", "o", "", "use specified OUI number")
	fl.BoolVarP(&f.server, "Server", "S", false, "start in server mode")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument: a directed route, to the LID of the port it reaches (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

func runIBPing(e *Env, f *ibpingFlags, args []string) error {
	oui := ouiArg(f.oui)
	if f.server {
		s, err := e.openVendor(true)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := openib.ServePing(e.Ctx, s.mc, oui, openib.HostName()); err != nil {
			return iberror(err, "can't serve class %d on this port", int(iba.ClassOpenIBPing))
		}
		return nil
	}
	if len(args) != 1 {
		return usagef("want <dest lid|guid>")
	}
	count := -1
	if f.count != "" {
		count = int(uint32(cStrtoul(f.count)))
	}
	s, err := e.openVendor(false)
	if err != nil {
		return err
	}
	defer s.Close()
	target, err := resolveGMPDest(s, args[0], &f.addr)
	if err != nil {
		return err
	}
	res := &IBPingResult{Target: "Lid " + strconv.Itoa(int(target.Route().Addr.LID))}
	start := time.Now()
	var total, minRTT, maxRTT time.Duration
	for n := 0; count < 0 || n < count; n++ {
		if e.Ctx.Err() != nil {
			break
		}
		res.Transmitted++
		t0 := time.Now()
		host, err := openib.Ping(e.Ctx, s.mc, target, oui)
		rtt := time.Since(t0)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				res.Transmitted--
				break
			}
			res.Pings = append(res.Pings, IBPingPong{Error: err.Error()})
			fmt.Fprintf(e.Stderr, "ibwarn: [%d] ibping: ping to %s failed: %v\n", os.Getpid(), res.Target, err)
		} else {
			if res.Host == "" {
				res.Host = host
			}
			res.Received++
			total += rtt
			if minRTT == 0 || rtt < minRTT {
				minRTT = rtt
			}
			maxRTT = max(maxRTT, rtt)
			res.Pings = append(res.Pings, IBPingPong{Host: host, RTTUS: rtt.Microseconds()})
			if !f.flood && !e.JSON {
				us := rtt.Microseconds()
				fmt.Fprintf(e.Stdout, "Pong from %s (%s): time %d.%03d ms\n", host, res.Target, us/1000, us%1000)
			}
		}
		// The C tool sleeps after every ping, the last one too.
		if !f.flood {
			select {
			case <-e.Ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	res.TotalUS = time.Since(start).Microseconds()
	res.MinUS, res.MaxUS = minRTT.Microseconds(), maxRTT.Microseconds()
	if res.Received > 0 {
		res.AvgUS = total.Microseconds() / int64(res.Received)
	}
	if lost := res.Transmitted - res.Received; lost != 0 {
		res.LossPercent = lost * 100 / res.Transmitted
	}
	if e.JSON {
		return e.writeJSON("ibping", res)
	}
	ms := func(us int64) string { return fmt.Sprintf("%d.%03d", us/1000, us%1000) }
	fmt.Fprintf(e.Stdout, "\n--- %s (%s) ibping statistics ---\n", res.Host, res.Target)
	fmt.Fprintf(e.Stdout, "%d packets transmitted, %d received, %d%% packet loss, time %d ms\n",
		res.Transmitted, res.Received, res.LossPercent, res.TotalUS/1000)
	_, err = fmt.Fprintf(e.Stdout, "rtt min/avg/max = %s/%s/%s ms\n", ms(res.MinUS), ms(res.AvgUS), ms(res.MaxUS))
	return err
}
