package health

import (
	"context"
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

// PathTarget is where ibdiagpath goes: a LID, followed through the
// switches' forwarding tables, or a directed route from the local port.
type PathTarget struct {
	LID uint16
	DR  subnet.DRPath
}

func (t PathTarget) String() string {
	if t.LID != 0 {
		return fmt.Sprintf("LID %d", t.LID)
	}
	return "directed route " + t.DR.String()
}

// PathResult is one path checked.
type PathResult struct {
	Target string `json:"target"`
	// Hops are the nodes of the path in order, with the ports the path
	// enters and leaves them by (nil at its ends).
	Hops []PathHop `json:"hops"`
	// Reached: the path ends at the target.
	Reached bool `json:"reached"`
	// Report holds the findings: the path check's (where the path fails)
	// and those of the link and counter checks run over the path's
	// links and ports.
	Report *Report `json:"report"`
}

// PathHop is one node of a path.
type PathHop struct {
	Node *subnet.Node `json:"-"`
	In   *PortRef     `json:"in,omitempty"`
	Out  *PortRef     `json:"out,omitempty"`
	// Link describes the link leaving by Out: "4x 25" (width, lane
	// Gb/s) and its state, as ibdiagpath prints them.
	Link string `json:"link,omitempty"`
}

// PathChecks are the checks Path runs over the path's ports and links.
var PathChecks = []string{"port-state", "link-ends", "link-width", "link-speed", "counters"}

// Path is ibdiagpath: it follows one route from the local port — a LID
// through the switches' linear forwarding tables (IBA 14.2.5.10), or a
// directed route — reading at every hop NodeInfo, NodeDescription, the
// PortInfo of the ports the route enters and leaves by (IBA 14.2.5), and
// then the counters of those ports twice, Options.Interval apart, and
// runs PathChecks over them. A route that ends short of its target (no
// forwarding entry, a port with no cable, a loop, a node that does not
// answer) is a finding of the "path" check. The error is ctx's, or an
// unusable target.
func Path(ctx context.Context, f *fabric.Fabric, to PathTarget, o Options) (*PathResult, error) {
	if (to.LID == 0) == (to.DR == nil) {
		return nil, errors.New("health: a path goes to a LID or along a directed route")
	}
	if to.LID > 0xbfff {
		return nil, fmt.Errorf("health: LID %d is not a unicast LID", to.LID)
	}
	t := &tracer{f: f, o: o, s: subnet.New(), res: &PathResult{Target: to.String()}}
	fault := t.trace(ctx, to)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	checks, err := Select(PathChecks, o.Skip)
	if err != nil {
		return nil, err
	}
	po := o
	po.Subnet = t.s
	d, err := Collect(ctx, f, Needs(checks), po)
	if err != nil {
		return nil, err
	}
	r := RunChecks(d, checks)
	if fault != "" {
		fd := Finding{Check: "path", Severity: Error, Message: fmt.Sprintf("the route to %s %s", to, fault)}
		if n := len(t.res.Hops); n > 0 {
			fd.Port = NodeRef(t.res.Hops[n-1].Node)
		}
		r.Findings = append([]Finding{fd}, r.Findings...)
		r.Counts[Error]++
		r.Checks = append([]CheckResult{{Name: "path", Severity: Error, Findings: 1}}, r.Checks...)
	} else {
		r.Checks = append([]CheckResult{{Name: "path", Severity: Error}}, r.Checks...)
	}
	Sort(r.Findings)
	t.res.Report = r
	return t.res, nil
}

type tracer struct {
	f   *fabric.Fabric
	o   Options
	s   *subnet.Subnet
	res *PathResult
}

func (t *tracer) get(ctx context.Context, path subnet.DRPath, attr uint16, mod uint32) ([]byte, error) {
	rt := mad.Route{DR: &mad.DirectedRoute{Path: append([]byte{0}, path...), DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive},
		Addr: mad.Addr{LID: mad.LIDPermissive}, MKey: t.o.MKey}
	rep, err := t.f.MAD.Do(ctx, mad.Request{Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: attr, AttrMod: mod})
	if err != nil {
		return nil, err
	}
	b := rep.Data()
	if len(b) < subnet.AttrSize {
		return nil, fmt.Errorf("reply with %d bytes of data", len(b))
	}
	return b[:subnet.AttrSize], nil
}

// trace walks the route, filling the subnet with what it finds, and
// says why it stopped short ("" when it reached the target).
func (t *tracer) trace(ctx context.Context, to PathTarget) string {
	var path subnet.DRPath
	var prev *subnet.Port
	seen := map[iba.GUID]bool{}
	for hop := 0; ; hop++ {
		if hop > subnet.MaxHops {
			return fmt.Sprintf("is longer than %d hops", subnet.MaxHops)
		}
		info, err := t.get(ctx, path, iba.AttrIDNodeInfo, 0)
		if err != nil {
			return fmt.Sprintf("stops at directed route %v: NodeInfo: %v", path, err)
		}
		n, in, _, err := t.s.AddNode(info, path)
		if err != nil {
			return fmt.Sprintf("stops at directed route %v: %v", path, err)
		}
		if seen[n.GUID] {
			return fmt.Sprintf("loops: it comes back to %q", n.Description())
		}
		seen[n.GUID] = true
		if prev == nil {
			t.s.SetFrom(n, in.Num)
		} else {
			_ = t.s.Link(prev, in)
		}
		if desc, err := t.get(ctx, path, iba.AttrIDNodeDescription, 0); err == nil {
			_ = t.s.SetNodeDescription(n, desc)
		}
		h := PathHop{Node: n}
		if n.Type == iba.NodeTypeSwitch {
			if si, err := t.get(ctx, path, iba.AttrIDSwitchInfo, 0); err == nil {
				_ = t.s.SetSwitchInfo(n, si)
			}
			if p0, err := t.get(ctx, path, iba.AttrIDPortInfo, 0); err == nil {
				_, _ = t.s.SetPortInfo(n, 0, p0)
			}
		}
		if hop > 0 || n.Type == iba.NodeTypeSwitch {
			if pi, err := t.get(ctx, path, iba.AttrIDPortInfo, uint32(in.Num)); err == nil {
				_, _ = t.s.SetPortInfo(n, in.Num, pi)
			}
		}
		if prev != nil {
			h.In = RefOf(in)
		}
		// Where next.
		out := 0
		switch {
		case to.DR != nil:
			if hop == len(to.DR) {
				t.res.Reached = true
				t.res.Hops = append(t.res.Hops, h)
				return ""
			}
			out = int(to.DR[hop])
		case n.Type != iba.NodeTypeSwitch:
			if lo, hi := in.LIDs(); hop > 0 || (to.LID >= lo && to.LID <= hi && lo != 0) {
				if lo != 0 && to.LID >= lo && to.LID <= hi {
					t.res.Reached = true
					t.res.Hops = append(t.res.Hops, h)
					return ""
				}
				t.res.Hops = append(t.res.Hops, h)
				return fmt.Sprintf("ends at %q port %d, which does not have the LID", n.Description(), in.Num)
			}
			out = in.Num // leave the local CA by the local port
		default:
			if n.SMALID == to.LID {
				t.res.Reached = true
				t.res.Hops = append(t.res.Hops, h)
				return ""
			}
			blk, err := t.get(ctx, path, iba.AttrIDLinearForwardingTable, uint32(to.LID/64))
			if err != nil {
				t.res.Hops = append(t.res.Hops, h)
				return fmt.Sprintf("stops at %q: its forwarding table cannot be read: %v", n.Description(), err)
			}
			out = int(blk[to.LID%64])
			if out == 0xff || out == 0 {
				t.res.Hops = append(t.res.Hops, h)
				return fmt.Sprintf("stops at %q: it has no route for the LID", n.Description())
			}
		}
		if out > n.NumPorts || (out == 0 && n.Type == iba.NodeTypeSwitch) {
			t.res.Hops = append(t.res.Hops, h)
			return fmt.Sprintf("stops at %q: it has no port %d", n.Description(), out)
		}
		op := n.Port(out)
		if op == nil || !op.HasInfo {
			if pi, err := t.get(ctx, path, iba.AttrIDPortInfo, uint32(out)); err == nil {
				op, _ = t.s.SetPortInfo(n, out, pi)
			}
		}
		if op == nil {
			t.res.Hops = append(t.res.Hops, h)
			return fmt.Sprintf("stops at %q: port %d cannot be read", n.Description(), out)
		}
		h.Out = RefOf(op)
		pi := op.PortInfo()
		h.Link = fmt.Sprintf("%s %s %s", lstWidth(pi.LinkWidthActive), lstSpeed(iba.ActiveSpeed(&pi, 0)), pi.PortState)
		t.res.Hops = append(t.res.Hops, h)
		if pi.PortPhysicalState != iba.PhysPortStateLinkUp {
			return fmt.Sprintf("stops at %q: port %d is not up (%s)", n.Description(), out, pi.PortPhysicalState)
		}
		if len(path) >= subnet.MaxHops {
			return fmt.Sprintf("is longer than %d hops", subnet.MaxHops)
		}
		path = path.Extend(uint8(out))
		prev = op
	}
}

var _ = register(&Check{
	Name: "path", Severity: Error,
	Doc: `ibdiagpath's route check (Path only): the route to the target ends at
it — every switch on the way has a forwarding entry for the LID, leaves
by a port with a cable, and the route does not come back to a node it
crossed. One finding for a route that stops short.`,
	run: func(d *Data) []Finding { return nil },
})
