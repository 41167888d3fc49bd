package diags

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sched"
	"github.com/rdmakit/rdmakit/subnet"
)

// The engine of the ibcheck family and the commands built on it
// (ibclearcounters, ibclearerrors, ibdatacounters, ibdatacounts): the
// python-rdma commands that infiniband-diags dropped with its shell
// scripts (python-rdma libibtool/errors.py). A command is a list of checks,
// each of a kind; single-target commands run them on one node or port,
// fabric-wide ones on every end port of a discovered subnet, in parallel
// through sched with a per-node limit. The checks themselves are in the
// commands' files.

// checkKind is what a check looks at; it decides the header of its
// result and which counter of the summary it adds to.
type checkKind int

const (
	kindNode  checkKind = 1 << iota // a node: SMP NodeInfo against the SA
	kindPort                        // a port's PortInfo
	kindPerf                        // a port's PortCounters
	kindClear                       // a port's PortCounters, reset
)

// check is one of errors.py's do_* coroutines.
type check struct {
	kind checkKind
	run  func(c *checkCtx) error
}

// checkSpec describes one command of the family.
type checkSpec struct {
	name, short, usage string
	single             bool // a TARGET command, else fabric-wide
	checks             []check
	// cleared says what the resets of a clearing command select.
	cleared string
}

// scriptDashWords are the diags scripts' single-dash long options.
var scriptDashWords = map[string]string{"-nocolor": "--nocolor", "-timeout": "--timeout"}

// checkCommands are the family's commands by name, for tests that run
// them on a fabric of their own.
var checkCommands = map[string]checkSpec{}

func registerCheck(sp checkSpec) {
	checkCommands[sp.name] = sp
	register(command{name: sp.name, make: func(e *Env) *cobra.Command { return newCheckCommand(e, sp, e.open) },
		dashWords: scriptDashWords})
}

func (sp checkSpec) kinds() checkKind {
	var k checkKind
	for _, c := range sp.checks {
		k |= c.kind
	}
	return k
}

type checkFlags struct {
	addr        addrFlags
	noColor     bool
	brief       bool
	showThresh  bool
	threshFile  string
	onlyUp      bool
	disc        discoverFlags
	progressBar bool
}

func newCheckCommand(e *Env, sp checkSpec, open func() (*session, error)) *cobra.Command {
	f := &checkFlags{}
	use := sp.name + " [flags]"
	if sp.usage != "" {
		use += " " + sp.usage
	}
	long := sp.short + ", as python-rdma's ibtool " + sp.name + " does."
	kinds := sp.kinds()
	if kinds&kindPerf != 0 {
		long += `

Thresholds: a counter above its threshold is an error. The defaults are
python-rdma's; -T FILE replaces them with the file's "name=value" lines
(# starts a comment), a name being a PortCounters component in its IBA
name (symbolErrorCounter), its infiniband-diags label (SymbolErrorCounter)
or perfquery's short name (SymbolErrors), in any case. A threshold of 0
turns a check off. PortXmitData and PortRcvData count 4-octet words
(IBA 16.1.3.5): multiply by 4 for octets.`
	}
	if kinds&kindClear != 0 {
		long += `

This command writes: it resets counters (a PerformanceSet of PortCounters
on every port) and says in its summary what it cleared.`
	}
	if !sp.single {
		long += `

The subnet is discovered first (or read from --cache, or from the
topology file the diags script took as its argument: the nodes and LIDs
are the file's, the checks go to the fabric); unreachable nodes are
reported on stderr and skipped. Ports are checked in parallel, a few at a
time per node.`
		use = strings.TrimSuffix(use, " [flags]") + " [flags] [<topology-file>]"
	}
	long += `

The diags script's spellings are taken too: -nocolor (for -N) and -timeout
(for -t).`
	if kinds&kindPerf != 0 && kinds&kindClear == 0 {
		long += ` -b (brief) leaves the counter lines out, as the script's did.`
	}
	c := &cobra.Command{
		Use:   use,
		Short: sp.short + " (python-rdma " + sp.name + ")",
		Long:  long,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := &checkRunner{e: e, f: f, sp: sp, open: open}
			if sp.single {
				return r.runSingle(args)
			}
			if len(args) > 1 {
				return usagef("%s takes at most a topology file", sp.name)
			}
			if len(args) == 1 {
				r.topoFile = args[0]
			}
			return r.runFabric()
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.noColor, "nocolor", "N", false, "do not colorize the output")
	if kinds&kindPerf != 0 && kinds&kindClear == 0 {
		fl.BoolVarP(&f.brief, "brief", "b", false, "brief: the verdicts only, no counter lines (the diags scripts' -b)")
	}
	if kinds&kindPerf != 0 {
		fl.StringVarP(&f.threshFile, "thresholds", "T", "", "load threshold values from this file")
		if sp.single {
			fl.BoolVarP(&f.showThresh, "show_thresholds", "s", false, "only show the thresholds in use")
		}
	}
	if sp.single {
		fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument")
		fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
		fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	} else {
		fl.BoolVar(&f.onlyUp, "up", false, "only check links that are not POLLING/DISABLED")
		f.disc.register(c, false)
		fl.BoolVar(&f.progressBar, "progress", true, "show a progress bar on a terminal")
	}
	return c
}

