package diags

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
)

func init() {
	register(command{name: "smpquery", make: newSMPQuery})
}

// SMPQueryResult is what smpquery read: the op, the target as
// infiniband-diags names it, and every SMP attribute it read, decoded by
// IBA names.
type SMPQueryResult struct {
	// Op is the op's name as smpquery lists it (NodeInfo, PortInfo, ...).
	Op string `json:"op"`
	// Target is the destination as the C tool prints it ("Lid 4", "DR path
	// slid 65535; dlid 65535; 0,1").
	Target string `json:"target"`
	// Port is the port argument of the ops that take one.
	Port *int `json:"port,omitempty"`
	// NodeDescription is nodedesc's text after the node name map.
	NodeDescription string `json:"nodeDescription,omitempty"`
	// Capacity is the P_Key or GUID capacity of pkeys and guids.
	Capacity *int `json:"capacity,omitempty"`
	// PKeys and GUIDs are the tables of pkeys and guids, capacity entries.
	PKeys []uint16 `json:"pkeys,omitempty"`
	GUIDs []string `json:"guids,omitempty"`
	// LowCap and HighCap are the VL arbitration table sizes of vlarb.
	LowCap  *int `json:"lowCap,omitempty"`
	HighCap *int `json:"highCap,omitempty"`
	// Attributes are the attributes read, in order.
	Attributes []SMPAttribute `json:"attributes"`

	text func(w io.Writer) error
}

// SMPAttribute is one attribute read, with its modifier.
type SMPAttribute struct {
	Name     string          `json:"name"`
	Modifier uint32          `json:"modifier"`
	Data     json.RawMessage `json:"data"`

	raw []byte
}

// smpOp is one row of smpquery's op table (smpquery.c match_tbl).
type smpOp struct {
	name, alias string
	takesPort   bool
	run         func(q *smpQuery, res *SMPQueryResult, args []string) error
}

var smpOps = []smpOp{
	{"NodeInfo", "NI", false, (*smpQuery).nodeInfo},
	{"NodeDesc", "ND", false, (*smpQuery).nodeDesc},
	{"PortInfo", "PI", true, (*smpQuery).portInfo},
	{"PortInfoExtended", "PIE", true, (*smpQuery).portInfoExtended},
	{"SwitchInfo", "SI", false, (*smpQuery).switchInfo},
	{"PKeyTable", "PKeys", true, (*smpQuery).pkeyTable},
	{"SL2VLTable", "SL2VL", true, (*smpQuery).sl2vlTable},
	{"VLArbitration", "VLArb", true, (*smpQuery).vlarbTable},
	{"GUIDInfo", "GI", false, (*smpQuery).guidInfo},
	{"MlnxExtPortInfo", "MEPI", true, (*smpQuery).mlnxExtPortInfo},
	// python-rdma's.
	{"LinearForwardingTable", "LFT", false, (*smpQuery).lft},
}

// findSMPOp finds an op by its name or alias, case insensitively, as the
// C tool does; else, as python-rdma does, by a prefix of one of them or
// of its IBA attribute name with SMP before it (SMPNodeInfo), which must
// name one op only.
func findSMPOp(name string) (smpOp, error) {
	for _, o := range smpOps {
		if strings.EqualFold(o.name, name) || strings.EqualFold(o.alias, name) || strings.EqualFold("SMP"+o.name, name) {
			return o, nil
		}
	}
	var found []smpOp
	low := strings.ToLower(name)
	for _, o := range smpOps {
		for _, n := range []string{o.name, o.alias, "SMP" + o.name} {
			if low != "" && strings.HasPrefix(strings.ToLower(n), low) {
				found = append(found, o)
				break
			}
		}
	}
	switch len(found) {
	case 0:
		return smpOp{}, iberror(nil, "operation '%s' not supported", name)
	case 1:
		return found[0], nil
	}
	l := make([]string, len(found))
	for i, o := range found {
		l[i] = o.name
	}
	return smpOp{}, iberror(nil, "operation '%s' is ambiguous: %s", name, strings.Join(l, ", "))
}

