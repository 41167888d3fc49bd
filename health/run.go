package health

import (
	"context"
	"errors"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/subnet"
)

// ErrUnknownCheck matches the error of a check name that no check has.
var ErrUnknownCheck = errors.New("health: unknown check")

// DefaultInterval is the time between the two counter samples, as
// ibdiagnet 2's default (ibdiagnet 1.x reads before and after its other
// stages, whatever they take).
const DefaultInterval = time.Second

// DefaultLossyCount is how many SMPs the lossy-links check sends along
// every link: ibdiagnet's -c default.
const DefaultLossyCount = 10

// Options say what Run collects and checks.
type Options struct {
	// Checks names the checks to run ("all" for every one); empty runs
	// the default ones. Skip names checks not to run (ibdiagnet -skip).
	Checks, Skip []string

	// Subnet, when set, is checked as it is instead of discovering
	// (a cache loaded with subnet.LoadFile, an earlier discovery); the
	// tables, counters and the rest are still read from the fabric, by
	// the nodes' directed routes (Node.Path) and LIDs, so it must have
	// been found from the port the fabric is open on. Discover
	// configures the discovery otherwise.
	Subnet   *subnet.Subnet
	Discover subnet.DiscoverOptions

	// Interval is the time between the two counter samples; 0 takes
	// DefaultInterval.
	Interval time.Duration
	// Thresholds are the counters checked between the samples and the
	// least rise that is reported (ibdiagnet 1.x: a rise of at least the
	// value); nil takes DefaultThresholds. A counter that went backwards
	// or stands at its largest value is reported whatever its threshold.
	Thresholds *perf.Thresholds
	// Limits, when set, report counters whose value (not rise) is at
	// least their limit (ibdiagnet -P NAME=VALUE, or all=VALUE).
	Limits *perf.Thresholds

	// ExpectedWidth, when not 0, is the lane count every link should run
	// at (ibdiagnet -lw); ExpectedSpeed, when not 0, the speed (-ls).
	ExpectedWidth int
	ExpectedSpeed iba.Speed

	// LossyCount is how many NodeInfo SMPs the lossy-links check sends
	// along every link (ibdiagnet -c); 0 takes DefaultLossyCount.
	LossyCount int
	// LossyTimeout is the wait for each of those SMPs; 0 takes 200 ms.
	LossyTimeout time.Duration

	// VLRouting reads every SL-to-VL table so that the credit loop check
	// follows each SL's virtual lanes (ibdiagnet -vlr); without it every
	// SL is taken to travel on VL 0, as ibdiagnet does without -vlr.
	VLRouting bool
	// SLs are the service levels the credit loop check follows; empty
	// means SL 0 (what PathRecords give without QoS).
	SLs []uint8

	// MaxInFlight bounds the MADs outstanding at once (default 256) and
	// PerNode those to one node (default 4).
	MaxInFlight, PerNode int
	// MKey goes into every SMP.
	MKey uint64

	// Progress, when set, is told each stage as it begins.
	Progress func(stage string)
}

// DefaultThresholds are ibdiagnet 1.x's built-in thresholds
// (ibdebug.tcl, ComparePMCounters): the least rise between two samples
// that is reported, per counter.
func DefaultThresholds() *perf.Thresholds {
	t := &perf.Thresholds{}
	for _, x := range []struct {
		k perf.Counter
		v uint64
	}{
		{perf.SymbolErrorCounter, 1}, {perf.LinkErrorRecoveryCounter, 1}, {perf.LinkDownedCounter, 1},
		{perf.PortRcvErrors, 1}, {perf.PortXmitDiscards, 10}, {perf.PortXmitConstraintErrors, 10},
		{perf.PortRcvConstraintErrors, 10}, {perf.LocalLinkIntegrityErrors, 10},
		{perf.ExcessiveBufferOverrunErrors, 10}, {perf.VL15Dropped, 10},
	} {
		t.Set(x.k, x.v)
	}
	return t
}

func (o Options) interval() time.Duration {
	if o.Interval > 0 {
		return o.Interval
	}
	return DefaultInterval
}

func (o Options) thresholds() *perf.Thresholds {
	if o.Thresholds != nil {
		return o.Thresholds
	}
	return DefaultThresholds()
}

func (o Options) lossyCount() int {
	if o.LossyCount > 0 {
		return o.LossyCount
	}
	return DefaultLossyCount
}

func (o Options) stage(s string) {
	if o.Progress != nil {
		o.Progress(s)
	}
}

// Report is what Run found.
type Report struct {
	// Findings, worst first (Sort's order).
	Findings []Finding `json:"findings"`
	// Counts are the findings by severity.
	Counts Counts `json:"counts"`
	// Checks are the checks run, in order, with their finding counts.
	Checks []CheckResult `json:"checks"`
	// Summary describes the fabric checked.
	Summary Summary `json:"summary"`
	// Routing is the routing analysis (nil when no routing check ran).
	Routing *RoutingResult `json:"routing,omitempty"`
	// Data is what was collected; the report files are written from it.
	Data *Data `json:"-"`
	// Elapsed is the run's wall time, collection included.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// CheckResult is one check run.
type CheckResult struct {
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Findings int      `json:"findings"`
}

// Summary counts what the fabric has (ibdiagnet's fabric summary).
type Summary struct {
	Nodes    int `json:"nodes"`
	Switches int `json:"switches"`
	CAs      int `json:"cas"`
	Routers  int `json:"routers"`
	Ports    int `json:"ports"`
	Links    int `json:"links"`
	// Masters and Standbys count the SMs found in each state.
	Masters  int `json:"master_sms"`
	Standbys int `json:"standby_sms"`
}

// Worst is the worst severity found, false when nothing was found.
func (r *Report) Worst() (Severity, bool) { return r.Counts.Worst() }

// Needs is the data the checks need.
func Needs(checks []*Check) Need {
	var n Need
	for _, c := range checks {
		n |= c.Needs
	}
	return n
}

// Run collects what the selected checks need from the fabric and runs
// them. The error is the collection's when it failed as a whole (the
// discovery could not start, ctx ended); a part that did not answer
// (a node, a table) is a finding instead.
func Run(ctx context.Context, f *fabric.Fabric, o Options) (*Report, error) {
	start := time.Now()
	checks, err := Select(o.Checks, o.Skip)
	if err != nil {
		return nil, err
	}
	d, err := Collect(ctx, f, Needs(checks), o)
	if err != nil {
		return nil, err
	}
	r := RunChecks(d, checks)
	r.Elapsed = time.Since(start)
	return r, nil
}

// RunChecks runs checks over collected data.
func RunChecks(d *Data, checks []*Check) *Report {
	r := &Report{Data: d, Findings: []Finding{}}
	for _, c := range checks {
		d.options().stage(c.Name)
		fs := c.Run(d)
		r.Checks = append(r.Checks, CheckResult{Name: c.Name, Severity: c.Severity, Findings: len(fs)})
		r.Findings = append(r.Findings, fs...)
		r.Counts[c.Severity] += len(fs)
		if c.Name == "routing" {
			r.Routing = d.routing()
		}
	}
	Sort(r.Findings)
	r.Summary = d.summary()
	return r
}
