package diags

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibnetdiscover", make: newIBNetDiscover})
}

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
	mkey        uint64
	noMlnxEPI   bool
	probeLinks  bool
	show        bool
	progressBar bool
	cmd         *cobra.Command // where --discovery was registered
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
	fl.Uint64VarP(&f.mkey, "m_key", "y", 0, "M_Key to put in every SMP")
	fl.BoolVar(&f.probeLinks, "probe-known-links", false, "send every NodeInfo probe as the C tool does, also across switch links already found from their other end")
	fl.BoolVar(&f.noMlnxEPI, "no-mlnx-ext-port-info", false, "do not ask Mellanox devices for their extended port info (ibdiag.conf MLX_EPI=false)")
	if partial {
		fl.IntVarP(&f.hops, "hops", "n", 0, "partial scan: stop extending paths past this many hops (libibnetdisc max_hops)")
		fl.StringVarP(&f.guid, "Guid", "G", "", "partial scan: start at the port with this GUID (found through the SA)")
		fl.StringVarP(&f.direct, "Direct", "D", "", "partial scan: start at the node this directed route reaches, e.g. 0,1,3")
	}
}

// discoverResult is a subnet and how it was obtained.
type discoverResult struct {
	s      *subnet.Subnet
	report *subnet.DiscoverReport
	source string // "discovery" or the file loaded
}

// discover loads f.loadCache when set, else discovers the subnet through
// the fabric the global flags select. show receives ibnetdiscover -s lines.
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
	sess, err := e.open()
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	return e.discoverOn(sess, f, m, show)
}

