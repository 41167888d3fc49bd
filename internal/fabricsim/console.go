package fabricsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/sim"
)

// Console runs fault and latency commands on a running fabric: the lines
// of a faults file, of the control socket and of --console's stdin.
//
//	link down|up NODE PORT      pull or plug the cable (trap 128 to the SM)
//	node dead|alive NODE        stop or restart a node's management agents
//	drop NODE PORT PERCENT      lose that share of what the port receives
//	latency off | KEY=VALUE...  hop=, sma=, agent= (durations: 5us, 1ms),
//	                            queue= (requests per node), loss= (percent)
//	errors NODE PORT KIND=N...  add to error counters: symbol, recovery,
//	                            downed, rcv, remote, relay, discards,
//	                            constraint, integrity, overrun, vl15, wait
//	traffic NODE PORT DEST BYTES [PACKETS]
//	                            send data from a port to DEST (a node's
//	                            first end port, or a LID) through the
//	                            forwarding tables, moving every counter on
//	                            the way (PACKETS defaults to one per 4 KiB)
//	sweep                       run the built-in SM again
//	status                      one line about the fabric (and the MADs
//	                            the latency model delayed, with the sum
//	                            of their delays: a one-at-a-time tool's
//	                            nominal time is its time without latency
//	                            plus that sum)
//	help
//
// Blank lines and lines starting with # do nothing.
type Console struct {
	F *sim.Fabric
	// SM is how the built-in SM was run; nil when the fabric has none
	// (--no-sm), and sweep is then an error.
	SM *sim.SMConfig
}

// ErrUsage marks a malformed command.
var ErrUsage = errors.New("usage")

func usage(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Exec runs one command line and returns what it has to say.
func (c *Console) Exec(ctx context.Context, line string) (string, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return "", nil
	}
	w := strings.Fields(line)
	port := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 254 {
			return 0, usage("port %q is not a number from 0 to 254", s)
		}
		return n, nil
	}
	switch w[0] {
	case "help":
		return "commands: link down|up NODE PORT; node dead|alive NODE; drop NODE PORT PERCENT; " +
			"latency off|hop=D sma=D agent=D queue=N loss=P; errors NODE PORT KIND=N...; traffic NODE PORT DEST BYTES [PACKETS]; sweep; status", nil
	case "link":
		if len(w) != 4 || (w[1] != "down" && w[1] != "up") {
			return "", usage("link down|up NODE PORT")
		}
		p, err := port(w[3])
		if err != nil {
			return "", err
		}
		return "", c.F.SetLink(w[2], p, w[1] == "up")
	case "node":
		if len(w) != 3 || (w[1] != "dead" && w[1] != "alive") {
			return "", usage("node dead|alive NODE")
		}
		return "", c.F.SetNodeDead(w[2], w[1] == "dead")
	case "drop":
		if len(w) != 4 {
			return "", usage("drop NODE PORT PERCENT")
		}
		p, err := port(w[2])
		if err != nil {
			return "", err
		}
		pct, err := strconv.Atoi(strings.TrimSuffix(w[3], "%"))
		if err != nil {
			return "", usage("percent %q is not a number", w[3])
		}
		return "", c.F.SetDropRate(w[1], p, pct)
	case "latency":
		if len(w) == 2 && w[1] == "off" {
			return "", c.F.SetLatency(sim.Latency{})
		}
		l, err := ParseLatency(c.F.Latency(), strings.Join(w[1:], ","))
		if err != nil {
			return "", err
		}
		return "", c.F.SetLatency(l)
	case "errors":
		if len(w) < 4 {
			return "", usage("errors NODE PORT KIND=N...")
		}
		p, err := port(w[2])
		if err != nil {
			return "", err
		}
		e, err := parseErrors(w[3:])
		if err != nil {
			return "", err
		}
		return "", c.F.InjectErrors(w[1], p, e)
	case "traffic":
		if len(w) != 5 && len(w) != 6 {
			return "", usage("traffic NODE PORT DEST BYTES [PACKETS]")
		}
		p, err := port(w[2])
		if err != nil {
			return "", err
		}
		dlid, err := c.lid(w[3])
		if err != nil {
			return "", err
		}
		bytes, err := strconv.ParseUint(w[4], 10, 64)
		if err != nil {
			return "", usage("bytes %q is not a number", w[4])
		}
		packets := max(1, (bytes+4095)/4096)
		if len(w) == 6 {
			if packets, err = strconv.ParseUint(w[5], 10, 64); err != nil || packets == 0 {
				return "", usage("packets %q is not a number above 0", w[5])
			}
		}
		return "", c.F.Traffic(w[1], p, dlid, packets, bytes)
	case "sweep":
		if c.SM == nil {
			return "", errors.New("sweep: the fabric has no built-in SM (--no-sm)")
		}
		res, err := c.F.RunSM(ctx, *c.SM)
		if err != nil && res == nil {
			return "", err
		}
		return fmt.Sprintf("swept: %d switches, %d CAs, max LID %d, %d SMPs in %v", res.Switches, res.CAs, res.MaxLID, res.SMPs, res.Total.Round(time.Microsecond)), err
	case "status":
		l := c.F.Latency()
		mads, delay := c.F.Delayed()
		return fmt.Sprintf("%d nodes, SM %v, %d sweeps, latency hop=%v sma=%v agent=%v queue=%d loss=%g%%, %d queue drops, %d MADs delayed by %.6f s in all",
			c.F.NodeCount(), c.F.SMState(), c.F.Sweeps(), l.Hop, l.SMA, l.Agent, l.QueueDepth, l.Loss, c.F.QueueDrops(), mads, delay.Seconds()), nil
	}
	return "", usage("unknown command %q (try help)", w[0])
}