// Thresholds: python-rdma's load_thresholds.

// defaultThresholds are python-rdma's (errors.py), by IBA name.
var defaultThresholds = map[string]uint64{
	"portRcvErrors": 10, "portXmitConstraintErrors": 100, "symbolErrorCounter": 10,
	"VL15Dropped": 100, "portXmitDiscards": 100, "excessiveBufferOverrunErrors": 10,
	"linkErrorRecoveryCounter": 10, "portRcvSwitchRelayErrors": 100,
	"portRcvRemotePhysicalErrors": 100, "localLinkIntegrityErrors": 10,
	"portRcvConstraintErrors": 100, "linkDownedCounter": 10,
}

// perfShortNames are perfquery's short names (python-rdma's
// libib_name_map_perfquery), accepted in threshold files and printed by
// ibdatacounts.
var perfShortNames = map[string]string{
	"PortRcvErrors": "RcvErrors", "PortXmitConstraintErrors": "XmtConstraintErrors",
	"SymbolErrorCounter": "SymbolErrors", "PortXmitDiscards": "XmtDiscards",
	"PortRcvRemotePhysicalErrors": "RcvRemotePhysErrors", "ExcessiveBufferOverrunErrors": "ExcBufOverrunErrors",
	"PortXmitData": "XmtData", "LinkErrorRecoveryCounter": "LinkRecovers",
	"PortRcvSwitchRelayErrors": "RcvSwRelayErrors", "PortXmitWait": "XmtWait",
	"LocalLinkIntegrityErrors": "LinkIntegrityErrors", "PortRcvData": "RcvData",
	"PortRcvConstraintErrors": "RcvConstraintErrors", "LinkDownedCounter": "LinkDowned",
	"PortXmitPkts": "XmtPkts", "PortRcvPkts": "RcvPkts",
}

// portCounterNames maps every accepted spelling, lower cased, to the IBA
// name of a PortCounters counter, from the iba metadata.
func portCounterNames() (map[string]string, *iba.Struct) {
	s, _ := iba.StructByName("PortCounters")
	m := map[string]string{}
	for _, f := range s.Fields {
		switch {
		case f.Reserved, f.Kind != iba.KindUint, f.Name == "portSelect", strings.HasPrefix(f.Name, "counterSelect"):
			continue
		}
		m[strings.ToLower(f.Name)] = f.Name
		if f.Label != "" {
			m[strings.ToLower(f.Label)] = f.Name
			if short, ok := perfShortNames[f.Label]; ok {
				m[strings.ToLower(short)] = f.Name
			}
		}
	}
	return m, s
}