type smpQueryFlags struct {
	addr        addrFlags
	combined    bool
	extended    bool
	showKeys    bool
	nodeNameMap string
}

func newSMPQuery(e *Env) *cobra.Command {
	var f smpQueryFlags
	var ops strings.Builder
	for _, o := range smpOps {
		p := ""
		if o.takesPort {
			p = " [<portnum>]"
		}
		fmt.Fprintf(&ops, "  %s (%s) <addr>%s\n", o.name, o.alias, p)
	}
	c := &cobra.Command{
		Use:   "smpquery [flags] <op> <dest dr_path|lid|guid> [op params]",
		Short: "query SMP attributes of a node or port (infiniband-diags smpquery)",
		Long: `smpquery reads one subnet management attribute of a node or port and
prints it as infiniband-diags' smpquery does.

Supported ops (and aliases, case insensitive):
` + ops.String() + `
Examples:
  smpquery portinfo 3 1              # portinfo by lid, with port modifier
  smpquery -G switchinfo 0x2C9000100D051 1   # switchinfo by guid
  smpquery -D nodeinfo 0             # nodeinfo by direct route
  smpquery -c nodeinfo 6 0,12        # nodeinfo by combined route`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSMPQuery(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.combined, "combined", "c", false, "use Combined route address argument (LID, then DR path from it)")
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file (default /etc/rdma/ib-node-name-map if it exists)")
	fl.BoolVarP(&f.extended, "extended", "x", false, "use extended speeds (PortInfo modifier bit 31)")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	fl.BoolVarP(&f.showKeys, "show_keys", "K", false, "display security keys in output")
	return c
}

// smpQuery is one smpquery run: where SMPs go and how.
type smpQuery struct {
	e      *Env
	s      *session
	g      mad.SubnGetter
	target ibpath.Path
	opName string // as typed, for messages
	f      *smpQueryFlags
	names  *namemap.Map // the node name map
}

func runSMPQuery(e *Env, f *smpQueryFlags, args []string) error {
	if len(args) < 2 || (f.combined && len(args) < 3) {
		return usagef("want <op> <dest dr_path|lid|guid> [op params]")
	}
	op, err := findSMPOp(args[0])
	if err != nil {
		return err
	}
	var names *namemap.Map
	if op.name == "NodeDesc" {
		if names, err = loadNames(f.nodeNameMap); err != nil {
			return err
		}
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	if f.nodeNameMap != "" {
		// Targets may be given by the map's names.
		if s.names, err = loadNames(f.nodeNameMap); err != nil {
			return err
		}
	}
	q := &smpQuery{e: e, s: s, g: s, opName: args[0], f: f, names: names}
	rest := args[2:]
	if f.combined {
		q.target, err = q.combinedTarget(args[1], args[2])
		rest = args[3:]
	} else {
		q.target, err = resolveSMPDest(s, args[1], &f.addr)
	}
	if err != nil {
		return err
	}
	res := &SMPQueryResult{Op: op.name, Target: portidString(q.target)}
	if err := op.run(q, res, rest); err != nil {
		return err
	}
	if e.JSON {
		return e.writeJSON("smpquery", res)
	}
	return res.text(e.Stdout)
}

// combinedTarget is -c: a LID, and a DR path that starts there with the
// local port's LID as DrSLID (libibmad IB_DEST_DRSLID).
func (q *smpQuery) combinedTarget(lidArg, drArg string) (ibpath.Path, error) {
	concat := lidArg + " " + drArg
	lid := cStrtoul(lidArg)
	if lid == 0 || lid >= 0xc000 {
		return nil, iberror(nil, "can't resolve destination port %s", concat)
	}
	p, err := ibpath.Parse(drArg, ibpath.Options{Mode: ibpath.DirectRoute})
	if err != nil {
		return nil, iberror(err, "can't resolve destination port %s", concat)
	}
	dr := p.(*ibpath.DRPath)
	dr.DLID = uint16(lid)
	dr.DrSLID = q.s.local.LID
	dr.Mark("DLID")
	dr.Mark("drSLID")
	return dr, nil
}

// get reads one attribute and records it in the result.
func (q *smpQuery) get(res *SMPQueryResult, attr iba.Attribute, mod uint32) ([]byte, error) {
	if err := q.g.SubnGet(q.e.Ctx, q.target, attr, mod); err != nil {
		return nil, err
	}
	d := attr.Desc()
	b := make([]byte, d.Size)
	if err := attr.MarshalTo(b); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", d.Name, err)
	}
	var j bytes.Buffer
	if err := ibaprint.JSON(&j, d, b); err != nil {
		return nil, err
	}
	res.Attributes = append(res.Attributes, SMPAttribute{Name: d.Name, Modifier: mod, Data: bytes.TrimSpace(j.Bytes()), raw: b})
	return b, nil
}

// failed is smpquery's "operation <op>: <what>" error.
func (q *smpQuery) failed(err error, what string) error {
	return iberror(err, "operation %s: %s", q.opName, what)
}

func portArg(args []string) int {
	if len(args) > 0 {
		return cPort(args[0])
	}
	return 0
}

func header(format string, a ...any) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := fmt.Fprintf(w, format, a...)
		return err
	}
}