// discoveryMethod is the --discovery flag with python-rdma's --sa rules:
// --sa discovers by SA and refuses an explicit DR or LID, and
// --discovery=SA means --sa for the rest of the command.
func (e *Env) discoveryMethod(f *discoverFlags) (subnet.Method, error) {
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

// discoverOn discovers the subnet through an open session, with the flags
// already checked.
func (e *Env) discoverOn(sess *session, f *discoverFlags, m subnet.Method, show func(string)) (*discoverResult, error) {
	opt := subnet.DiscoverOptions{
		Method: m, LocalLID: sess.local.LID, MaxHops: f.hops,
		MaxInFlight: f.outstanding, PerNode: f.perNode, NoMlnxExtPortInfo: f.noMlnxEPI, MKey: f.mkey,
		ProbeKnownLinks: f.probeLinks,
		ShowNode:        show, Settled: f.settled,
	}
	if f.direct != "" {
		p, err := subnet.ParseDRPath(f.direct)
		if err != nil {
			return nil, usagef("-D %s: %v", f.direct, err)
		}
		opt.From = p
	}
	if f.guid != "" {
		p, err := ibpath.Parse(f.guid, ibpath.Options{Mode: ibpath.PortGUID})
		if err != nil {
			return nil, usagef("-G %s: %v", f.guid, err)
		}
		lid, err := sess.res.LID(e.Ctx, p)
		if err != nil {
			return nil, fmt.Errorf("finding port GUID %s: %w", f.guid, err)
		}
		if lid == sess.local.LID {
			lid = 0 // the local port: a plain scan from here
		}
		opt.StartLID = lid
	}
	bar := e.progressBar(f.progressBar && !f.show)
	if bar != nil {
		opt.Progress = bar.update
		defer bar.done()
	}
	var s *subnet.Subnet
	var rep *subnet.DiscoverReport
	var err error
	if m == subnet.BySA {
		s, rep, err = discoverSA(e.Ctx, sess, opt)
	} else {
		s, rep, err = subnet.Discover(e.Ctx, sess.mc, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("discover failed: %w", err)
	}
	return &discoverResult{s: s, report: rep, source: "discovery"}, nil
}

// discoverSA builds the subnet from SA records. A partial scan from a LID
// (-G) starts the walk at the node the SA gives that LID, as the SMP scan
// starts there.
func discoverSA(ctx context.Context, sess *session, opt subnet.DiscoverOptions) (*subnet.Subnet, *subnet.DiscoverReport, error) {
	if opt.StartLID == 0 {
		return subnet.DiscoverSA(ctx, sa.New(sess.mc), sess.local, opt)
	}
	start := time.Now()
	recs, err := subnet.FetchSARecords(ctx, sa.New(sess.mc))
	if err != nil {
		return nil, nil, err
	}
	for _, nr := range recs.Nodes {
		if nr.LID == opt.StartLID {
			s, rep, err := subnet.DiscoverRecords(ctx, recs, nr.NodeInfo.NodeGUID, int(nr.NodeInfo.LocalPortNum), opt)
			if rep != nil {
				rep.Sent = 4
				rep.Elapsed = time.Since(start)
			}
			return s, rep, err
		}
	}
	return nil, nil, fmt.Errorf("the SA has no NodeRecord for LID %d", opt.StartLID)
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

// loadSubnetFile reads a libibnetdisc cache, one of ours, or a topology
// file, whichever the file is.
func loadSubnetFile(path string) (*subnet.Subnet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	var s *subnet.Subnet
	switch {
	case bytes.HasPrefix(data, []byte{0x2b, 0x83, 0xe7, 0x8f}):
		s, err = subnet.ParseIBNDCache(data)
	case bytes.HasPrefix(data, []byte("RDMKSUBN")):
		s, err = subnet.ParseCache(data)
	default:
		s, err = subnet.ReadTopology(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return s, nil
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

// exitError carries the C tool's exit status.
type exitError struct {
	err  error
	code int
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

func newIBNetDiscover(e *Env) *cobra.Command {
	var (
		df                                      discoverFlags
		full, list, group, hcas, switches, rtrs bool
		ports, reportHops, dot                  bool
		nodeNameMap, cacheFile, cacheFormat     string
		diffFile, diffCheck                     string
	)
	c := &cobra.Command{
		Use:   "ibnetdiscover [topology-file]",
		Short: "discover the InfiniBand subnet and print its topology",
		Long: `ibnetdiscover discovers the subnet from the local port and prints its
topology as infiniband-diags' ibnetdiscover does, byte for byte but for the
"generated on" line, with the same options. The discovery keeps many SMPs in
flight (-o) yet builds the database in the C tool's order, so the text and
the --cache file are those the C tool writes. Unanswered queries are warned
about on stderr and reported in --json; they do not stop the scan.

Extensions: --discovery LID|SA, partial scans from -G/-D limited by --hops,
--json (the whole database) and --dot (Graphviz).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			checks := subnet.DiffDefault
			if cmd.Flags().Changed("diffcheck") {
				var err error
				if checks, err = subnet.ParseDiffChecks(diffCheck); err != nil {
					return usagef("--diffcheck: %v", err)
				}
			}
			if cacheFormat != "ibnd" && cacheFormat != "rdmakit" {
				return usagef("--cache-format %q: want ibnd or rdmakit", cacheFormat)
			}
			if dot && e.JSON {
				return usagef("--dot and --json exclude each other")
			}
			var names *namemap.Map
			if nodeNameMap != "" {
				var err error
				if names, err = loadNames(nodeNameMap); err != nil {
					return err
				}
			}
			opt := subnet.TopologyOptions{Group: group, Full: full, ReportHops: reportHops}
			if names != nil {
				opt.NodeName = names.Name
			}
			var diffWith *subnet.Subnet
			if diffFile != "" {
				var err error
				if diffWith, err = loadSubnetFile(diffFile); err != nil {
					return &exitError{fmt.Errorf("loading cached fabric for diff failed: %w", err), 255}
				}
			}
			out := e.Stdout
			if len(args) == 1 {
				fh, err := os.Create(args[0])
				if err != nil {
					return &exitError{fmt.Errorf("can't open file %s for writing: %w", args[0], err), 255}
				}
				defer fh.Close()
				out = fh
			}
			var show func(string)
			if df.show && !e.JSON {
				show = func(l string) { fmt.Fprintln(e.Stdout, l) }
			}
			df.progressBar = true
			r, err := e.discover(&df, show)
			if err != nil {
				var ue *UsageError
				if errors.As(err, &ue) {
					return err
				}
				return &exitError{err, 255}
			}
			e.warnFailures("ibnetdiscover", r)
			s := r.s
			switch {
			case e.JSON:
				err = e.writeJSON("ibnetdiscover", topologyJSON(s, r.report))
			case dot:
				err = writeDot(out, s, opt)
			case ports:
				err = s.WritePortsReport(e.Stdout, opt)
			case list || hcas || switches || rtrs:
				var types []iba.NodeType
				switch {
				case list:
					types = []iba.NodeType{iba.NodeTypeCA, iba.NodeTypeSwitch, iba.NodeTypeRouter}
				case rtrs:
					types = []iba.NodeType{iba.NodeTypeRouter}
				case hcas:
					types = []iba.NodeType{iba.NodeTypeCA}
				default:
					types = []iba.NodeType{iba.NodeTypeSwitch}
				}
				err = s.WriteNodeList(out, opt, types...)
			case diffWith != nil:
				err = subnet.WriteNetDiscoverDiff(out, diffWith, s, opt, checks)
			default:
				err = s.WriteTopology(out, opt)
			}
			if err != nil {
				return err
			}
			if cacheFile != "" {
				if err := writeCacheFile(cacheFile, cacheFormat, s); err != nil {
					return &exitError{fmt.Errorf("caching ibnetdiscover data failed: %w", err), 255}
				}
			}
			return nil
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&full, "full", "f", false, "show full information (ports' speed and width, vlcap)")
	fl.BoolVarP(&df.show, "show", "s", false, "show more information: every node as it is found")
	fl.BoolVarP(&list, "list", "l", false, "list of connected nodes")
	fl.BoolVarP(&group, "grouping", "g", false, "show grouping")
	fl.BoolVarP(&hcas, "Hca_list", "H", false, "list of connected CAs")
	fl.BoolVarP(&switches, "Switch_list", "S", false, "list of connected switches")
	fl.BoolVarP(&rtrs, "Router_list", "R", false, "list of connected routers")
	fl.StringVar(&nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVar(&cacheFile, "cache", "", "file to cache the discovered subnet to")
	fl.StringVar(&cacheFormat, "cache-format", "ibnd", "format of --cache: ibnd (libibnetdisc's, as the C tool) or rdmakit (ours, faster to load)")
	fl.StringVar(&df.loadCache, "load-cache", "", "load the subnet from this cache (libibnetdisc's or ours) or topology file instead of discovering")
	fl.StringVar(&diffFile, "diff", "", "cache or topology file to diff the subnet against")
	fl.StringVar(&diffCheck, "diffcheck", "", "what --diff checks: sw,ca,router,port,lid,nodedesc (default sw,ca,router,port)")
	fl.BoolVarP(&ports, "ports", "p", false, "obtain a ports report")
	fl.BoolVarP(&reportHops, "max_hops", "m", false, "report max hops discovered and the MADs used")
	fl.BoolVar(&dot, "dot", false, "print the topology as a Graphviz graph")
	df.register(c, true)
	return c
}

func writeCacheFile(path, format string, s *subnet.Subnet) error {
	var b bytes.Buffer
	var err error
	if format == "rdmakit" {
		err = s.WriteCache(&b)
	} else {
		err = s.WriteIBNDCache(&b)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// TopologyJSON is ibnetdiscover's --json document: every node with its
// ports and links, and what did not answer.
type TopologyJSON struct {
	From        string         `json:"from,omitempty"`
	FromPort    int            `json:"from_port,omitempty"`
	MaxHops     int            `json:"max_hops_discovered"`
	MADs        int            `json:"mads"`
	Nodes       []NodeJSON     `json:"nodes"`
	Unreachable []FailureJSON  `json:"unreachable"`
	Failures    []FailureJSON  `json:"failures"`
	Stats       *DiscoverStats `json:"stats,omitempty"`
}

// DiscoverStats is how the discovery went.
type DiscoverStats struct {
	Method       string  `json:"method"`
	Queries      int     `json:"queries"`
	Sent         int     `json:"sent"`
	FromLinks    int     `json:"from_links"` // probes answered from a link found from its other end
	PeakInFlight int     `json:"peak_in_flight"`
	Seconds      float64 `json:"seconds"`
}

// NodeJSON is one node.
type NodeJSON struct {
	Type         string     `json:"type"`
	GUID         string     `json:"guid"`
	SysImageGUID string     `json:"sys_image_guid"`
	Description  string     `json:"description"`
	VendorID     int        `json:"vendor_id"`
	DeviceID     int        `json:"device_id"`
	NumPorts     int        `json:"num_ports"`
	LID          uint16     `json:"lid,omitempty"`
	LMC          uint8      `json:"lmc,omitempty"`
	Path         string     `json:"dr_path,omitempty"`
	Ports        []PortJSON `json:"ports"`
}

// PortJSON is one port with PortInfo.
type PortJSON struct {
	Num       int       `json:"port"`
	GUID      string    `json:"guid"`
	LID       uint16    `json:"lid"`
	LMC       uint8     `json:"lmc"`
	State     string    `json:"state"`
	PhysState string    `json:"phys_state"`
	Width     string    `json:"width,omitempty"`
	Speed     string    `json:"speed,omitempty"`
	Remote    *PeerJSON `json:"remote,omitempty"`
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

func nodeTypeName(t iba.NodeType) string {
	switch t {
	case iba.NodeTypeCA:
		return "CA"
	case iba.NodeTypeSwitch:
		return "Switch"
	case iba.NodeTypeRouter:
		return "Router"
	}
	return fmt.Sprintf("type %d", t)
}

func topologyJSON(s *subnet.Subnet, rep *subnet.DiscoverReport) *TopologyJSON {
	doc := &TopologyJSON{MaxHops: s.MaxHopsDiscovered, MADs: s.MADs, Nodes: []NodeJSON{}, Unreachable: []FailureJSON{}, Failures: []FailureJSON{}}
	if from, port := s.From(); from != nil {
		doc.From, doc.FromPort = from.GUID.String(), port
	}
	for _, n := range s.Nodes() {
		ni := n.NodeInfo()
		nj := NodeJSON{Type: nodeTypeName(n.Type), GUID: n.GUID.String(), SysImageGUID: ni.SystemImageGUID.String(),
			Description: n.Description(), VendorID: int(ni.VendorID), DeviceID: int(ni.DeviceID), NumPorts: n.NumPorts, Ports: []PortJSON{}}
		if n.Path != nil {
			nj.Path = n.Path.String()
		}
		if ep := n.EndPort(); ep != nil {
			nj.LID, nj.LMC = ep.BaseLID, ep.LMC
		}
		for _, p := range n.Ports {
			if p == nil || !p.HasInfo {
				continue
			}
			pi := p.PortInfo()
			pj := PortJSON{Num: p.Num, GUID: p.GUID.String(), LID: p.BaseLID, LMC: p.LMC, State: pi.PortState.String(), PhysState: pi.PortPhysicalState.String()}
			if lanes, speed := p.Rate(); lanes != 0 && p.Num != 0 {
				pj.Width, pj.Speed = fmt.Sprintf("%dx", lanes), speed.String()
			}
			if r := p.Remote; r != nil {
				pj.Remote = &PeerJSON{GUID: r.Node.GUID.String(), Port: r.Num, Description: r.Node.Description()}
			}
			nj.Ports = append(nj.Ports, pj)
		}
		doc.Nodes = append(doc.Nodes, nj)
	}
	if rep != nil {
		doc.Stats = &DiscoverStats{Method: rep.Method.String(), Queries: rep.Queries, Sent: rep.Sent, FromLinks: rep.FromLinks, PeakInFlight: rep.PeakInFlight, Seconds: rep.Elapsed.Seconds()}
		for _, f := range rep.Failures {
			fj := FailureJSON{Path: f.Path.String(), Attribute: smpAttrName(f.Attr), Modifier: f.Mod, Error: f.Err.Error()}
			if f.Node != 0 {
				fj.Node = f.Node.String()
			}
			if f.Via != nil {
				fj.Via = &PeerJSON{GUID: f.Via.Node.GUID.String(), Port: f.Via.Num, Description: f.Via.Node.Description()}
			}
			if f.Probe {
				doc.Unreachable = append(doc.Unreachable, fj)
			} else {
				doc.Failures = append(doc.Failures, fj)
			}
		}
	}
	return doc
}

func smpAttrName(id uint16) string {
	if s, ok := iba.LookupAttr(iba.ClassSubnMgt, id); ok {
		return s.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// writeDot prints the subnet as an undirected Graphviz graph: a node per
// IB node (boxes for switches), an edge per link labelled with its ports
// and rate.
func writeDot(w io.Writer, s *subnet.Subnet, o subnet.TopologyOptions) error {
	var b bytes.Buffer
	b.WriteString("graph subnet {\n\tnode [fontname=\"Helvetica\"];\n")
	name := func(n *subnet.Node) string {
		if o.NodeName != nil {
			return o.NodeName(n.GUID, n.Description())
		}
		return n.Description()
	}
	for _, n := range s.Nodes() {
		shape := "ellipse"
		if n.Type == iba.NodeTypeSwitch {
			shape = "box"
		}
		label := dotEscape(name(n)) + `\n` + n.GUID.String()
		if ep := n.EndPort(); ep != nil && ep.BaseLID != 0 {
			label += fmt.Sprintf(`\nlid %d`, ep.BaseLID)
		}
		fmt.Fprintf(&b, "\t%q [shape=%s, label=\"%s\"];\n", n.GUID.String(), shape, label)
	}
	for _, n := range s.Nodes() {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || p.Num == 0 {
				continue
			}
			r := p.Remote
			if n.GUID > r.Node.GUID || (n.GUID == r.Node.GUID && p.Num > r.Num) {
				continue // each link once
			}
			lanes, speed := p.Rate()
			fmt.Fprintf(&b, "\t%q -- %q [taillabel=\"%d\", headlabel=\"%d\", label=\"%dx %v\"];\n",
				n.GUID.String(), r.Node.GUID.String(), p.Num, r.Num, lanes, speed)
		}
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// dotEscape quotes text for a Graphviz string: only the quote and the
// backslash are special there.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