// loadThresholds reads python-rdma's threshold file (perf.LoadThresholds),
// which replaces the defaults, by IBA field name. Every name must be a
// PortCounters counter.
func loadThresholds(path string) (map[string]uint64, error) {
	if path == "" {
		return defaultThresholds, nil
	}
	t, err := perf.LoadThresholds(path)
	if err != nil {
		return nil, err
	}
	return checkThresholds(t, path)
}

// checkThresholds takes thresholds read from the file path by IBA field
// name; every counter must be one of PortCounters.
func checkThresholds(t *perf.Thresholds, path string) (map[string]uint64, error) {
	names, _ := portCounterNames()
	out := map[string]uint64{}
	for _, k := range t.Counters() {
		name, ok := names[strings.ToLower(k.String())]
		if !ok {
			return nil, fmt.Errorf("threshold file %s: %s is not a PortCounters counter", path, k)
		}
		out[name] = t.Limit(k)
	}
	return out, nil
}

// Results.

// CheckResult is what a command of the family found.
type CheckResult struct {
	Thresholds map[string]uint64 `json:"thresholds,omitempty"`
	Runs       []*CheckRun       `json:"runs"`
	Summary    CheckSummary      `json:"summary"`
	// Unreachable lists what discovery could not reach, skipped.
	Unreachable []string `json:"unreachable,omitempty"`
}

// CheckSummary counts as python-rdma's "## Summary" does.
type CheckSummary struct {
	NodesChecked, BadNodes     int
	PortsChecked, BadPorts     int
	CountersChecked, ErrorPort int
	PortsCleared               int
	// Cleared says which counters the resets selected.
	Cleared string `json:",omitempty"`
}

// CheckRun is one check of one node or port.
type CheckRun struct {
	Kind     string   `json:"kind"` // node, port, errors, data, clear
	NodeGUID iba.GUID `json:"-"`
	GUID     string   `json:"nodeGUID"`
	NodeType string   `json:"nodeType"`
	Desc     string   `json:"description,omitempty"`
	LID      uint16   `json:"lid"`
	// Port is the port checked; 255 means all ports at once.
	Port     int      `json:"port"`
	Status   string   `json:"status"` // OK, WARNING, FAILED
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Counters is the PortCounters read (errors, data), Reset the reset
	// sent (clear).
	Counters json.RawMessage `json:"counters,omitempty"`
	Reset    *perf.Reset     `json:"reset,omitempty"`

	kind     checkKind
	nodeType iba.NodeType
	pre      []string // lines printed before the header (ibdatacounts)
	failed   bool
	err      error
}

func (k checkKind) String() string {
	switch k {
	case kindNode:
		return "node"
	case kindPort:
		return "port"
	case kindPerf:
		return "errors"
	}
	return "clear"
}

// ok is print_header's return value: no failure and no warning.
func (r *CheckRun) ok() bool { return !r.failed && len(r.Warnings) == 0 }

func (r *CheckRun) finish() {
	r.GUID = r.NodeGUID.String()
	r.NodeType = pyNodeType(r.nodeType)
	switch {
	case r.failed:
		r.Status = "FAILED"
	case len(r.Warnings) > 0:
		r.Status = "WARNING"
	default:
		r.Status = "OK"
	}
	if r.err != nil {
		r.Error = r.err.Error()
	}
}

// colors are errors.py's red, green and blue.
type colors bool

func (c colors) paint(code, s string) string {
	if !c {
		return s
	}
	return "\033[1;0" + code + "m" + s + "\033[0;39m"
}

func (c colors) red(s string) string { return c.paint("31", s) }

func (c colors) green(s string) string { return c.paint("32", s) }

func (c colors) blue(s string) string { return c.paint("34", s) }

