package diags

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
	"github.com/rdmakit/rdmakit/traceroute"
)

// discoverFlags are the discovery options shared by ibnetdiscover and the
// commands built on it (ibhosts, ibswitches, ibrouters, ibnodes).
type discoverFlags struct {
	method      string
	outstanding int
	perNode     int
	hops        int
	guid        string
	direct      string
	loadCache   string
	// cache and refresh are python-rdma's --cache and --refresh-cache:
	// a discovery cache read when present, else written.
	cache   string
	refresh bool
	// drDiscovery is python-rdma dump_lfts' -D: --discovery DR.
	drDiscovery bool
	noMlnxEPI   bool
	probeLinks  bool
	show        bool
	progressBar bool
	// drStart starts a -G scan at a directed route to the port, found
	// through the switches' LFTs, rather than at its LID (iblinkinfo
	// since rdma-core 77f7355ce: SMPs by LID are not routed everywhere).
	drStart bool
	cmd     *cobra.Command // where --discovery was registered
	// settled, when set, is told of each node the walk is done with (see
	// subnet.DiscoverOptions.Settled).
	settled func(*subnet.Node)
}

func (f *discoverFlags) register(c *cobra.Command, partial bool) {
	f.cmd = c
	fl := c.Flags()
	fl.StringVar(&f.method, "discovery", "DR", "how to discover: DR (directed route SMPs, as the C tool), LID (LID routed once known) or SA (SA records)")
	fl.IntVarP(&f.outstanding, "outstanding_smps", "o", 0, "SMPs outstanding at once (default 256; the C tool's is 2)")
	fl.IntVar(&f.perNode, "per_node_smps", 0, "SMPs outstanding at once to one node (default 4)")
	fl.BoolVar(&f.probeLinks, "probe-known-links", false, "send every NodeInfo probe as the C tool does, also across switch links already found from their other end")
	fl.BoolVar(&f.noMlnxEPI, "no-mlnx-ext-port-info", false, "do not ask Mellanox devices for their extended port info (ibdiag.conf MLX_EPI=false)")
	if fl.Lookup("cache") == nil {
		fl.StringVar(&f.cache, "cache", "", "discovery cache (python-rdma): read the subnet from FILE when it exists, else discover and write it there; $C or ${CA} is the device, $P or ${PORT} the port, $A $C-$P")
	}
	fl.BoolVar(&f.refresh, "refresh-cache", false, "discover even when the --cache file exists, and rewrite it")
	if partial {
		fl.IntVarP(&f.hops, "hops", "n", 0, "partial scan: stop extending paths past this many hops (libibnetdisc max_hops)")
		fl.StringVarP(&f.guid, "Guid", "G", "", "partial scan: start at the port with this GUID (found through the SA)")
		fl.StringVarP(&f.direct, "Direct", "D", "", "partial scan: start at the node this directed route reaches, e.g. 0,1,3")
	}
}

// noMlnxEPI is --no-mlnx-ext-port-info when given, else the site
// configuration's MLX_EPI=false.
func (e *Env) noMlnxEPI(f *discoverFlags) bool {
	if f.cmd != nil && f.cmd.Flags().Changed("no-mlnx-ext-port-info") {
		return f.noMlnxEPI
	}
	return f.noMlnxEPI || !e.MlxEPI
}

// discoverResult is a subnet and how it was obtained.
type discoverResult struct {
	s      *subnet.Subnet
	report *subnet.DiscoverReport
	source string // "discovery" or the file loaded
}