// then joins renderers.
func then(fs ...func(io.Writer) error) func(io.Writer) error {
	return func(w io.Writer) error {
		for _, f := range fs {
			if err := f(w); err != nil {
				return err
			}
		}
		return nil
	}
}

func render(f func(io.Writer, []byte) error, b []byte) func(io.Writer) error {
	return func(w io.Writer) error { return f(w, b) }
}

func (q *smpQuery) nodeInfo(res *SMPQueryResult, _ []string) error {
	b, err := q.get(res, &iba.NodeInfo{}, 0)
	if err != nil {
		return q.failed(err, "node info query failed")
	}
	res.text = then(header("# Node info: %s\n", res.Target), render(ibaprint.SMPNodeInfo, b))
	return nil
}

func (q *smpQuery) nodeDesc(res *SMPQueryResult, _ []string) error {
	var ni iba.NodeInfo
	if _, err := q.get(res, &ni, 0); err != nil {
		return q.failed(err, "node info query failed")
	}
	var nd iba.NodeDescription
	b, err := q.get(res, &nd, 0)
	if err != nil {
		return q.failed(err, "node desc query failed")
	}
	name, ok := q.names.Lookup(ni.NodeGUID)
	if !ok {
		res.NodeDescription = namemap.Clean(b)
		res.text = render(ibaprint.SMPNodeDesc, b)
		return nil
	}
	res.NodeDescription = name
	dots := "."
	if len(name) < 32 {
		dots = strings.Repeat(".", 32-len(name))
	}
	res.text = header("Node Description:%s%s\n", dots, name)
	return nil
}

func (q *smpQuery) portInfo(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	mod := uint32(port)
	if q.f.extended {
		mod |= 1 << 31
	}
	b, err := q.get(res, &iba.PortInfo{}, mod)
	if err != nil {
		return q.failed(err, "port info query failed")
	}
	pr := ibaprint.SMPPortInfo
	if q.f.showKeys {
		pr = ibaprint.SMPPortInfoKeys
	}
	res.text = then(header("# Port info: %s port %d\n", res.Target, port), render(pr, b))
	return nil
}