// text is errors.py's print_header and what follows it: the header and
// the verdict when verbose or not OK, the warnings (unless brief, the
// diags scripts' -b), the error.
func (r *CheckRun) text(w io.Writer, verbose, brief bool, col colors) {
	for _, l := range r.pre {
		fmt.Fprintln(w, l)
	}
	if verbose || !r.ok() {
		desc := " "
		if r.Desc != "" {
			desc = " (" + r.Desc + ") "
		}
		all := fmt.Sprintf("port %d:", r.Port)
		if r.Port == perf.AllPorts {
			all = "all ports:"
		}
		var h string
		switch r.kind {
		case kindPort:
			h = fmt.Sprintf("Port check lid %d%sport %d:", r.LID, desc, r.Port)
		case kindPerf:
			h = fmt.Sprintf("Error check lid %d%s%s", r.LID, desc, all)
		case kindClear:
			h = fmt.Sprintf("Clear counters lid %d%s%s", r.LID, desc, all)
		case kindNode:
			if r.nodeType == iba.NodeTypeSwitch {
				fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d\n", pyNodeType(r.nodeType), r.NodeGUID.Colon(), r.LID)
			} else {
				fmt.Fprintf(w, "# Checking %s: nodeguid %s lid %d port %d\n", pyNodeType(r.nodeType), r.NodeGUID.Colon(), r.LID, r.Port)
			}
			h = fmt.Sprintf("Node check lid %d:", r.LID)
		}
		v := col.green("OK")
		if r.failed {
			v = col.red("FAILED")
		} else if len(r.Warnings) > 0 {
			v = col.blue("WARNING")
		}
		fmt.Fprintf(w, "%s %s\n", h, v)
	}
	if brief {
		return
	}
	for _, m := range r.Warnings {
		fmt.Fprintln(w, col.blue("#warn: "+m))
	}
}

// checkRunner runs one command of the family.
type checkRunner struct {
	e    *Env
	f    *checkFlags
	sp   checkSpec
	open func() (*session, error)

	s      *session
	sa     *sa.Client
	thresh map[string]uint64
	// topoFile is the diags scripts' <topology-file> argument.
	topoFile string
	names    []string // thresh's keys, sorted, for a stable order of warnings
	res      CheckResult
}

// checkCtx is the input of one run: errors.py's kwargs.
type checkCtx struct {
	r       *checkRunner
	run     *CheckRun
	ni      iba.NodeInfo
	pi      iba.PortInfo  // of the port checked
	peer    *iba.PortInfo // the port at the other end, when known
	epLID   uint16        // the end port's LID (a switch's port 0)
	pguid   iba.GUID      // the end port's GUID
	portIdx int
	desc    string // "lid L port P", the context of messages
	smp     mad.Target
}

// CheckError is a check that fails outright (errors.py's CheckError).
type CheckError struct{ Msg string }

func (e *CheckError) Error() string { return e.Msg }

// quoted is Python's %r of the string a check formats its values with.
func quoted(s string) string { return "'" + s + "'" }

func (c *checkCtx) warn(format string, a ...any) {
	c.run.Warnings = append(c.run.Warnings, fmt.Sprintf(format, a...))
}

// expect is checkEQ: a mismatch is a warning, or with fatal an error.
func (c *checkCtx) expect(name, got, want string, fatal bool) error {
	if got == want {
		return nil
	}
	msg := fmt.Sprintf("%s is %s, expected %s: %s", name, quoted(got), quoted(want), c.desc)
	if fatal {
		return &CheckError{Msg: msg}
	}
	c.run.Warnings = append(c.run.Warnings, msg)
	return nil
}

// gmp is where the end port's PMA is: its LID on QP1, as perfquery
// addresses a LID.
func (c *checkCtx) gmp() (mad.Target, error) {
	if c.epLID == 0 {
		return nil, fmt.Errorf("port %s has no LID", c.pguid.Colon())
	}
	return mad.Route{Addr: mad.Addr{LID: c.epLID, QPN: mad.QP1, QKey: mad.QP1QKey}}, nil
}