// discover loads f.loadCache when set, or the --cache file when it
// exists, else discovers the subnet through the fabric the global flags
// select (and writes --cache). show receives ibnetdiscover -s lines.
func (e *Env) discover(f *discoverFlags, show func(string)) (*discoverResult, error) {
	if f.loadCache != "" {
		s, err := loadSubnetFile(f.loadCache)
		if err != nil {
			return nil, err
		}
		return &discoverResult{s: s, source: f.loadCache}, nil
	}
	m, err := e.discoveryMethod(f)
	if err != nil {
		return nil, err
	}
	if f.outstanding < 0 || f.perNode < 0 || f.hops < 0 {
		return nil, usagef("-o, --per_node_smps and --hops must not be negative")
	}
	if f.guid != "" && f.direct != "" {
		return nil, usagef("-G and -D exclude each other")
	}
	if f.cache != "" && !strings.Contains(f.cache, "$") {
		// A file name with no template needs no fabric to be read.
		if r, err := e.readDiscoveryCache(f, f.cache); r != nil || err != nil {
			return r, err
		}
	}
	sess, err := e.open()
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return e.discoverCached(sess, f, m, show)
}

// discoverCached is discoverOn behind python-rdma's --cache: the cache
// file read when it exists (unless --refresh-cache), else a discovery
// written to it.
func (e *Env) discoverCached(sess *session, f *discoverFlags, m subnet.Method, show func(string)) (*discoverResult, error) {
	var fn string
	if f.cache != "" {
		fn = cacheFileName(f.cache, sess.local)
		if r, err := e.readDiscoveryCache(f, fn); r != nil || err != nil {
			return r, err
		}
	}
	r, err := e.discoverOn(sess, f, m, show)
	if err != nil || fn == "" {
		return r, err
	}
	if e.Debug > 0 {
		fmt.Fprintf(e.Stderr, "D: Saving discovery cache to %q\n", fn)
	}
	if err := writeDiscoveryCache(fn, r.s); err != nil {
		return nil, err
	}
	return r, nil
}

// readDiscoveryCache reads the --cache file fn, unless --refresh-cache;
// nil, nil when there is none to read.
func (e *Env) readDiscoveryCache(f *discoverFlags, fn string) (*discoverResult, error) {
	if f.refresh {
		return nil, nil
	}
	if _, err := os.Stat(fn); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if e.Debug > 0 {
		fmt.Fprintf(e.Stderr, "D: Loading discovery cache from %q\n", fn)
	}
	s, err := loadSubnetFile(fn)
	if err != nil {
		return nil, fmt.Errorf("--cache: %w", err)
	}
	return &discoverResult{s: s, source: fn}, nil
}

// writeDiscoveryCache writes a subnet to fn in our cache format (which
// keeps everything discovery read), through a temporary file renamed over
// fn, so that a reader never sees half a file.
func writeDiscoveryCache(fn string, s *subnet.Subnet) error {
	var b bytes.Buffer
	if err := s.WriteCache(&b); err != nil {
		return fmt.Errorf("writing the discovery cache: %w", err)
	}
	tmp := fn + ".new"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the discovery cache: %w", err)
	}
	if err := os.Rename(tmp, fn); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the discovery cache: %w", err)
	}
	return nil
}

// cacheFileName fills in python-rdma's --cache template: $C and ${CA}
// are the local device, $P and ${PORT} its port number, $A is $C-$P; a
// $ followed by anything else stays as written.
func cacheFileName(tmpl string, lp mad.LocalPort) string {
	dev, port := lp.Name, strconv.Itoa(int(lp.PortNum))
	if i := strings.LastIndexByte(dev, '/'); i >= 0 {
		dev = dev[:i]
	}
	dev = strings.NewReplacer("/", "_", ":", "_").Replace(dev)
	return os.Expand(tmpl, func(k string) string {
		switch k {
		case "C", "CA":
			return dev
		case "P", "PORT":
			return port
		case "A":
			return dev + "-" + port
		}
		return "$" + k
	})
}