func (q *smpQuery) portInfoExtended(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	ok, err := portInfoExtendedSupported(q.e.Stderr, "smpquery", port, func(a iba.Attribute, mod uint32) error {
		_, err := q.get(res, a, mod)
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		return q.failed(nil, "port info extended not supported")
	}
	b, err := q.get(res, &iba.PortInfoExtended{}, uint32(port))
	if err != nil {
		return q.failed(err, "port info extended query failed")
	}
	res.text = then(header("# Port info Extended: %s port %d\n", res.Target, port), render(ibaprint.SMPPortInfoExtended, b))
	return nil
}

func (q *smpQuery) mlnxExtPortInfo(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	b, err := q.get(res, &iba.MlnxExtPortInfo{}, uint32(port))
	if err != nil {
		return q.failed(err, "Mellanox ext port info query failed")
	}
	res.text = then(header("# MLNX ext Port info: %s port %d\n", res.Target, port), render(ibaprint.SMPMlnxExtPortInfo, b))
	return nil
}

func (q *smpQuery) switchInfo(res *SMPQueryResult, _ []string) error {
	b, err := q.get(res, &iba.SwitchInfo{}, 0)
	if err != nil {
		return q.failed(err, "switch info query failed")
	}
	res.text = then(header("# Switch info: %s\n", res.Target), render(ibaprint.SMPSwitchInfo, b))
	return nil
}

// lft is python-rdma's LFT op: the whole linear forwarding table of a
// switch, eight ports a line, and its capacity and top (SwitchInfo).
func (q *smpQuery) lft(res *SMPQueryResult, _ []string) error {
	var si iba.SwitchInfo
	if _, err := q.get(res, &si, 0); err != nil {
		return q.failed(err, "switch info query failed")
	}
	n := int(si.LinearFDBCap)
	ports := make([]byte, 0, n)
	for blk := 0; len(ports) < n; blk++ {
		var t iba.LinearForwardingTable
		if _, err := q.get(res, &t, uint32(blk)); err != nil {
			return q.failed(err, fmt.Sprintf("LFT block %d query failed", blk))
		}
		ports = append(ports, t.PortBlock[:]...)
	}
	ports = ports[:n]
	res.text = func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for i, p := range ports {
			switch {
			case i%8 == 0 && i != 0:
				fmt.Fprintf(bw, "\n%3d: %d", i, p)
			case i%8 == 0:
				fmt.Fprintf(bw, "%3d: %d", i, p)
			default:
				fmt.Fprintf(bw, " %d", p)
			}
		}
		if n != 0 {
			fmt.Fprintln(bw)
		}
		fmt.Fprintf(bw, "%d LFT capacity for this port, top is %d\n", n, si.LinearFDBTop)
		return bw.Flush()
	}
	return nil
}

func (q *smpQuery) pkeyTable(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	var ni iba.NodeInfo
	if _, err := q.get(res, &ni, 0); err != nil {
		return q.failed(err, "node info query failed")
	}
	if port > int(ni.NumPorts) {
		return q.failed(nil, "invalid port number")
	}
	n := int(ni.PartitionCap)
	if ni.NodeType == iba.NodeTypeSwitch && port != 0 {
		var si iba.SwitchInfo
		if _, err := q.get(res, &si, 0); err != nil {
			return q.failed(err, "switch info failed")
		}
		n = int(si.PartitionEnforcementCap)
	}
	var blocks [][]byte
	for i := 0; i < (n+31)/32; i++ {
		var t iba.PKeyTable
		b, err := q.get(res, &t, uint32(i)|uint32(port)<<16)
		if err != nil {
			return q.failed(err, "pkey table query failed")
		}
		blocks = append(blocks, b)
		for j := range t.PKeyBlock {
			if i*32+j < n {
				res.PKeys = append(res.PKeys, t.PKeyBlock[j])
			}
		}
	}
	res.Capacity = &n
	res.text = func(w io.Writer) error { return ibaprint.PKeys(w, blocks, n) }
	return nil
}

