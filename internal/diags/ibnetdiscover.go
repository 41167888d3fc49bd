package diags

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibnetdiscover", make: newIBNetDiscover})
}

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
			return incomplete(nil, r.lost())
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