// discoveryMethod is the --discovery flag with python-rdma's --sa rules:
// --sa discovers by SA and refuses an explicit DR or LID, and
// --discovery=SA means --sa for the rest of the command.
func (e *Env) discoveryMethod(f *discoverFlags) (subnet.Method, error) {
	if f.drDiscovery {
		if f.cmd != nil && f.cmd.Flags().Changed("discovery") && f.method != "DR" {
			return 0, usagef("-D and --discovery=%s exclude each other", f.method)
		}
		if e.SA {
			return 0, usagef("--sa cannot be combined with -D (discovery by directed route)")
		}
		return subnet.ByDirectRoute, nil
	}
	m, err := subnet.ParseMethod(f.method)
	if err != nil {
		return 0, usagef("--discovery: %v", err)
	}
	if e.SA {
		if m != subnet.BySA && f.cmd != nil && f.cmd.Flags().Changed("discovery") {
			return 0, usagef("--sa cannot be combined with --discovery=%s", f.method)
		}
		return subnet.BySA, nil
	}
	if m == subnet.BySA {
		e.SA = true
	}
	return m, nil
}

// discoverOptions are the discovery flags as subnet.DiscoverOptions for a
// discovery through sess (the -G port found through the SA, the -D path
// parsed), with a progress bar on a terminal; done removes the bar.
func (e *Env) discoverOptions(sess *session, f *discoverFlags, m subnet.Method, show func(string)) (opt subnet.DiscoverOptions, done func(), err error) {
	opt = subnet.DiscoverOptions{
		Method: m, LocalLID: sess.local.LID, MaxHops: f.hops,
		MaxInFlight: f.outstanding, PerNode: f.perNode, NoMlnxExtPortInfo: e.noMlnxEPI(f),
		ProbeKnownLinks: f.probeLinks,
		ShowNode:        show, Settled: f.settled,
	}
	done = func() {}
	if f.direct != "" {
		p, err := subnet.ParseDRPath(f.direct)
		if err != nil {
			return opt, done, usagef("-D %s: %v", f.direct, err)
		}
		opt.From = p
	}
	if f.guid != "" {
		p, err := ibpath.Parse(f.guid, ibpath.Options{Mode: ibpath.PortGUID})
		if err != nil {
			return opt, done, usagef("-G %s: %v", f.guid, err)
		}
		lid, err := sess.res.LID(e.Ctx, p)
		if err != nil {
			return opt, done, fmt.Errorf("finding port GUID %s: %w", f.guid, err)
		}
		if lid == sess.local.LID {
			lid = 0 // the local port: a plain scan from here
		}
		if f.drStart && lid != 0 {
			tr := traceroute.Tracer{Getter: sess.mc}
			if path, err := tr.DirectedRoute(e.Ctx, lid); err != nil {
				msg := err.Error()
				if te := (*traceroute.Error)(nil); errors.As(err, &te) {
					msg = te.Msg
				}
				fmt.Fprintf(e.Stderr, "ibwarn: [%d] build_dr_path_to_lid: %s\n", os.Getpid(), msg)
				fmt.Fprintf(e.Stderr, "ibwarn: [%d] main: DR path to lid %d (%s) failed; using resolved portid\n", os.Getpid(), lid, f.guid)
			} else {
				opt.From, lid = path, 0
			}
		}
		opt.StartLID = lid
	}
	if bar := e.progressBar(f.progressBar && !f.show); bar != nil {
		opt.Progress = bar.update
		done = bar.done
	}
	return opt, done, nil
}

