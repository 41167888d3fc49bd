package subnet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// DiffChecks selects what ibnetdiscover --diff compares (--diffcheck).
type DiffChecks uint32

// The --diffcheck keys, with ibnetdiscover's values.
const (
	DiffSwitch   DiffChecks = 0x01 // "sw"
	DiffCA       DiffChecks = 0x02 // "ca"
	DiffRouter   DiffChecks = 0x04 // "router"
	DiffPort     DiffChecks = 0x08 // "port": port connections
	DiffLID      DiffChecks = 0x10 // "lid"
	DiffNodeDesc DiffChecks = 0x20 // "nodedesc"

	// DiffDefault is what ibnetdiscover compares without --diffcheck.
	DiffDefault = DiffSwitch | DiffCA | DiffRouter | DiffPort
)

// ParseDiffChecks reads a --diffcheck list: sw, ca, router, port, lid,
// nodedesc, comma separated, any case.
func ParseDiffChecks(s string) (DiffChecks, error) {
	var c DiffChecks
	for _, k := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "sw":
			c |= DiffSwitch
		case "ca":
			c |= DiffCA
		case "router":
			c |= DiffRouter
		case "port":
			c |= DiffPort
		case "lid":
			c |= DiffLID
		case "nodedesc":
			c |= DiffNodeDesc
		case "":
		default:
			return 0, fmt.Errorf("invalid diff check key: %s", k)
		}
	}
	return c, nil
}

// WriteNetDiscoverDiff prints what ibnetdiscover --diff prints
// (ibnetdiscover.c: diff, diff_common, diff_iter_func, diff_ports): the
// nodes and ports of orig that differ in cur prefixed "< ", and their
// counterparts in cur "> ", by node type, then the nodes of cur missing in
// orig. Ports whose difference is that one side has no link are printed
// only from the side that has one (the C tool would dereference the
// missing peer).
func WriteNetDiscoverDiff(w io.Writer, orig, cur *Subnet, o TopologyOptions, checks DiffChecks) error {
	orig.mu.RLock()
	defer orig.mu.RUnlock()
	if cur != orig {
		cur.mu.RLock()
		defer cur.mu.RUnlock()
	}
	t := &topoWriter{w: bufio.NewWriter(w), o: &o}
	for _, typ := range []struct {
		flag DiffChecks
		t    iba.NodeType
	}{{DiffSwitch, iba.NodeTypeSwitch}, {DiffCA, iba.NodeTypeCA}, {DiffRouter, iba.NodeTypeRouter}} {
		if checks&typ.flag == 0 {
			continue
		}
		d := &netDiff{t: t, checks: checks, a: orig, b: cur, pa: "< ", pb: "> "}
		for _, n := range orig.reversed(typ.t) {
			d.node(n)
		}
		r := &netDiff{t: t, checks: checks &^ (DiffPort | DiffLID | DiffNodeDesc), a: cur, b: orig, pa: "> ", pb: "< "}
		for _, n := range cur.reversed(typ.t) {
			r.node(n)
		}
	}
	return t.w.Flush()
}

type netDiff struct {
	t      *topoWriter
	checks DiffChecks
	a, b   *Subnet
	pa, pb string
}

func (d *netDiff) header(n *Node, idPrefix, prefix string) {
	if n.Type == iba.NodeTypeSwitch {
		d.t.outSwitch(n, "", idPrefix, prefix)
	} else {
		d.t.outCA(n, "", idPrefix, prefix)
	}
}

func (d *netDiff) detail(n *Node, prefix string) {
	if n.Type == iba.NodeTypeSwitch {
		d.t.outSwitchDetail(n, prefix)
	} else {
		d.t.outCADetail(n, prefix)
	}
}

func (d *netDiff) port(p *Port, prefix string) {
	if p == nil || p.Remote == nil {
		return
	}
	if p.Node.Type == iba.NodeTypeSwitch {
		d.t.outSwitchPort(p, prefix)
	} else {
		d.t.outCAPort(p, prefix)
	}
}

func (d *netDiff) node(n *Node) {
	m := d.b.byNodeGUID[n.GUID]
	if m == nil {
		d.header(n, d.pa, d.pa)
		for _, p := range n.Ports[1:] {
			d.port(p, d.pa)
		}
		return
	}
	if d.checks&(DiffPort|DiffLID|DiffNodeDesc) == 0 {
		return
	}
	shown := false
	if (d.checks&DiffLID != 0 && n.SMALID != m.SMALID) || (d.checks&DiffNodeDesc != 0 && n.Desc != m.Desc) {
		d.header(n, "", d.pa)
		d.detail(m, d.pb)
		d.t.printf("\n")
		shown = true
	}
	showHeader := func() {
		if !shown {
			d.header(n, "", "")
			shown = true
		}
	}
	if n.NumPorts != m.NumPorts {
		showHeader()
		d.t.printf("%snumports = %d\n", d.pa, n.NumPorts)
		d.t.printf("%snumports = %d\n", d.pb, m.NumPorts)
		return
	}
	if d.checks&(DiffPort|DiffLID) == 0 {
		return
	}
	for num := 1; num <= n.NumPorts; num++ {
		pa, pb := n.Port(num), m.Port(num)
		outA, outB := 0, 0
		if d.checks&DiffPort != 0 {
			switch {
			case pa != nil && pb == nil, pa != nil && pb != nil && pa.Remote != nil && pb.Remote == nil:
				outA++
			case pa == nil && pb != nil, pa != nil && pb != nil && pa.Remote == nil && pb.Remote != nil:
				outB++
			case pa != nil && pb != nil && (pa.GUID != pb.GUID || (pa.Remote != nil && pb.Remote != nil && pa.Remote.GUID != pb.Remote.GUID)):
				outA++
				outB++
			}
		}
		both := pa != nil && pb != nil
		if d.checks&DiffLID != 0 && both && pa.BaseLID != pb.BaseLID {
			outA++
			outB++
		}
		linked := both && pa.Remote != nil && pb.Remote != nil
		if d.checks&DiffPort != 0 && d.checks&DiffNodeDesc != 0 && linked && pa.Remote.Node.Desc != pb.Remote.Node.Desc {
			outA++
			outB++
		}
		if d.checks&DiffPort != 0 && d.checks&DiffLID != 0 && linked && pa.Remote.BaseLID != pb.Remote.BaseLID {
			outA++
			outB++
		}
		if outA > 0 {
			showHeader()
			d.port(pa, d.pa)
		}
		if outB > 0 {
			showHeader()
			d.port(pb, d.pb)
		}
	}
}