// lid is DEST of traffic: a LID, or a node's end port's LID (a switch's
// port 0, another node's port 1).
func (c *Console) lid(dest string) (uint16, error) {
	if n, err := strconv.ParseUint(dest, 0, 16); err == nil {
		return uint16(n), nil
	}
	id, port, ok := c.F.FindNode(dest)
	if !ok {
		return 0, usage("no node %q", dest)
	}
	_, _, lid, _, err := c.F.PortState(id, port)
	if err != nil {
		return 0, err
	}
	if lid == 0 {
		return 0, fmt.Errorf("traffic: %s has no LID (is the subnet up?)", dest)
	}
	return lid, nil
}

// Run executes every line of r (a faults file), stopping at the first
// error, which names the line.
func (c *Console) Run(ctx context.Context, r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if _, err := c.Exec(ctx, sc.Text()); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// ParseLatency reads a latency model as hop=1us,sma=20us,agent=10us,
// queue=64,loss=0.5 (commas or spaces between), starting from base.
func ParseLatency(base sim.Latency, s string) (sim.Latency, error) {
	l := base
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return l, usage("latency %q is not key=value", kv)
		}
		var err error
		switch strings.ToLower(k) {
		case "hop":
			l.Hop, err = duration(v)
		case "sma":
			l.SMA, err = duration(v)
		case "agent", "pma":
			l.Agent, err = duration(v)
		case "queue":
			l.QueueDepth, err = strconv.Atoi(v)
			if err == nil && l.QueueDepth < 0 {
				err = fmt.Errorf("want 0 (no limit) or more requests")
			}
		case "loss":
			l.Loss, err = strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err == nil && !(l.Loss >= 0 && l.Loss <= 100) {
				err = fmt.Errorf("want a percentage from 0 to 100")
			}
		default:
			return l, usage("latency: unknown key %q (hop, sma, agent, queue, loss)", k)
		}
		if err != nil {
			return l, usage("latency %s: %v", kv, err)
		}
	}
	return l, nil
}

// duration takes Go durations, and bare numbers as microseconds (the
// unit the model is specified in), from 0 to sim.MaxLatency.
func duration(v string) (time.Duration, error) {
	var d time.Duration
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if !(n >= 0 && n <= float64(sim.MaxLatency/time.Microsecond)) {
			return 0, fmt.Errorf("want 0 to %v", sim.MaxLatency)
		}
		d = time.Duration(n * float64(time.Microsecond))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, err
	}
	if d < 0 || d > sim.MaxLatency {
		return 0, fmt.Errorf("want 0 to %v", sim.MaxLatency)
	}
	return d, nil
}

func parseErrors(kvs []string) (sim.PortErrors, error) {
	var e sim.PortErrors
	fields := map[string]*uint64{
		"symbol": &e.SymbolErrors, "recovery": &e.LinkErrorRecovery, "downed": &e.LinkDowned,
		"rcv": &e.RcvErrors, "remote": &e.RcvRemotePhysErrors, "relay": &e.RcvSwitchRelayErrors,
		"discards": &e.XmitDiscards, "constraint": &e.XmitConstraintErrors, "integrity": &e.LocalLinkIntegrityErrors,
		"overrun": &e.ExcessiveBufferOverrun, "vl15": &e.VL15Dropped, "wait": &e.XmitWait,
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		p := fields[strings.ToLower(k)]
		if !ok || p == nil {
			return e, usage("errors: %q is not KIND=N with a known kind", kv)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return e, usage("errors: %q: %v", kv, err)
		}
		*p += n
	}
	return e, nil
}
