package diags

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
	"github.com/rdmakit/rdmakit/traceroute"
)

func init() {
	register(command{name: "ibtracert", make: newIBTracert})
}

// ibtracert resolves its addresses, has package traceroute follow the
// forwarding tables as infiniband-diags' ibtracert.c does, and prints the
// route, its messages and its failures as the C tool does.

// TraceResult is what ibtracert found: one route per source and
// destination pair (several with --ports-file).
type TraceResult struct {
	Routes []*TraceRoute `json:"routes"`
	// PortsFile and Pairs are --ports-file's file and the pairs read.
	PortsFile string `json:"portsFile,omitempty"`
	Pairs     int    `json:"pairs,omitempty"`
}

// TraceRoute is the path from a source to a destination port, unicast or
// through a multicast group's spanning tree.
type TraceRoute struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	MLID        int    `json:"mlid,omitempty"`
	// Hops are the ports in order: the source, each port entered, the
	// destination.
	Hops  []TraceHop `json:"hops"`
	Error string     `json:"error,omitempty"`
}

// TraceHop is one port on a route: how it was left (OutPort of the node
// before) and where it arrived.
type TraceHop struct {
	Kind     string `json:"kind"` // from, hop, to
	OutPort  *int   `json:"outPort,omitempty"`
	NodeType string `json:"nodeType"`
	NodeGUID string `json:"nodeGuid"`
	PortGUID string `json:"portGuid,omitempty"`
	PortNum  int    `json:"portNum"`
	LID      int    `json:"lid"`
	LastLID  int    `json:"lastLid"`
	Name     string `json:"name"`
}

type ibtracertFlags struct {
	guid        bool
	lid         bool
	direct      bool
	reverse     bool
	force       bool
	brief       bool
	mlid        string
	nodeNameMap string
	portsFile   string
	df          discoverFlags
}

