package diags

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

func init() {
	register(command{name: "query", make: newQuery})
}

// queryRPC is one RPC `ibtool query` can issue: the IBA name, and how.
type queryRPC struct {
	name string
	// attr sends an attribute RPC; sa an SA one (Get, GetTable, Set,
	// Delete) with a component mask.
	attr func(mc *mad.Client) func(ctx context.Context, t mad.Target, a iba.Attribute, mod uint32) error
	sa   iba.Method
	gmp  bool // sent on QP1 (every class but SubnMgt)
}

var queryRPCs = []queryRPC{
	{name: "SubnGet", attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error { return mc.SubnGet }},
	{name: "SubnSet", attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error { return mc.SubnSet }},
	{name: "SubnAdmGet", sa: iba.MethodGet, gmp: true},
	{name: "SubnAdmGetTable", sa: iba.MethodGetTable, gmp: true},
	{name: "SubnAdmSet", sa: iba.MethodSet, gmp: true},
	{name: "SubnAdmDelete", sa: iba.MethodDelete, gmp: true},
	{name: "PerformanceGet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.PerformanceGet
	}},
	{name: "PerformanceSet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.PerformanceSet
	}},
	{name: "DevMgtGet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.DevMgtGet
	}},
	{name: "DevMgtSet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.DevMgtSet
	}},
	{name: "CongestionGet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.CongestionGet
	}},
	{name: "CongestionSet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return mc.CongestionSet
	}},
	{name: "BMGet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error { return mc.BMGet }},
	{name: "BMSet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error { return mc.BMSet }},
	{name: "VendGet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return func(ctx context.Context, t mad.Target, a iba.Attribute, mod uint32) error {
			return mc.VendGet(ctx, t, 0, 0, a, mod)
		}
	}},
	{name: "VendSet", gmp: true, attr: func(mc *mad.Client) func(context.Context, mad.Target, iba.Attribute, uint32) error {
		return func(ctx context.Context, t mad.Target, a iba.Attribute, mod uint32) error {
			return mc.VendSet(ctx, t, 0, 0, a, mod)
		}
	}},
}

func findQueryRPC(name string) (queryRPC, bool) {
	for _, r := range queryRPCs {
		if strings.EqualFold(r.name, name) {
			return r, true
		}
	}
	return queryRPC{}, false
}

func (r queryRPC) isSA() bool { return r.sa != 0 }

