package diags

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "subnet_diff", aliases: []string{"ibdiscover.pl"}, make: newSubnetDiff})
}

// SubnetDiffResult is python-rdma's subnet_diff comparison: sets of end
// ports, nodes and links, the rates of the links both have, and the LID
// assignment. "Extra" lists what the current subnet has and the reference
// lacks, "Missing" the reverse.
type SubnetDiffResult struct {
	EndPorts SetDiff      `json:"end_ports"`
	Nodes    SetDiff      `json:"nodes"`
	Links    LinkDiff     `json:"links"`
	Rates    []RateChange `json:"rate_changes"`
	LIDs     LIDDiff      `json:"lids"`
}

// Differ says whether the subnets differ in anything compared.
func (r *SubnetDiffResult) Differ() bool {
	return len(r.EndPorts.Extra)+len(r.EndPorts.Missing)+len(r.Nodes.Extra)+len(r.Nodes.Missing)+
		len(r.Links.Extra)+len(r.Links.Missing)+len(r.Rates)+len(r.LIDs.Changes) > 0
}

// errSubnetsDiffer is subnet_diff's exit status 1, not a failure to
// report.
var errSubnetsDiffer = errors.New("the subnets differ")

// SetDiff compares two sets of GUIDs.
type SetDiff struct {
	Current   int      `json:"current"`
	Reference int      `json:"reference"`
	Extra     []string `json:"extra"`
	Missing   []string `json:"missing"`
}

// LinkEnd is one end of a link: the end port GUID of its node (a switch's
// port 0 GUID) and the port number.
type LinkEnd struct {
	GUID iba.GUID `json:"guid"`
	Port int      `json:"port"`
}

// Link is a link by its two ends, the greater first.
type Link [2]LinkEnd

// LinkDiff compares the links.
type LinkDiff struct {
	Current   int    `json:"current"`
	Reference int    `json:"reference"`
	Extra     []Link `json:"extra"`
	Missing   []Link `json:"missing"`
}

// RateChange is a link whose width or speed differ.
type RateChange struct {
	Link      Link   `json:"link"`
	Current   string `json:"current"`
	Reference string `json:"reference"`
}

// LIDChange is a LID owned by different end ports ("" for none).
type LIDChange struct {
	LID       uint16 `json:"lid"`
	Current   string `json:"current"`
	Reference string `json:"reference"`
}

// LIDDiff compares the LID assignments.
type LIDDiff struct {
	Current   int         `json:"current"`
	Reference int         `json:"reference"`
	Changes   []LIDChange `json:"changes"`
}