// discoverOn discovers the subnet through an open session, with the flags
// already checked.
func (e *Env) discoverOn(sess *session, f *discoverFlags, m subnet.Method, show func(string)) (*discoverResult, error) {
	opt, done, err := e.discoverOptions(sess, f, m, show)
	defer done()
	if err != nil {
		return nil, err
	}
	if e.Debug > 0 {
		fmt.Fprintf(e.Stderr, "D: Performing discovery using mode '%s'\n", m)
	}
	var s *subnet.Subnet
	var rep *subnet.DiscoverReport
	if m == subnet.BySA {
		s, rep, err = subnet.DiscoverSA(e.Ctx, sess.f.SA(), sess.local, opt)
	} else {
		s, rep, err = subnet.Discover(e.Ctx, sess.mc, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("discover failed: %w", err)
	}
	return &discoverResult{s: s, report: rep, source: "discovery"}, nil
}

// discoverWith discovers the subnet on an open session with discovery
// flags that have no partial scan, with a progress bar on a terminal when
// asked.
func (e *Env) discoverWith(s *session, f discoverFlags, progressBar bool) (*subnet.Subnet, *subnet.DiscoverReport, error) {
	m, err := e.discoveryMethod(&f)
	if err != nil {
		return nil, nil, err
	}
	if f.outstanding < 0 || f.perNode < 0 {
		return nil, nil, usagef("-o and --per_node_smps must not be negative")
	}
	f.progressBar = progressBar
	res, err := e.discoverCached(s, &f, m, nil)
	if err != nil {
		return nil, nil, err
	}
	if res.report == nil {
		// Loaded from --cache: nothing was asked, nothing failed.
		return res.s, &subnet.DiscoverReport{}, nil
	}
	return res.s, res.report, nil
}

// warnFailures prints what did not answer, one line each, as the C tool
// warns on stderr (and goes on).
func (e *Env) warnFailures(cmd string, r *discoverResult) {
	if r.report == nil {
		return
	}
	for _, f := range r.report.Failures {
		fmt.Fprintf(e.Stderr, "%s: warning: %v\n", cmd, f)
	}
}

// lost is what the discovery could not read (subnet.DiscoverReport.
// Incomplete: how many ports lead to a node that did not answer, how many
// nodes answered in part), nil when it read everything or the subnet was
// loaded from a file. A command returns it through incomplete once it has
// printed what it found.
func (r *discoverResult) lost() error {
	if r == nil || r.report == nil {
		return nil
	}
	return r.report.Incomplete(r.s)
}

// loadSubnetFile reads a libibnetdisc cache, one of ours, or a topology
// file, whichever the file is (subnet.ReadFile: bounded, magic first).
func loadSubnetFile(path string) (*subnet.Subnet, error) {
	s, _, err := subnet.ReadFile(path)
	return s, err
}

// progress draws a one-line progress bar on a terminal.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	last time.Time
	any  bool
}

// progressBar returns a bar on stderr when asked for, stderr is a
// terminal and the output is not JSON; nil otherwise.
func (e *Env) progressBar(want bool) *progress {
	if !want || e.JSON {
		return nil
	}
	f, ok := e.Stderr.(*os.File)
	if !ok {
		return nil
	}
	if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
		return nil
	}
	return &progress{w: f}
}

func (p *progress) update(d subnet.DiscoverProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond && d.Done != d.Queued {
		return
	}
	p.last = time.Now()
	p.any = true
	const width = 30
	fill := 0
	if d.Queued > 0 {
		fill = width * d.Done / d.Queued
	}
	fmt.Fprintf(p.w, "\rdiscovering [%s%s] %d nodes, %d/%d SMPs ", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), d.Nodes, d.Done, d.Queued)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.any {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 79))
	}
}

// PeerJSON is the far end of a link.
type PeerJSON struct {
	GUID        string `json:"node_guid"`
	Port        int    `json:"port"`
	Description string `json:"description"`
}

// FailureJSON is a query that did not answer.
type FailureJSON struct {
	Path      string    `json:"dr_path"`
	Node      string    `json:"node_guid,omitempty"`
	Attribute string    `json:"attribute"`
	Modifier  uint32    `json:"modifier"`
	Via       *PeerJSON `json:"via,omitempty"`
	Error     string    `json:"error"`
}

func smpAttrName(id uint16) string {
	if s, ok := iba.LookupAttr(iba.ClassSubnMgt, id); ok {
		return s.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// unreachableJSON lists what the discovery could not reach, for --json.
func unreachableJSON(r *discoverResult) []FailureJSON {
	out := []FailureJSON{}
	if r == nil || r.report == nil {
		return out
	}
	for _, f := range r.report.Unreachable() {
		fj := FailureJSON{Path: f.Path.String(), Attribute: smpAttrName(f.Attr), Error: f.Err.Error()}
		if f.Via != nil {
			fj.Via = &PeerJSON{GUID: f.Via.Node.GUID.String(), Port: f.Via.Num, Description: f.Via.Node.Description()}
		}
		out = append(out, fj)
	}
	return out
}