// queryAttributes lists the attributes an RPC may carry, by their IBA
// names, from the iba registry.
func queryAttributes(rpc string) []*iba.Struct {
	var out []*iba.Struct
	for _, s := range iba.Structs() {
		if s.HasAttrID && s.VariantOf == nil && s.Allows(rpc) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func attrNames(ss []*iba.Struct) string {
	var names []string
	for _, s := range ss {
		n := s.Name
		if len(s.Aliases) > 0 {
			n += " (" + strings.Join(s.Aliases, ", ") + ")"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

func queryHelp() string {
	var b strings.Builder
	b.WriteString("Valid RPC:\n")
	for _, r := range queryRPCs {
		fmt.Fprintf(&b, "  %s\n", r.name)
	}
	b.WriteString("\nValid ATTRIBUTE (IBA name, python-rdma names in parentheses: RPCs):\n")
	byAttr := map[*iba.Struct][]string{}
	var all []*iba.Struct
	for _, r := range queryRPCs {
		for _, s := range queryAttributes(r.name) {
			if byAttr[s] == nil {
				all = append(all, s)
			}
			byAttr[s] = append(byAttr[s], r.name)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	for _, s := range all {
		n := s.Name
		if len(s.Aliases) > 0 {
			n += " (" + strings.Join(s.Aliases, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %s: %s\n", n, strings.Join(byAttr[s], " "))
	}
	return b.String()
}

type queryFlags struct {
	fields  []string
	attrMod string
	dump    bool
	addr    addrFlags
}

func newQuery(e *Env) *cobra.Command { return newQueryWith(e, e.open) }

// newQueryWith is newQuery on the fabric open connects to.
func newQueryWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &queryFlags{}
	c := &cobra.Command{
		Use:   "query RPC ATTRIBUTE [TARGET] [-f field=value ...] [-a attrmod]",
		Short: "issue any RPC with any attribute, fields set by name (python-rdma's query)",
		Long: `query sends one RPC (SubnGet, PerformanceGet, SubnAdmGetTable, ...) carrying
one attribute, whose fields -f sets by dotted IBA name (nodeInfo.systemImageGUID,
LID, portSelect), case insensitively. For the SA RPCs, each field set also sets
its component mask bit. The reply is printed one field per line (python-rdma's
dotted format; --dump for the packet dump), a GetTable reply as "Reply structure
#N" per record. With no TARGET, SMPs go to the local port, GMPs to the local
port's LID and SA RPCs to the SA.

Examples:
  query SubnGet NodeInfo 4
  query PerformanceGet PMPortCounters 4 -f portSelect=1
  query SubnAdmGetTable SANodeRecord -f nodeInfo.systemImageGUID=0x0002c90300001491
  query SubnAdmGet PathRecord -f SGID=fe80::2:c903:0:1491 -f DGID=fe80::2:c903:0:1492

` + queryHelp(),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runQuery(e, f, args, open)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "the target is a directed route")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "the target is a LID")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "the target is a port GUID")
	fl.StringArrayVarP(&f.fields, "field", "f", nil, "set field=value in the request (dotted IBA name; repeatable)")
	fl.StringVarP(&f.attrMod, "attribute-modifier", "a", "0", "the attribute modifier of the request")
	fl.BoolVar(&f.dump, "dump", false, "print the packet dump of each reply instead of the dotted fields")
	return c
}

// QueryResult is what query sent and got back.
type QueryResult struct {
	RPC               string `json:"rpc"`
	Attribute         string `json:"attribute"`
	Target            string `json:"target"`
	AttributeModifier uint32 `json:"attributeModifier"`
	// ComponentMask is the SA component mask sent (SA RPCs only).
	ComponentMask *uint64         `json:"componentMask,omitempty"`
	Request       json.RawMessage `json:"request"`
	// Replies holds the reply's attribute, or each record of a
	// GetTable reply.
	Replies []json.RawMessage `json:"replies"`

	desc  *iba.Struct
	raw   [][]byte
	table bool
}

func runQuery(e *Env, f *queryFlags, args []string, open func() (*session, error)) error {
	if len(args) < 2 || len(args) > 3 {
		return usagef("want RPC ATTRIBUTE [TARGET]")
	}
	rpc, ok := findQueryRPC(args[0])
	if !ok {
		var names []string
		for _, r := range queryRPCs {
			names = append(names, r.name)
		}
		return usagef("unknown RPC %q; valid RPCs are %s", args[0], strings.Join(names, ", "))
	}
	d, ok := iba.StructByName(args[1])
	if !ok || !d.HasAttrID {
		return usagef("unknown attribute %q; %s carries %s", args[1], rpc.name, attrNames(queryAttributes(rpc.name)))
	}
	if d.VariantOf != nil {
		d = d.VariantOf
	}
	if !d.Allows(rpc.name) {
		return usagef("%s does not carry %s (it goes with %s); %s carries %s", rpc.name, d.Name,
			strings.Join(d.Methods, ", "), rpc.name, attrNames(queryAttributes(rpc.name)))
	}
	mod, err := strconv.ParseUint(strings.TrimSpace(f.attrMod), 0, 32)
	if err != nil {
		return usagef("-a %q: not a 32-bit number", f.attrMod)
	}
	req := make([]byte, d.Size)
	var mask uint64
	for _, fv := range f.fields {
		name, val, ok := strings.Cut(fv, "=")
		if !ok || strings.Contains(val, "=") {
			return usagef("field %q does not have exactly one '='", fv)
		}
		ref, err := d.Lookup(name)
		if err != nil {
			return usagef("%s: %v", d.Name, err)
		}
		if err := ref.SetText(req, val); err != nil {
			return usagef("%s: %v", d.Name, err)
		}
		if rpc.isSA() {
			bits, err := sa.MaskBits(d, name)
			if err != nil {
				return usagef("%v", err)
			}
			mask |= bits
		}
	}
	attr := d.New()
	if err := attr.Unmarshal(req); err != nil {
		return usagef("%s: %v", d.Name, err)
	}

	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	res := &QueryResult{RPC: rpc.name, Attribute: d.Name, AttributeModifier: uint32(mod), Request: jsonOf(d, req), Replies: []json.RawMessage{}, desc: d}
	var t mad.Target
	switch {
	case len(args) == 3 && args[2] != "":
		p, err := s.smpTarget(args[2], &f.addr)
		if err != nil {
			return fmt.Errorf("resolving %s: %w", args[2], err)
		}
		t = p
		if rpc.gmp {
			if t, err = s.gmpTarget(args[2], &f.addr); err != nil {
				return fmt.Errorf("resolving %s: %w", args[2], err)
			}
		}
	case rpc.isSA():
		if t, err = sa.New(s.mc).Target(e.Ctx); err != nil {
			return err
		}
	case rpc.gmp:
		t = mad.Route{Addr: mad.Addr{LID: s.local.LID, QPN: mad.QP1, QKey: mad.QP1QKey}, Name: fmt.Sprintf("local port (LID %d)", s.local.LID)}
	default:
		t = mad.Route{DR: &mad.DirectedRoute{Path: []byte{0}, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}, Name: "local port (DR path 0)"}
	}
	res.Target = t.String()
	if rpc.isSA() {
		res.ComponentMask = &mask
		if err := querySA(e.Ctx, s, t, rpc, d, req, uint32(mod), mask, res); err != nil {
			return err
		}
	} else {
		do := rpc.attr(s.mc)
		if rpc.name == "SubnGet" {
			do = s.SubnGet // --sa answers it from SA records, as python-rdma's query does
		}
		if err := do(e.Ctx, t, attr, uint32(mod)); err != nil {
			return err
		}
		b, err := marshal(attr)
		if err != nil {
			return err
		}
		res.raw = append(res.raw, b)
		res.Replies = append(res.Replies, jsonOf(d, b))
	}
	if e.JSON {
		return e.writeJSON("query", res)
	}
	return res.render(e.Stdout, f.dump)
}

// querySA sends an SA RPC with the attribute modifier and the component
// mask, and keeps the reply's record or records.
func querySA(ctx context.Context, s *session, t mad.Target, rpc queryRPC, d *iba.Struct, req []byte, mod uint32, mask uint64, res *QueryResult) error {
	rep, err := s.mc.Do(ctx, mad.Request{Target: t, Class: iba.ClassSubnAdm, Method: rpc.sa, AttrID: d.AttrID, AttrMod: mod, Data: req, CompMask: mask})
	if err != nil {
		return err
	}
	var recs [][]byte
	if rpc.sa == iba.MethodGetTable {
		res.table = true
		tb, err := s.mc.SplitTable(rep, d)
		if err != nil {
			return err
		}
		recs = tb.Records
	} else {
		data := rep.Data()
		if len(data) < d.Size {
			return fmt.Errorf("%s %s: reply of %d bytes is shorter than %s (%d)", rpc.name, d.Name, len(data), d.Name, d.Size)
		}
		recs = [][]byte{data[:d.Size]}
	}
	for _, b := range recs {
		res.raw = append(res.raw, b)
		res.Replies = append(res.Replies, jsonOf(d, b))
	}
	return nil
}

func (r *QueryResult) render(w io.Writer, dump bool) error {
	var b strings.Builder
	for i, rec := range r.raw {
		var one strings.Builder
		var err error
		if dump {
			err = ibaprint.Dump(&one, r.desc, rec, ibaprint.DumpOptions{})
		} else {
			err = ibaprint.StructDotted(&one, r.desc, rec)
		}
		if err != nil {
			return err
		}
		if !r.table {
			b.WriteString(one.String())
			continue
		}
		fmt.Fprintf(&b, "Reply structure #%d\n", i)
		for _, l := range strings.SplitAfter(one.String(), "\n") {
			if l != "" {
				b.WriteString("\t\t" + l)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