// getPerf is errors.py's get_perf: the PortCounters of portIdx; for all
// ports (255) on a PMA without AllPortSelect, the sum of every port's,
// each counter saturating as perfquery's emulation does. A CA has no
// AllPortSelect to emulate: its ports are separate end ports.
func (c *checkCtx) getPerf() ([]byte, error) {
	t, err := c.gmp()
	if err != nil {
		return nil, err
	}
	pc := &iba.PortCounters{}
	if c.portIdx == perf.AllPorts {
		caps, err := perf.ReadCapabilities(c.r.e.Ctx, c.r.s.mc, t)
		if err != nil {
			return nil, err
		}
		if !caps.AllPortSelect() {
			if c.ni.NodeType == iba.NodeTypeCA {
				return nil, errors.New("Can't iterate over all ports on a CA.")
			}
			for p := 1; p <= int(c.ni.NumPorts); p++ {
				var one iba.PortCounters
				if err := perf.Get(c.r.e.Ctx, c.r.s.mc, t, p, &one); err != nil {
					return nil, err
				}
				perf.AddPortCounters(pc, &one)
			}
			return marshal(pc)
		}
	}
	if err := perf.Get(c.r.e.Ctx, c.r.s.mc, t, c.portIdx, pc); err != nil {
		return nil, err
	}
	return marshal(pc)
}

// recordCounters keeps the PortCounters read for the JSON document.
func (c *checkCtx) recordCounters(b []byte) {
	c.run.Counters = jsonOf((&iba.PortCounters{}).Desc(), b)
}

// do runs the checks of one kind on one port and returns the result.
func (r *checkRunner) do(c *checkCtx, kind checkKind) *CheckRun {
	for _, ch := range r.sp.checks {
		if ch.kind != kind {
			continue
		}
		if err := ch.run(c); err != nil {
			c.run.failed, c.run.err = true, err
			break
		}
	}
	if kind == kindPerf && len(c.run.Warnings) > 0 {
		c.run.failed = true
	}
	c.run.finish()
	return c.run
}

