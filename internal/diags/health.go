package diags

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/health"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
)

// What ibdiagnet and ibdiagpath share: the check options their flags set,
// the exit status by severity, and the findings' text.

// Exit statuses of the health commands (docs/ibdiagnet.md). 1 and 2 are
// every command's: the run failed, the command line is wrong.
const (
	healthExitWarning = 8 // the worst finding is a warning
	healthExitError   = 9 // the worst finding is an error
)

// healthFlags are the check options both commands take.
type healthFlags struct {
	interval   time.Duration
	limits     []string
	thresholds string
	width      string
	speed      string
	skip       []string
	mkey       uint64
	inFlight   int
	perNode    int
}

func (f *healthFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.DurationVar(&f.interval, "interval", health.DefaultInterval, "time between the two counter samples")
	fl.StringArrayVar(&f.limits, "pm-limit", nil, "report a counter whose value is at least VALUE: NAME=VALUE or all=VALUE, repeatable (ibdiagnet -P)")
	fl.StringVar(&f.thresholds, "threshold-file", "", "least rise of each counter that is reported, in the threshold file format (default: ibdiagnet's table)")
	fl.StringVar(&f.width, "lw", "", "expected link width: 1x, 2x, 4x, 8x or 12x (ibdiagnet -lw)")
	fl.StringVar(&f.speed, "ls", "", "expected link speed: 2.5, 5, 10, FDR10, 14, 25, 50, 100 or 200 (ibdiagnet -ls)")
	fl.StringSliceVar(&f.skip, "skip", nil, "checks not to run, comma separated, or all (ibdiagnet -skip)")
	fl.Uint64VarP(&f.mkey, "m_key", "y", 0, "M_Key to put in every SMP")
	fl.IntVar(&f.inFlight, "outstanding", 0, "MADs outstanding at once (default 256)")
	fl.IntVar(&f.perNode, "per_node", 0, "MADs outstanding at once to one node (default 4)")
}

// options turns the flags into the library's options.
func (f *healthFlags) options() (health.Options, error) {
	o := health.Options{Interval: f.interval, Skip: f.skip, MKey: f.mkey, MaxInFlight: f.inFlight, PerNode: f.perNode}
	if f.interval <= 0 {
		return o, usagef("--interval must be positive")
	}
	if f.inFlight < 0 || f.perNode < 0 {
		return o, usagef("--outstanding and --per_node must not be negative")
	}
	if f.thresholds != "" {
		t, err := perf.LoadThresholds(f.thresholds)
		if err != nil {
			return o, err
		}
		o.Thresholds = t
	}
	if len(f.limits) > 0 {
		o.Limits = &perf.Thresholds{}
		for _, l := range f.limits {
			name, v, ok := strings.Cut(l, "=")
			val, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
			if !ok || err != nil {
				return o, usagef("--pm-limit %q: want NAME=VALUE", l)
			}
			if strings.EqualFold(name, "all") {
				for _, k := range perf.ErrorCounters {
					o.Limits.Set(k, val)
				}
				continue
			}
			k, ok := perf.ParseCounter(strings.TrimSpace(name))
			if !ok {
				return o, usagef("--pm-limit %q: %q is not a counter", l, name)
			}
			o.Limits.Set(k, val)
		}
	}
	if f.width != "" {
		w, err := strconv.Atoi(strings.TrimSuffix(strings.ToLower(f.width), "x"))
		if err != nil || (w != 1 && w != 2 && w != 4 && w != 8 && w != 12) {
			return o, usagef("--lw %q: want 1x, 2x, 4x, 8x or 12x", f.width)
		}
		o.ExpectedWidth = w
	}
	if f.speed != "" {
		s, ok := parseLaneSpeed(f.speed)
		if !ok {
			return o, usagef("--ls %q: want 2.5, 5, 10, FDR10, 14, 25, 50, 100 or 200", f.speed)
		}
		o.ExpectedSpeed = s
	}
	return o, nil
}

// parseLaneSpeed reads a lane speed as ibdiagnet's -ls and --ls spell it.
func parseLaneSpeed(s string) (iba.Speed, bool) {
	if strings.EqualFold(s, "FDR10") {
		return iba.SpeedFDR10, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	for sp := iba.SpeedSDR; sp <= iba.SpeedXDR; sp++ {
		if sp != iba.SpeedFDR10 && sp.DataGbps() == v {
			return sp, true
		}
	}
	return 0, false
}

// healthExit is the command's outcome by its worst finding: nil when
// there is nothing worse than info.
func healthExit(r *health.Report) error {
	s, ok := r.Worst()
	switch {
	case !ok || s == health.Info:
		return nil
	case s == health.Warning:
		return &exitError{err: fmt.Errorf("the fabric has %d warnings", r.Counts[health.Warning]), code: healthExitWarning}
	}
	return &exitError{err: fmt.Errorf("the fabric has %d errors", r.Counts[health.Error]), code: healthExitError}
}

// maxShown is how many findings the text summary lists.
const maxShown = 20

// printFindings prints the counts and the worst findings, ibdiagnet's
// -E-/-W-/-I- tags first.
func printFindings(w io.Writer, r *health.Report) {
	fmt.Fprintf(w, "Findings: %d errors, %d warnings, %d info\n", r.Counts[health.Error], r.Counts[health.Warning], r.Counts[health.Info])
	for i, f := range r.Findings {
		if i == maxShown {
			fmt.Fprintf(w, "... %d more (--json lists them all)\n", len(r.Findings)-maxShown)
			break
		}
		where := ""
		if f.Port != nil {
			where = " [" + f.Port.String()
			if f.Peer != nil {
				where += " <-> " + f.Peer.String()
			}
			where += "]"
		}
		fmt.Fprintf(w, "%s %s: %s%s\n", f.Severity.Tag(), f.Check, f.Message, where)
	}
}

// printChecks is the table of checks run and their findings.
func printChecks(w io.Writer, r *health.Report) {
	fmt.Fprintf(w, "%-22s %-8s %s\n", "Check", "Severity", "Findings")
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-22s %-8s %d\n", c.Name, c.Severity, c.Findings)
	}
}

// histogramText prints a hop histogram as "2:192 4:768".
func histogramText(h []int64) string {
	var parts []string
	for hops, n := range h {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", hops, n))
		}
	}
	return strings.Join(parts, " ")
}