func (q *smpQuery) sl2vlTable(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	var ni iba.NodeInfo
	if _, err := q.get(res, &ni, 0); err != nil {
		return q.failed(err, "node info query failed")
	}
	if port > int(ni.NumPorts) {
		return q.failed(nil, "invalid port number")
	}
	pairs := [][2]int{{0, 0}}
	if ni.NodeType == iba.NodeTypeSwitch {
		pairs = nil
		for i := 0; i <= int(ni.NumPorts); i++ {
			pairs = append(pairs, [2]int{i, port})
		}
	}
	var entries []ibaprint.SL2VLEntry
	for _, p := range pairs {
		b, err := q.get(res, &iba.SLtoVLMappingTable{}, uint32(p[0]<<8|p[1]))
		if err != nil {
			return q.failed(err, "slvl query failed")
		}
		entries = append(entries, ibaprint.SL2VLEntry{In: p[0], Out: p[1], Table: b})
	}
	res.text = then(header("# SL2VL table: %s\n", res.Target), func(w io.Writer) error { return ibaprint.SL2VL(w, entries) })
	return nil
}

func (q *smpQuery) vlarbTable(res *SMPQueryResult, args []string) error {
	port := portArg(args)
	res.Port = &port
	// Port 0 is a switch's management port, or the port the SMP arrives
	// on at a CA; a base switch port 0 has no VL arbitration.
	if port == 0 {
		var ni iba.NodeInfo
		if _, err := q.get(res, &ni, 0); err != nil {
			return q.failed(err, "node info query failed")
		}
		if ni.NodeType == iba.NodeTypeSwitch {
			var si iba.SwitchInfo
			if _, err := q.get(res, &si, 0); err != nil {
				return q.failed(err, "switch info query failed")
			}
			if si.EnhancedPort0 == 0 {
				res.text = header("# No VLArbitration tables (BSP0): %s port %d\n", res.Target, 0)
				return nil
			}
		}
	}
	var pi iba.PortInfo
	if _, err := q.get(res, &pi, uint32(port)); err != nil {
		return q.failed(err, "port info query failed")
	}
	low, high := int(pi.VLArbitrationLowCap), int(pi.VLArbitrationHighCap)
	res.LowCap, res.HighCap = &low, &high
	parts := []func(io.Writer) error{header("# VLArbitration tables: %s port %d LowCap %d HighCap %d\n", res.Target, port, low, high)}
	for _, t := range []struct {
		name   string
		offset int
		cap    int
	}{{"Low", 1, low}, {"High", 3, high}} {
		if t.cap <= 0 {
			continue
		}
		var blocks [][]byte
		for i := 0; i < 2 && i*32 < t.cap; i++ {
			b, err := q.get(res, &iba.VLArbitrationTable{}, uint32((t.offset+i)<<16|port))
			if err != nil {
				return q.failed(err, "vl arb query failed")
			}
			blocks = append(blocks, b)
		}
		name, c := t.name, t.cap
		parts = append(parts, func(w io.Writer) error { return ibaprint.VLArb(w, name, blocks, c) })
	}
	res.text = then(parts...)
	return nil
}

func (q *smpQuery) guidInfo(res *SMPQueryResult, _ []string) error {
	var pi iba.PortInfo
	if _, err := q.get(res, &pi, 0); err != nil {
		return q.failed(err, "port info failed")
	}
	n := int(pi.GUIDCap)
	var blocks [][]byte
	for i := 0; i < (n+7)/8; i++ {
		var g iba.GUIDInfo
		b, err := q.get(res, &g, uint32(i))
		if err != nil {
			return q.failed(err, "guid info query failed")
		}
		blocks = append(blocks, b)
		for j := range g.GUIDBlock {
			if i*8+j < n {
				res.GUIDs = append(res.GUIDs, fmt.Sprintf("0x%016x", uint64(g.GUIDBlock[j])))
			}
		}
	}
	res.Capacity = &n
	res.text = func(w io.Writer) error { return ibaprint.GUIDInfo(w, blocks, n) }
	return nil
}

// defaultNodeNameMap is infiniband-diags' IBDIAG_NODENAME_MAP_PATH, read
// when it exists and no --node-name-map is given.