func (r *checkRunner) colors() colors {
	if r.f.noColor || r.e.JSON {
		return false
	}
	f, ok := r.e.Stdout.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func (r *checkRunner) setup() error {
	if r.sp.kinds()&kindPerf == 0 {
		return nil
	}
	t, err := loadThresholds(r.f.threshFile)
	if err != nil {
		return err
	}
	r.thresh, r.names = t, slices.Sorted(maps.Keys(t))
	r.res.Thresholds = t
	return nil
}

// ChecksFailedError says that a check failed; ibtool exits with status 1.
type ChecksFailedError struct{ Bad int }

func (e *ChecksFailedError) Error() string {
	return fmt.Sprintf("%d check(s) failed", e.Bad)
}

// runSingle is errors.py's perform_single_check: the checks on one node
// (ibchecknode) or port.
func (r *checkRunner) runSingle(args []string) error {
	kinds := r.sp.kinds()
	if err := r.setup(); err != nil {
		return err
	}
	if r.f.showThresh {
		if r.e.JSON {
			return r.e.writeJSON(r.sp.name, r.thresh)
		}
		for _, k := range r.names {
			fmt.Fprintf(r.e.Stdout, "%s=%d\n", k, r.thresh[k])
		}
		return nil
	}
	want := 1
	if kinds&kindPort != 0 {
		want = 2
	}
	if len(args) < 1 || len(args) > 2 || (len(args) != want && kinds&kindPerf == 0) {
		return usagef("want %s", r.sp.usage)
	}
	s, err := r.open()
	if err != nil {
		return err
	}
	defer s.Close()
	r.s, r.sa = s, sa.New(s.mc)
	ctx := r.e.Ctx
	target, err := s.smpTarget(args[0], &r.f.addr)
	if err != nil {
		return fmt.Errorf("resolving %s: %w", args[0], err)
	}
	c := &checkCtx{r: r, smp: target}
	if err := s.SubnGet(ctx, target, &c.ni, 0); err != nil {
		return fmt.Errorf("NodeInfo of %s: %w", args[0], err)
	}
	c.pguid = c.ni.PortGUID
	c.portIdx = int(c.ni.LocalPortNum)
	if len(args) > 1 {
		c.portIdx = cPort(args[1])
	} else if kinds&kindPerf != 0 && c.ni.NodeType == iba.NodeTypeSwitch {
		c.portIdx = perf.AllPorts
	}
	var epi iba.PortInfo // the end port's: a switch's port 0
	if err := s.SubnGet(ctx, target, &epi, 0); err != nil {
		return fmt.Errorf("PortInfo of %s: %w", args[0], err)
	}
	c.pi = epi
	if kinds&kindPort != 0 {
		if err := s.SubnGet(ctx, target, &c.pi, uint32(c.portIdx)); err != nil {
			return fmt.Errorf("PortInfo of %s port %d: %w", args[0], c.portIdx, err)
		}
		if c.ni.NodeType != iba.NodeTypeSwitch {
			epi = c.pi
		}
	}
	c.epLID = epi.LID
	if ip, ok := target.(*ibpath.IBPath); ok && c.epLID == 0 {
		c.epLID = ip.DLID
	}
	c.desc = fmt.Sprintf("lid %d port %d", c.epLID, c.portIdx)
	var desc string
	if kinds&kindPerf != 0 {
		var nd iba.NodeDescription
		if err := s.SubnGet(ctx, target, &nd, 0); err != nil {
			return fmt.Errorf("NodeDescription of %s: %w", args[0], err)
		}
		desc = namemap.Clean(nd.NodeString[:])
	}
	var firstErr error
	for _, k := range []checkKind{kindNode, kindPort, kindPerf, kindClear} {
		if kinds&k == 0 {
			continue
		}
		c.run = &CheckRun{Kind: k.String(), kind: k, NodeGUID: c.ni.NodeGUID, nodeType: c.ni.NodeType, Desc: desc, LID: c.epLID, Port: c.portIdx}
		if k == kindNode {
			c.run.Port = int(c.ni.LocalPortNum)
		}
		run := r.do(c, k)
		r.res.Runs = append(r.res.Runs, run)
		if run.err != nil && firstErr == nil {
			firstErr = run.err
		}
		if run.failed {
			r.res.Summary.BadPorts++
		}
	}
	if r.e.JSON {
		if err := r.e.writeJSON(r.sp.name, &r.res); err != nil {
			return err
		}
	} else {
		col := r.colors()
		for _, run := range r.res.Runs {
			run.text(r.e.Stdout, r.e.Verbose > 0, r.f.brief, col)
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if r.res.Summary.BadPorts > 0 {
		return &ChecksFailedError{Bad: r.res.Summary.BadPorts}
	}
	return nil
}

// A block is the output of one end port, printed in discovery order.
type checkBlock struct {
	mu   sync.Mutex
	runs []*CheckRun
	tail []*CheckRun // a switch's ports, by number, after runs
}

func (b *checkBlock) add(run *CheckRun) {
	b.mu.Lock()
	b.runs = append(b.runs, run)
	b.mu.Unlock()
}

// runFabric is errors.py's perform_topo_check: discover, then check every
// end port in parallel, a switch port by port after its all-ports check
// (or every port for port checks).
func (r *checkRunner) runFabric() error {
	if err := r.setup(); err != nil {
		return err
	}
	s, err := r.open()
	if err != nil {
		return err
	}
	defer s.Close()
	r.s, r.sa = s, s.f.SA()
	var sn *subnet.Subnet
	rep := &subnet.DiscoverReport{}
	if r.topoFile != "" {
		sn, err = loadSubnetFile(r.topoFile)
	} else {
		sn, rep, err = r.e.discoverWith(s, r.f.disc, r.f.progressBar)
	}
	if err != nil {
		return err
	}
	for _, fl := range rep.Failures {
		fmt.Fprintf(r.e.Stderr, "%s: warning: skipped: %v\n", r.sp.name, fl)
		r.res.Unreachable = append(r.res.Unreachable, fl.Error())
	}
	kinds := r.sp.kinds()
	sc := sched.New(r.e.Ctx, sched.Options{MaxInFlight: r.f.disc.outstanding, PerTarget: r.f.disc.perNode,
		Busy: func(err error) bool { return errors.Is(err, mad.ErrBusy) }})
	var blocks []*checkBlock
	var counts [8]int
	var cmu sync.Mutex
	count := func(idx int, bad bool) {
		cmu.Lock()
		counts[idx]++
		if bad {
			counts[idx+1]++
		}
		cmu.Unlock()
	}
	for _, n := range sn.Nodes() {
		for _, ep := range endPorts(n) {
			if !ep.HasInfo {
				fmt.Fprintf(r.e.Stderr, "%s: warning: skipped: node %v %q port %d: no PortInfo\n", r.sp.name, n.GUID, n.Description(), ep.Num)
				r.res.Unreachable = append(r.res.Unreachable, fmt.Sprintf("node %v %q port %d: no PortInfo", n.GUID, n.Description(), ep.Num))
				continue
			}
			b := &checkBlock{}
			blocks = append(blocks, b)
			key := n.GUID.String()
			sc.Submit(key, fmt.Sprintf("checks of %v port %d", n.GUID, ep.Num), func(ctx context.Context) error {
				r.checkEndPort(sc, key, b, n, ep, kinds, count)
				return nil
			})
		}
	}
	if _, err := sc.Wait(); err != nil {
		return err
	}
	for _, b := range blocks {
		r.res.Runs = append(r.res.Runs, b.runs...)
		for _, run := range b.tail {
			if run != nil {
				r.res.Runs = append(r.res.Runs, run)
			}
		}
	}
	sum := &r.res.Summary
	sum.NodesChecked, sum.BadNodes = counts[0], counts[1]
	sum.PortsChecked, sum.BadPorts = counts[2], counts[3]
	sum.CountersChecked, sum.ErrorPort = counts[4], counts[5]
	sum.PortsCleared = counts[6]
	if kinds&kindClear != 0 {
		sum.Cleared = r.sp.cleared
	}
	if r.e.JSON {
		if err := r.e.writeJSON(r.sp.name, &r.res); err != nil {
			return err
		}
	} else {
		w := bufio.NewWriter(r.e.Stdout)
		col := r.colors()
		for _, run := range r.res.Runs {
			run.text(w, r.e.Verbose > 0, r.f.brief, col)
			if run.err != nil {
				fmt.Fprintln(w, col.red("#error: "+run.err.Error()))
			}
		}
		fmt.Fprintf(w, "## Summary: %d nodes checked, %d bad nodes found\n", counts[0], counts[1])
		if kinds&kindPort != 0 {
			fmt.Fprintf(w, "##          %d ports checked, %d ports with bad state found\n", counts[2], counts[3])
		}
		if kinds&kindPerf != 0 {
			fmt.Fprintf(w, "##          %d ports checked, %d ports have errors beyond threshold\n", counts[4], counts[5])
		}
		if kinds&kindClear != 0 {
			fmt.Fprintf(w, "##          %d port counters cleared: %s.\n", counts[6], sum.Cleared)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	var failed error
	if bad := counts[1] + counts[3] + counts[5] + counts[7]; bad > 0 {
		failed = &ChecksFailedError{Bad: bad}
	}
	// The ports the discovery lost were not checked: the verdict is
	// partial.
	return incomplete(failed, rep.Incomplete(sn))
}

// endPorts are a node's end ports: a switch's port 0, a CA's or router's
// ports that have a GUID.
func endPorts(n *subnet.Node) []*subnet.Port {
	if n.Type == iba.NodeTypeSwitch {
		if p := n.Port(0); p != nil {
			return []*subnet.Port{p}
		}
		return nil
	}
	var out []*subnet.Port
	for _, p := range n.Ports {
		if p != nil && p.Num > 0 {
			out = append(out, p)
		}
	}
	return out
}

// checkEndPort is errors.py's do(port) with its run(): the node check,
// then each kind, a switch's ports one by one.
func (r *checkRunner) checkEndPort(sc *sched.Scheduler, key string, b *checkBlock, n *subnet.Node, ep *subnet.Port, kinds checkKind, count func(int, bool)) {
	epi := ep.PortInfo()
	newCtx := func(p *subnet.Port, idx int, kind checkKind) *checkCtx {
		c := &checkCtx{r: r, ni: n.NodeInfo(), epLID: epi.LID, pguid: ep.GUID, portIdx: idx,
			desc: fmt.Sprintf("lid %d port %d", epi.LID, idx)}
		if p != nil && p.HasInfo {
			c.pi = p.PortInfo()
			if p.Remote != nil && p.Remote.HasInfo {
				rp := p.Remote.PortInfo()
				c.peer = &rp
			}
		}
		c.run = &CheckRun{Kind: kind.String(), kind: kind, NodeGUID: n.GUID, nodeType: n.Type, Desc: n.Description(), LID: epi.LID, Port: idx}
		return c
	}
	skip := func(p *subnet.Port) bool {
		if !r.f.onlyUp || p == nil || !p.HasInfo {
			return false
		}
		st := p.PortInfo().PortPhysicalState
		return st == iba.PhysPortStatePolling || st == iba.PhysPortStateDisabled
	}
	idx := func(k checkKind) int {
		return map[checkKind]int{kindNode: 0, kindPort: 2, kindPerf: 4, kindClear: 6}[k]
	}
	one := func(p *subnet.Port, portIdx int, k checkKind) *CheckRun {
		if skip(p) {
			return nil
		}
		run := r.do(newCtx(p, portIdx, k), k)
		bad := run.failed
		if k == kindPerf && run.err == nil && portIdx == perf.AllPorts {
			bad = false // errors.py counts a switch's all-ports result only through its ports
		}
		count(idx(k), bad)
		b.add(run)
		return run
	}
	if kinds&kindNode != 0 {
		one(ep, ep.Num, kindNode)
	}
	for _, k := range []checkKind{kindPort, kindPerf, kindClear} {
		if kinds&k == 0 {
			continue
		}
		if n.Type != iba.NodeTypeSwitch {
			one(ep, ep.Num, k)
			continue
		}
		if k == kindPerf || k == kindClear {
			if run := one(ep, perf.AllPorts, k); run != nil && run.ok() {
				continue
			}
		}
		// Port by port. PortInfo is at hand, so port checks run here; the
		// counters of each port are their own job on the node's key, its
		// result kept in a slot so that the block stays in port order
		// (a job never waits for another: that could take every slot).
		if k == kindPort {
			for num := 0; num <= n.NumPorts; num++ {
				if p := n.Port(num); p != nil && p.HasInfo {
					one(p, num, k)
				}
			}
			continue
		}
		b.mu.Lock()
		b.tail = make([]*CheckRun, n.NumPorts+1)
		b.mu.Unlock()
		for num := 1; num <= n.NumPorts; num++ {
			p := n.Port(num)
			if p == nil || !p.HasInfo || skip(p) {
				continue
			}
			sc.Submit(key, fmt.Sprintf("%s of %v port %d", k, n.GUID, num), func(ctx context.Context) error {
				run := r.do(newCtx(p, num, k), k)
				count(idx(k), run.failed)
				b.mu.Lock()
				b.tail[num] = run
				b.mu.Unlock()
				return nil
			})
		}
	}
}