func newSubnetDiff(e *Env) *cobra.Command {
	var df discoverFlags
	c := &cobra.Command{
		Use:   "subnet_diff REFERENCE [CURRENT]",
		Short: "compare the subnet with a reference (cache or topology file)",
		Long: `subnet_diff compares the current subnet with a reference: end ports, nodes,
links and their rates, and LIDs, as python-rdma's subnet_diff does.
REFERENCE and CURRENT are libibnetdisc caches (ibnetdiscover --cache), our
caches or topology files; without CURRENT the subnet is discovered. The
exit status is 0 when they are the same, 1 when they differ, as diff's.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := loadSubnetFile(args[0])
			if err != nil {
				return err
			}
			var cur *subnet.Subnet
			var lost error
			if len(args) == 2 {
				if cur, err = loadSubnetFile(args[1]); err != nil {
					return err
				}
			} else {
				df.progressBar = true
				r, err := e.discover(&df, nil)
				if err != nil {
					return err
				}
				e.warnFailures("subnet_diff", r)
				cur, lost = r.s, r.lost()
			}
			res := compareSubnets(ref, cur)
			if e.JSON {
				err = e.writeJSON("subnet_diff", res)
			} else {
				err = renderSubnetDiff(e.Stdout, res)
			}
			if err == nil && res.Differ() {
				// As diff(1): 1 when the subnets differ.
				err = &exitError{errSubnetsDiffer, 1}
			}
			return incomplete(err, lost)
		},
	}
	df.register(c, false)
	return c
}

// subnetFacts is what subnet_diff compares of one subnet.
type subnetFacts struct {
	endPorts map[iba.GUID]bool
	nodes    map[iba.GUID]bool
	links    map[Link]*subnet.Port // by link, the port at its first end
	lids     map[uint16]iba.GUID
}

func endPortGUID(p *subnet.Port) iba.GUID {
	if p.Node.Type == iba.NodeTypeSwitch {
		return p.Node.NodeInfo().PortGUID
	}
	return p.GUID
}

func factsOf(s *subnet.Subnet) *subnetFacts {
	f := &subnetFacts{endPorts: map[iba.GUID]bool{}, nodes: map[iba.GUID]bool{}, links: map[Link]*subnet.Port{}, lids: map[uint16]iba.GUID{}}
	for _, n := range s.Nodes() {
		f.nodes[n.GUID] = true
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			end := n.Type != iba.NodeTypeSwitch || p.Num == 0
			if end && p.GUID != 0 && (p.Num != 0 || n.Type == iba.NodeTypeSwitch) {
				f.endPorts[p.GUID] = true
				if first, last := p.LIDs(); first != 0 {
					for lid := uint32(first); lid <= uint32(last); lid++ {
						f.lids[uint16(lid)] = p.GUID
					}
				}
			}
			if r := p.Remote; r != nil && p.Num != 0 {
				a, b := LinkEnd{endPortGUID(p), p.Num}, LinkEnd{endPortGUID(r), r.Num}
				if lessEnd(a, b) {
					continue // listed from the greater end
				}
				f.links[Link{a, b}] = p
			}
		}
	}
	return f
}

func lessEnd(a, b LinkEnd) bool {
	return a.GUID < b.GUID || (a.GUID == b.GUID && a.Port < b.Port)
}

func guidSet(cur, ref map[iba.GUID]bool) SetDiff {
	d := SetDiff{Current: len(cur), Reference: len(ref), Extra: []string{}, Missing: []string{}}
	var extra, missing []iba.GUID
	for g := range cur {
		if !ref[g] {
			extra = append(extra, g)
		}
	}
	for g := range ref {
		if !cur[g] {
			missing = append(missing, g)
		}
	}
	sortGUIDs(extra)
	sortGUIDs(missing)
	for _, g := range extra {
		d.Extra = append(d.Extra, g.String())
	}
	for _, g := range missing {
		d.Missing = append(d.Missing, g.String())
	}
	return d
}

func sortGUIDs(l []iba.GUID) { sort.Slice(l, func(i, j int) bool { return l[i] < l[j] }) }

func sortLinks(l []Link) {
	sort.Slice(l, func(i, j int) bool {
		if l[i][0] != l[j][0] {
			return lessEnd(l[i][0], l[j][0])
		}
		return lessEnd(l[i][1], l[j][1])
	})
}

func rateOf(p *subnet.Port) string {
	lanes, speed := p.Rate()
	if lanes == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%v %dx", speed, lanes)
}

func compareSubnets(ref, cur *subnet.Subnet) *SubnetDiffResult {
	r, c := factsOf(ref), factsOf(cur)
	res := &SubnetDiffResult{
		EndPorts: guidSet(c.endPorts, r.endPorts),
		Nodes:    guidSet(c.nodes, r.nodes),
		Links:    LinkDiff{Current: len(c.links), Reference: len(r.links), Extra: []Link{}, Missing: []Link{}},
		Rates:    []RateChange{},
		LIDs:     LIDDiff{Current: len(c.lids), Reference: len(r.lids), Changes: []LIDChange{}},
	}
	var same []Link
	for l := range c.links {
		if r.links[l] == nil {
			res.Links.Extra = append(res.Links.Extra, l)
		} else {
			same = append(same, l)
		}
	}
	for l := range r.links {
		if c.links[l] == nil {
			res.Links.Missing = append(res.Links.Missing, l)
		}
	}
	sortLinks(res.Links.Extra)
	sortLinks(res.Links.Missing)
	sortLinks(same)
	for _, l := range same {
		if a, b := rateOf(c.links[l]), rateOf(r.links[l]); a != b {
			res.Rates = append(res.Rates, RateChange{Link: l, Current: a, Reference: b})
		}
	}
	var lids []uint16
	seen := map[uint16]bool{}
	for _, m := range []map[uint16]iba.GUID{c.lids, r.lids} {
		for lid := range m {
			if !seen[lid] {
				seen[lid] = true
				lids = append(lids, lid)
			}
		}
	}
	sort.Slice(lids, func(i, j int) bool { return lids[i] < lids[j] })
	for _, lid := range lids {
		cg, cok := c.lids[lid]
		rg, rok := r.lids[lid]
		if cok && rok && cg == rg {
			continue
		}
		ch := LIDChange{LID: lid}
		if cok {
			ch.Current = cg.String()
		}
		if rok {
			ch.Reference = rg.String()
		}
		res.LIDs.Changes = append(res.LIDs.Changes, ch)
	}
	return res
}

// pyGUID is python-rdma's spelling of a GUID: 0002:c903:0000:1234.
func pyGUID(g iba.GUID) string {
	v := uint64(g)
	return fmt.Sprintf("%04x:%04x:%04x:%04x", v>>48, (v>>32)&0xffff, (v>>16)&0xffff, v&0xffff)
}

func pyGUIDString(s string) string {
	var v uint64
	if _, err := fmt.Sscanf(s, "0x%x", &v); err != nil {
		return s
	}
	return pyGUID(iba.GUID(v))
}

func pyLink(l Link) string {
	return fmt.Sprintf("%s[%d] <=> %s[%d]", pyGUID(l[0].GUID), l[0].Port, pyGUID(l[1].GUID), l[1].Port)
}

// renderSubnetDiff prints the comparison in python-rdma's words.
func renderSubnetDiff(w io.Writer, d *SubnetDiffResult) error {
	b := bufio.NewWriter(w)
	report := func(items []string, extra, same string) {
		if len(items) == 0 {
			fmt.Fprintln(b, same)
			return
		}
		fmt.Fprintf(b, extra+"\n", len(items))
		for _, s := range items {
			fmt.Fprintln(b, "  ", s)
		}
	}
	guids := func(l []string) []string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = pyGUIDString(s)
		}
		return out
	}
	links := func(l []Link) []string {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = pyLink(x)
		}
		return out
	}
	fmt.Fprintf(b, "Current subnet has %d end ports, reference subnet has %d end ports\n", d.EndPorts.Current, d.EndPorts.Reference)
	report(guids(d.EndPorts.Extra), " Current subnet has %d more end ports than the reference subnet:", " All end ports in the current subnet are in the reference subnet.")
	report(guids(d.EndPorts.Missing), "Reference subnet has %d more end ports than the current subnet:", " All end ports in the reference subnet are in the current subnet.")
	fmt.Fprintf(b, "Current subnet has %d nodes, reference subnet has %d nodes\n", d.Nodes.Current, d.Nodes.Reference)
	report(guids(d.Nodes.Extra), " Current subnet has %d more nodes than the reference subnet:", " All nodes in the current subnet are in the reference subnet.")
	report(guids(d.Nodes.Missing), "Reference subnet has %d more nodes than the current subnet:", " All nodes in the reference subnet are in the current subnet.")
	fmt.Fprintf(b, "Current subnet has %d links, reference subnet has %d links\n", d.Links.Current, d.Links.Reference)
	report(links(d.Links.Extra), " Current subnet has %d more links than the reference subnet:", " All links in the current subnet are in the reference subnet.")
	report(links(d.Links.Missing), "Reference subnet has %d more links than the current subnet:", " All links in the reference subnet are in the current subnet.")
	var rates []string
	for _, r := range d.Rates {
		rates = append(rates, fmt.Sprintf("%s: %s  %s", pyLink(r.Link), r.Current, r.Reference))
	}
	report(rates, " The subnets have %d different link rates", " All links in the current subnet have the same rate in the reference subnet.")
	fmt.Fprintf(b, "Current subnet has %d LIDs, reference subnet has %d LIDs\n", d.LIDs.Current, d.LIDs.Reference)
	var lids []string
	for _, c := range d.LIDs.Changes {
		cur, ref := pyGUIDString(c.Current), pyGUIDString(c.Reference)
		switch {
		case c.Current == "":
			lids = append(lids, fmt.Sprintf("%5d: %-19s %s", c.LID, "      !Cur", ref))
		case c.Reference == "":
			lids = append(lids, fmt.Sprintf("%5d: %s %-19s", c.LID, cur, "      !Ref"))
		default:
			lids = append(lids, fmt.Sprintf("%5d: %s %s", c.LID, cur, ref))
		}
	}
	report(lids, " The subnets have %d different LID assignments (LID: Current portGUID, Reference portGUID):", " All LIDs in the current subnet are the same as the reference subnet.")
	return b.Flush()
}
