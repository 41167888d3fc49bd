package diags

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibfindnodesusing", aliases: []string{"ibfindnodesusing.pl"}, make: newIBFindNodesUsing})
}

// FindNodesResult is ibfindnodesusing's --json document: a switch port,
// the port at the other end of its link, and the end ports whose LIDs
// each side's linear forwarding table (IBA 18.2.4.3.2) sends over the
// link.
type FindNodesResult struct {
	Switch LinkEndJSON `json:"switch"`
	// Peer is nil when the port has no link.
	Peer *LinkEndJSON `json:"peer"`
	// Out are routed out of the switch port towards the peer (the
	// script's "==>>" list); In are routed out of the peer's port back
	// towards the switch ("<<=="), empty unless the peer is a switch.
	Out []RoutedPortJSON `json:"out"`
	In  []RoutedPortJSON `json:"in"`
	// All is --all: switches and routers are listed too, not only CAs.
	All bool `json:"all"`
	// Errors are forwarding table blocks that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// LinkEndJSON is one end of the link.
type LinkEndJSON struct {
	GUID        string `json:"guid"` // node GUID
	Port        int    `json:"port"`
	Description string `json:"description"`
	NodeType    string `json:"nodeType"`
}

// RoutedPortJSON is one LID of a forwarding table that leaves through the
// port, with the end port it belongs to.
type RoutedPortJSON struct {
	LID      int    `json:"lid"`
	PortGUID string `json:"portGuid"`
	NodeType string `json:"nodeType"`
	Name     string `json:"name"`
}

// The script reads `ibnetdiscover -g` text (IBswcountlimits.pm's
// get_link_ends and its own main). Ours writes that text from the
// discovered subnet and reads it with the same patterns, so that the
// switch and peer are named exactly as the script names them.
var (
	fnuSwitchMain = regexp.MustCompile(`^Switch.*"S-(.*)"\s+# (.*) port.*`)
	fnuSwitchEnds = regexp.MustCompile(`^Switch.*"S-(.*)"\s+#.*"(.*)".* lid (\d+).*`)
	// Port lines: plain, with a local [ext N], with a remote [ext N], and
	// with both. Groups: local port, remote GUID, remote port, remote
	// description; later patterns win, as in the script.
	fnuPortLines = []struct {
		re                    *regexp.Regexp
		loc, guid, port, desc int
	}{
		{regexp.MustCompile(`^\[(\d+)\]\s+"[HSR]-(.+)"\[(\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 2, 3, 5},
		{regexp.MustCompile(`^\[(\d+)\]\[ext (\d+)\]\s+"[HSR]-(.+)"\[(\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 3, 4, 6},
		{regexp.MustCompile(`^\[(\d+)\]\s+"[HSR]-(.+)"\[(\d+)\]\[ext (\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 2, 3, 6},
		{regexp.MustCompile(`^\[(\d+)\]\[ext (\d+)\]\s+"[HSR]-(.+)"\[(\d+)\]\[ext (\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 3, 4, 7},
	}
)

// fnuLinkEnd is the far end of a switch port as the script records it.
type fnuLinkEnd struct{ guid, port, desc string }

// fnuTopology is what the script learns from the topology text.
type fnuTopology struct {
	switches []fnuSwitch                      // in the order of the text
	ends     map[string]map[string]fnuLinkEnd // "0x"+switch GUID -> port -> far end
}

type fnuSwitch struct{ guid, desc string }

// parseFNUTopology reads the topology text (ibnetdiscover -g) as the
// script does; a line longer than 1 MiB, which no topology has, is an
// error rather than the silent end of the text.
func parseFNUTopology(text []byte) (*fnuTopology, error) {
	t := &fnuTopology{ends: map[string]map[string]fnuLinkEnd{}}
	inSwitch := false
	guid := ""
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if m := fnuSwitchMain.FindStringSubmatch(line); m != nil {
			t.switches = append(t.switches, fnuSwitch{m[1], m[2]})
		}
		if m := fnuSwitchEnds.FindStringSubmatch(line); m != nil {
			guid, inSwitch = m[1], true
		}
		if inSwitch {
			var end *fnuLinkEnd
			loc := ""
			for _, pl := range fnuPortLines {
				if m := pl.re.FindStringSubmatch(line); m != nil {
					loc = m[pl.loc]
					end = &fnuLinkEnd{"0x" + m[pl.guid], m[pl.port], m[pl.desc]}
				}
			}
			if end != nil {
				k := "0x" + guid
				if t.ends[k] == nil {
					t.ends[k] = map[string]fnuLinkEnd{}
				}
				t.ends[k][loc] = *end
			}
		}
		if strings.HasPrefix(line, "Ca") || strings.HasPrefix(line, "Rt") {
			inSwitch = false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("topology text, line %d: %w", n+1, err)
	}
	return t, nil
}

// fnuFormatGUID is the script's format_guid: lower case, and what follows
// "0x" (or the whole argument) zero-padded to 16 characters, which is why
// the script cannot find a switch by a name shorter than 16 characters.
func fnuFormatGUID(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'F' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
	if i := strings.Index(s, "0x"); i >= 0 {
		s = s[i+2:]
	}
	if len(s) < 16 {
		s = strings.Repeat("0", 16-len(s)) + s
	}
	return "0x" + s
}

// perlNumber is the number Perl reads from a string: leading white space,
// a decimal number with fraction and exponent, else 0 ("0x10" is 0).
var perlNumberRE = regexp.MustCompile(`^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)`)

func perlNumber(s string) float64 {
	if m := perlNumberRE.FindStringSubmatch(s); m != nil {
		f, err := strconv.ParseFloat(m[1], 64)
		if err == nil || errors.Is(err, strconv.ErrRange) {
			return f
		}
		return 0
	}
	t := strings.ToLower(strings.TrimLeft(s, " \t\n\r\f\v"))
	t = strings.TrimPrefix(strings.TrimPrefix(t, "+"), "-")
	switch {
	case strings.HasPrefix(t, "inf"):
		if strings.HasPrefix(strings.TrimLeft(s, " \t\n\r\f\v"), "-") {
			return math.Inf(-1)
		}
		return math.Inf(1)
	case strings.HasPrefix(t, "nan"):
		return math.NaN()
	}
	return 0
}

var fnuNameDigits = regexp.MustCompile(`(?s)^(.*?)(\d*)$`)

// fnuHostLine is the line the script prints for a list of host names: its
// compress_hostlist of the list (which starts with an undefined element,
// named "" here), split at commas and joined by spaces. Names that share
// a prefix and differ in consecutive trailing numbers become a range
// ("H-1-3"); every name after a number that does not continue the current
// range starts a new one, and the leading empty element makes a leading
// space whenever a name follows.
func fnuHostLine(names []string) string {
	type item struct{ prefix, digits string }
	items := []item{{"", ""}}
	for _, n := range names {
		m := fnuNameDigits.FindStringSubmatch(n)
		items = append(items, item{m[1], m[2]})
	}
	// sortn: by the trailing number, 0 when there is none; Perl's merge
	// sort keeps the order of equal keys.
	sort.SliceStable(items, func(i, j int) bool {
		return perlNumber(items[i].digits) < perlNumber(items[j].digits)
	})
	// comp2: ranges per prefix. A range continues when its last number
	// is one less than the next one; a range that has no number yet
	// counts as 0 there, so that "1" continues an empty first range.
	groups := map[string][][]string{}
	cur := map[string]int{}
	for _, it := range items {
		g := groups[it.prefix]
		i := cur[it.prefix]
		for len(g) <= i {
			g = append(g, nil)
		}
		last := 0.0
		if r := g[i]; len(r) > 0 {
			last = perlNumber(r[len(r)-1])
		}
		if last != perlNumber(it.digits)-1 {
			i++
			cur[it.prefix] = i
			for len(g) <= i {
				g = append(g, nil)
			}
		}
		g[i] = append(g[i], it.digits)
		groups[it.prefix] = g
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var list []string
	for _, k := range keys {
		for _, r := range groups[k] {
			switch len(r) {
			case 0:
			case 1:
				list = append(list, k+r[0])
			default:
				list = append(list, k+r[0]+"-"+r[len(r)-1])
			}
		}
	}
	// split(",", ...) drops trailing empty fields.
	fields := strings.Split(strings.Join(list, ","), ",")
	for len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	return strings.Join(fields, " ")
}

type findNodesFlags struct {
	df   discoverFlags
	all  bool
	addr addrFlags
}

func newIBFindNodesUsing(e *Env) *cobra.Command {
	f := &findNodesFlags{}
	c := &cobra.Command{
		Use:   "ibfindnodesusing [flags] <switch_guid|switch_name> <port>",
		Short: "find the nodes whose routes use a switch port (infiniband-diags ibfindnodesusing)",
		Long: `ibfindnodesusing discovers the subnet, reads the linear forwarding tables
of the switch and of the switch at the other end of the port's link, and
prints the CAs whose LIDs each of them sends over that link: first those
routed out of the port ("==>>"), then those routed back into it ("<<=="),
names compressed to ranges as infiniband-diags' script prints them.

The switch is given by its node GUID (hex, "0x" optional) or, unlike the
script (which pads every argument to a GUID and so never matches a name),
by its node description. -R (recalculate) is accepted: the subnet is
always discovered afresh. From python-rdma: --all lists switches and
routers too, -v lists every end port with its GUID and LID, one per line.

Examples:
  ibfindnodesusing 0x0002c90300a00001 5
  ibfindnodesusing -v "leaf-1" 5`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("want <switch_guid|switch_name> <port>")
			}
			return runIBFindNodesUsing(e, f, args[0], args[1])
		},
	}
	fl := c.Flags()
	fl.BoolP("recalculate", "R", false, "recalculate the ibnetdiscover information (always done)")
	fl.BoolVarP(&f.all, "all", "a", false, "list all routed end ports, not just CAs (python-rdma)")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "the switch is a directed route (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "the switch is a LID (python-rdma)")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "the switch is a GUID (python-rdma)")
	f.df.register(c, false)
	return c
}

func runIBFindNodesUsing(e *Env, f *findNodesFlags, target, portArg string) error {
	names, err := loadNames("")
	if err != nil {
		return err
	}
	m, err := e.discoveryMethod(&f.df)
	if err != nil {
		return err
	}
	sess, err := e.open()
	if err != nil {
		return err
	}
	defer sess.Close()
	f.df.progressBar = true
	r, err := e.discoverCached(sess, &f.df, m, nil)
	if err != nil {
		return &exitError{err, 1}
	}
	e.warnFailures("ibfindnodesusing", r)
	sn, lost := r.s, r.lost()
	opt := subnet.TopologyOptions{Group: true}
	if names != nil {
		opt.NodeName = func(g iba.GUID, desc string) string { return names.NameBytes(g, []byte(desc)) }
	}
	var text bytes.Buffer
	if err := sn.WriteTopology(&text, opt); err != nil {
		return &exitError{err, 1}
	}
	topo, err := parseFNUTopology(text.Bytes())
	if err != nil {
		return &exitError{err, 1}
	}

	want := fnuFormatGUID(target)
	descRE := regexp.MustCompile(`.*` + regexp.QuoteMeta(want) + `\s+.*`)
	var sw *fnuSwitch
	byForm := f.addr.direct || f.addr.lid || f.addr.guid
	for i, s := range topo.switches {
		if !byForm && ("0x"+s.guid == want || descRE.MatchString(s.desc)) {
			sw = &topo.switches[i]
			break
		}
	}
	if sw == nil && !byForm {
		sw = fnuSwitchByName(sn, topo, names, target)
	}
	if sw == nil {
		// Every other target form: a LID, directed route, GID, path spec.
		p, err := findInSubnet(sn, r.report, target, &f.addr, names)
		if err != nil && byForm {
			return &exitError{err, 1}
		}
		for i := range topo.switches {
			if g, _ := strconv.ParseUint(topo.switches[i].guid, 16, 64); err == nil && iba.GUID(g) == p.Node.GUID {
				sw = &topo.switches[i]
				break
			}
		}
	}
	if sw == nil {
		if !e.JSON {
			fmt.Fprintf(e.Stdout, "Switch \"%s\" not found\n   Try running with the \"-R\" or \"-P\" option.\n", want)
		}
		return incomplete(&exitError{fmt.Errorf("switch %q not found", target), 1}, lost)
	}
	guid, _ := strconv.ParseUint(sw.guid, 16, 64)
	node := sn.Node(iba.GUID(guid))
	if node == nil {
		return &exitError{fmt.Errorf("switch 0x%s is in the topology but not in the subnet", sw.guid), 1}
	}
	port := perlNumber(portArg)
	end, linked := topo.ends["0x"+sw.guid][portArg]

	res := &FindNodesResult{All: f.all, Out: []RoutedPortJSON{}, In: []RoutedPortJSON{},
		Switch: LinkEndJSON{GUID: "0x" + sw.guid, Port: int(port), Description: node.Description(), NodeType: madNodeType(node.Type)}}
	var peer *subnet.Node
	var peerPort float64
	if linked {
		g, _ := strconv.ParseUint(strings.TrimPrefix(end.guid, "0x"), 16, 64)
		peer = sn.Node(iba.GUID(g))
		peerPort = perlNumber(end.port)
		pj := &LinkEndJSON{GUID: end.guid, Port: int(peerPort), Description: end.desc}
		if peer != nil {
			pj.Description, pj.NodeType = peer.Description(), madNodeType(peer.Type)
		}
		res.Peer = pj
	}

	// Both tables at once; a peer that is not a switch has none (the
	// script's ibroute fails on it and lists nothing).
	switches := []*subnet.Node{node}
	if peer != nil && peer.Type == iba.NodeTypeSwitch {
		switches = append(switches, peer)
	}
	tables, err := readFabricTables(e.Ctx, sess, sn, switches, &ftRequest{o: ftOptions{names: names}})
	if err != nil {
		return err
	}
	res.Out = fnuRouted(tables[0], port, f.all)
	if len(tables) > 1 {
		res.In = fnuRouted(tables[1], peerPort, f.all)
	}
	for _, t := range tables {
		res.Errors = append(res.Errors, t.Errors...)
	}

	if e.JSON {
		if err := e.writeJSON("ibfindnodesusing", res); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		desc := sw.desc
		head := func(arrow string) {
			fmt.Fprintf(&b, "0x%s %s (%s)  %s  %s %s (%s)\n", sw.guid, portArg, desc, arrow, end.guid, end.port, end.desc)
		}
		list := func(ps []RoutedPortJSON) {
			if e.Verbose > 0 {
				for _, p := range ps {
					fmt.Fprintf(&b, " %s lid %d \"%s\"\n", p.PortGUID, p.LID, p.Name)
				}
				return
			}
			n := make([]string, len(ps))
			for i, p := range ps {
				n[i] = p.Name
			}
			b.WriteString(fnuHostLine(n) + "\n")
		}
		head("==>>")
		list(res.Out)
		b.WriteString("\n")
		head("<<==")
		list(res.In)
		if _, err := fmt.Fprint(e.Stdout, b.String()); err != nil {
			return err
		}
	}
	var failed error
	if len(res.Errors) > 0 {
		for _, m := range res.Errors {
			fmt.Fprintln(e.Stderr, m)
		}
		failed = &exitError{fmt.Errorf("%d forwarding table blocks could not be read", len(res.Errors)), 1}
	}
	return incomplete(failed, lost)
}

// fnuSwitchByName finds a switch by its name (node name map or node
// description), when exactly one switch has it.
func fnuSwitchByName(sn *subnet.Subnet, topo *fnuTopology, names *namemap.Map, name string) *fnuSwitch {
	var found *subnet.Node
	for _, n := range sn.NodesOfType(iba.NodeTypeSwitch) {
		if names.NameBytes(n.GUID, n.Desc[:]) == name || n.Description() == name {
			if found != nil {
				return nil
			}
			found = n
		}
	}
	if found == nil {
		return nil
	}
	g := fmt.Sprintf("%016x", uint64(found.GUID))
	for i, s := range topo.switches {
		if s.guid == g {
			return &topo.switches[i]
		}
	}
	return nil
}

// fnuRouted lists the entries of t that leave through port: the CAs, as
// the script picks "Channel Adapter" lines out of ibroute's output (a LID
// past the base of an LMC range is no such line), or every end port with
// all.
func fnuRouted(t *ForwardingTable, port float64, all bool) []RoutedPortJSON {
	out := []RoutedPortJSON{}
	if t == nil {
		return out
	}
	for _, en := range t.Unicast {
		if float64(en.Port) != port || en.NodeType == "" || (!all && en.NodeType != "Channel Adapter") {
			continue
		}
		out = append(out, RoutedPortJSON{LID: en.LID, PortGUID: en.PortGUID, NodeType: en.NodeType, Name: en.NodeName})
	}
	return out
}