func newIBTracert(e *Env) *cobra.Command {
	var f ibtracertFlags
	c := &cobra.Command{
		Use:   "ibtracert [flags] [<src-addr>] <dest-addr>",
		Short: "trace the unicast or multicast route between two ports (infiniband-diags ibtracert)",
		Long: `ibtracert follows the switches' forwarding tables from a source port to a
destination port and prints every hop, as infiniband-diags' ibtracert does.
With one address it traces from the local port (python-rdma's ibtracert).

Examples:
  ibtracert 4 16                      # the path between LIDs 4 and 16
  ibtracert -n 4 16                   # the same, in the simple format
  ibtracert -G 0x8f1040396522d 0x002c9000100d051   # by port GUID
  ibtracert -m 0xc000 4 16            # the multicast path of MLID 0xc000
  ibtracert 16                        # from the local port to LID 16
  ibtracert --ports-file pairs        # one pair per line

An address is a LID, a port GUID (-G, or 0x and 16 hex digits), a GID, a
directed route (-D, or a list of ports), a python-rdma path spec or a
node's name or description. With --discovery or --cache (python-rdma) the
addresses are looked up in the discovered (or cached) subnet; the route is
always read from the switches.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBTracert(e, &f, cmd.Flags().Changed("mlid"), args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.force, "force", "f", false, "force")
	fl.BoolVarP(&f.brief, "no_info", "n", false, "simple format")
	fl.StringVarP(&f.mlid, "mlid", "m", "", "multicast trace of the mlid")
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVar(&f.portsFile, "ports-file", "", "port pairs file")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument")
	fl.BoolVarP(&f.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument: the route traced goes to the LID of the port a directed route reaches (python-rdma)")
	fl.BoolVarP(&f.reverse, "reverse", "r", false, "swap source and destination (python-rdma)")
	f.df.register(c, false)
	return c
}

// traceFailed is ibtracert's IBEXIT: exit status 255.
type traceFailed struct{ msg string }

func (e *traceFailed) Error() string { return e.msg }
func (e *traceFailed) ExitCode() int { return 255 }

// errTraceFailed is a get_route that failed; its warnings are on stderr.
var errTraceFailed = errors.New("route not found")

func runIBTracert(e *Env, f *ibtracertFlags, multicast bool, args []string) error {
	if f.portsFile == "" && (len(args) < 1 || len(args) > 2) {
		return usagef("want [<src-addr>] <dest-addr>")
	}
	if (f.guid && f.lid) || (f.direct && (f.guid || f.lid)) {
		return usagef("-D, -G and -L exclude each other")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return err
	}
	s.names = names
	tr := &tracer{e: e, s: s, f: f, names: names, dump: 2, out: e.Stdout}
	tr.tr = traceroute.Tracer{Getter: s, Force: f.force}
	if e.JSON {
		tr.out = io.Discard
	}
	if f.brief {
		tr.dump = 1
	}
	if tr.tr.Timeout, err = e.madTimeout(); err != nil {
		return err
	}
	if f.df.cache != "" || f.df.cmd.Flags().Changed("discovery") {
		// python-rdma's discovery options: the addresses are looked up in
		// the subnet; the route is still read from the switches.
		if tr.sn, tr.rep, err = e.discoverWith(s, f.df, false); err != nil {
			return err
		}
	}
	if multicast {
		tr.multicast = true
		tr.mlid = int(int32(cStrtoul(f.mlid)))
	}
	res := &TraceResult{}
	fail := func(msg string) error {
		if e.JSON {
			if err := e.writeJSON("ibtracert", res); err != nil {
				return err
			}
		}
		return &traceFailed{msg}
	}
	if f.portsFile == "" {
		src, dst := "", args[0]
		if len(args) == 2 {
			src, dst = args[0], args[1]
		}
		if f.reverse {
			if src == "" {
				src = fmt.Sprint(s.local.LID)
			}
			src, dst = dst, src
		}
		rt, err := tr.getRoute(src, dst)
		res.Routes = append(res.Routes, rt)
		if err != nil {
			return traceErr(err, fail, "Failed to get route information")
		}
	} else {
		file, err := os.Open(f.portsFile)
		if err != nil {
			return fail(fmt.Sprintf("cannot open ports-file %s", f.portsFile))
		}
		defer file.Close()
		res.PortsFile = f.portsFile
		line := 0
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 0, 4096), maxPortsLine)
		for sc.Scan() {
			line++
			src, dst, ok, why := portsFileLine(sc.Text())
			if why != "" {
				return fail(fmt.Sprintf("ports-file, %s, at line %d contains bad data: %s", f.portsFile, line, why))
			}
			if !ok {
				continue
			}
			res.Pairs++
			rt, err := tr.getRoute(src, dst)
			res.Routes = append(res.Routes, rt)
			if err != nil {
				return traceErr(err, fail, fmt.Sprintf("Failed to get route information at line %d", line))
			}
		}
		switch err := sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			return fail(fmt.Sprintf("ports-file, %s, at line %d contains bad data: longer than %d bytes", f.portsFile, line+1, maxPortsLine))
		case err != nil:
			return fail(fmt.Sprintf("ports-file, %s: reading after line %d: %v", f.portsFile, line, err))
		}
		fmt.Fprintf(tr.out, "%d lid/guid pairs processed from %s\n", res.Pairs, f.portsFile)
	}
	if e.JSON {
		return e.writeJSON("ibtracert", res)
	}
	return nil
}

// traceErr passes a usage error on, and makes any other failure msg.
func traceErr(err error, fail func(string) error, msg string) error {
	var ue *UsageError
	if errors.As(err, &ue) {
		return err
	}
	return fail(msg)
}

// maxPortsLine bounds a line of --ports-file: two addresses and perhaps a
// comment.
const maxPortsLine = 64 << 10

// portsFileLine reads one line of --ports-file: blank or a comment (ok
// false), or a source and a destination address, which a comment may
// follow. Where the C tool reads the first two words of any line (and cuts
// each at 20 characters), anything else is bad data, why says what.
func portsFileLine(text string) (src, dst string, ok bool, why string) {
	if strings.IndexByte(text, 0) >= 0 {
		return "", "", false, "binary data (a NUL byte)"
	}
	text, _, _ = strings.Cut(text, "#")
	fields := strings.Fields(text)
	switch len(fields) {
	case 0:
		return "", "", false, ""
	case 2:
		return fields[0], fields[1], true, ""
	}
	return "", "", false, fmt.Sprintf("%d words, want a source and a destination address", len(fields))
}

// tracer is one ibtracert run: its flags, the address resolution and the
// renderer of the routes traceroute.Tracer finds.
type tracer struct {
	e     *Env
	s     *session
	f     *ibtracertFlags
	names *namemap.Map
	tr    traceroute.Tracer
	// sn, with --discovery or --cache, is the subnet targets are looked
	// up in (rep how its discovery went).
	sn        *subnet.Subnet
	rep       *subnet.DiscoverReport
	dump      int
	multicast bool
	mlid      int
	out       io.Writer
}

func (t *tracer) warn(fn, format string, a ...any) {
	fmt.Fprintf(t.e.Stderr, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, a...))
}

// trNodeType is ibtracert's node_type_str.
func trNodeType(t iba.NodeType) string {
	switch t {
	case 0:
		return "???"
	case iba.NodeTypeCA:
		return "ca"
	case iba.NodeTypeSwitch:
		return "switch"
	case iba.NodeTypeRouter:
		return "router"
	case 4:
		return "iwarp rnic"
	}
	return "???"
}

// trHopKinds are the JSON kinds of traceroute's hops; a multicast
// search's circle is "err: circle discovered at", as ibtracert prints it.
var trHopKinds = map[traceroute.HopKind]string{traceroute.From: "from", traceroute.Through: "hop", traceroute.To: "to"}

const trCircle = "ERR: circle discovered at"

func (t *tracer) jsonHop(kind string, h traceroute.Hop) TraceHop {
	j := TraceHop{Kind: kind, NodeType: trNodeType(h.NodeType), NodeGUID: fmt.Sprintf("0x%016x", uint64(h.NodeGUID)),
		PortNum: h.PortNum, LID: h.LID, LastLID: h.LastLID(), Name: t.names.Name(h.NodeGUID, h.Desc)}
	if kind == trHopKinds[traceroute.Through] {
		out := h.OutPort
		j.OutPort = &out
	}
	if h.PortGUID != 0 {
		j.PortGUID = fmt.Sprintf("0x%016x", uint64(h.PortGUID))
	}
	return j
}

// render prints a route as ibtracert does (dump_endnode and dump_route for
// a unicast route, dump_mcpath for a multicast one, after the circles its
// search met), its warnings on stderr, and records its hops for --json.
func (t *tracer) render(r *traceroute.Route, rt *TraceRoute) {
	for _, h := range r.Circles {
		rt.Hops = append(rt.Hops, t.jsonHop(strings.ToLower(trCircle), h))
		t.endnode(2, trCircle, h)
	}
	for _, h := range r.Hops {
		rt.Hops = append(rt.Hops, t.jsonHop(trHopKinds[h.Kind], h))
		name := t.names.Name(h.NodeGUID, h.Desc)
		switch {
		case h.Kind != traceroute.Through && t.multicast:
			prompt := "From"
			if h.Kind == traceroute.To {
				prompt = "To"
			}
			fmt.Fprintf(t.out, "%s %s 0x%x port %d lid %d-%d \"%s\"\n", prompt, trNodeType(h.NodeType), uint64(h.NodeGUID), h.PortNum, h.LID, h.LastLID(), name)
		case h.Kind == traceroute.From:
			t.endnode(t.dump, "From", h)
		case h.Kind == traceroute.To:
			t.endnode(t.dump, "To", h)
		case t.multicast && t.dump == 1:
			fmt.Fprintf(t.out, "[%d] -> %s {0x%016x}[%d]\n", h.OutPort, trNodeType(h.NodeType), uint64(h.NodeGUID), h.PortNum)
		case t.multicast:
			fmt.Fprintf(t.out, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", h.OutPort, trNodeType(h.NodeType), uint64(h.NodeGUID), h.PortNum, h.LID, name)
		case t.dump == 1:
			fmt.Fprintf(t.out, "[%d] -> {0x%016x}[%d]\n", h.OutPort, uint64(h.PortGUID), h.PortNum)
		default:
			fmt.Fprintf(t.out, "[%d] -> %s port {0x%016x}[%d] lid %d-%d \"%s\"\n", h.OutPort, trNodeType(h.NodeType),
				uint64(h.PortGUID), h.PortNum, h.LID, h.LastLID(), name)
		}
	}
	for _, w := range r.Warnings {
		t.warn(w.Func, "%s", w.Msg)
	}
}

// endnode is dump_endnode.
func (t *tracer) endnode(dump int, prompt string, h traceroute.Hop) {
	if dump == 1 {
		fmt.Fprintf(t.out, "%s {0x%016x}[%d]\n", prompt, uint64(h.NodeGUID), h.PortNum)
		return
	}
	fmt.Fprintf(t.out, "%s %s {0x%016x} portnum %d lid %d-%d \"%s\"\n", prompt, trNodeType(h.NodeType), uint64(h.NodeGUID),
		h.PortNum, h.LID, h.LastLID(), t.names.Name(h.NodeGUID, h.Desc))
}

// resolve is resolve_portid_str for ibtracert's addresses, to a LID: a
// LID, a port GUID (-G, or 0x and 16 hex digits), a GID, a directed route
// (-D, or a list of ports: to the LID of the port it reaches), a path spec
// or a node's name (session.parseTarget).
func (t *tracer) resolve(arg string) (uint16, error) {
	a := &addrFlags{guid: t.f.guid, lid: t.f.lid, direct: t.f.direct}
	if t.sn != nil {
		p, err := findInSubnet(t.sn, t.rep, arg, a, t.names)
		if err != nil {
			return 0, err
		}
		if p.BaseLID < 1 || p.BaseLID > subnet.MaxUnicastLID {
			return 0, fmt.Errorf("%s has no unicast LID", arg)
		}
		return p.BaseLID, nil
	}
	p, err := t.s.parseTarget(arg, a)
	if err != nil {
		return 0, err
	}
	lid, err := t.s.res.LID(t.e.Ctx, p)
	if err != nil {
		return 0, err
	}
	if lid < 1 || lid > subnet.MaxUnicastLID {
		return 0, fmt.Errorf("LID %d is not a unicast LID", lid)
	}
	return lid, nil
}

// getRoute is get_route: the addresses resolved, the route traced and
// printed; with srcArg empty the route starts at the local port
// (python-rdma's one-argument form).
func (t *tracer) getRoute(srcArg, dstArg string) (*TraceRoute, error) {
	rt := &TraceRoute{Source: srcArg, Destination: dstArg}
	if srcArg == "" {
		rt.Source = "local port " + t.s.local.Name
	}
	failed := func(format string, a ...any) (*TraceRoute, error) {
		t.warn("get_route", format, a...)
		rt.Error = fmt.Sprintf(format, a...)
		return rt, errTraceFailed
	}
	var src uint16
	if srcArg != "" {
		var err error
		if src, err = t.resolve(srcArg); err != nil {
			return failed("can't resolve source port %s", srcArg)
		}
	}
	dst, err := t.resolve(dstArg)
	if err != nil {
		return failed("can't resolve destination port %s", dstArg)
	}
	var r *traceroute.Route
	if t.multicast {
		r, err = t.tr.Multicast(t.e.Ctx, src, dst, t.mlid)
		rt.MLID = r.MLID
	} else {
		r, err = t.tr.Unicast(t.e.Ctx, src, dst)
	}
	t.render(r, rt)
	var te *traceroute.Error
	if errors.As(err, &te) {
		rt.Error = te.Msg
		return rt, errTraceFailed
	}
	return rt, err
}
