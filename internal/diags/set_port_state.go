package diags

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "set_port_state", make: newSetPortState})
}

// SetPortStateResult lists the ports set_port_state changed, or would have.
type SetPortStateResult struct {
	// Action is disable, enable, init or "" for a dry run.
	Action string            `json:"action"`
	Ports  []PortStateChange `json:"ports"`
}

type setPortStateFlags struct {
	disable, enable, init bool
	df                    discoverFlags
	addr                  addrFlags
}

func newSetPortState(e *Env) *cobra.Command {
	var f setPortStateFlags
	c := &cobra.Command{
		Use:   "set_port_state [flags] TARGET[@PORT_NUM]...",
		Short: "disable, enable or reset links, reaching them around the links changed (python-rdma set_port_state)",
		Long: `set_port_state changes the port state of several ports at once. It
discovers the subnet, leaves out the links of every port named, and reaches
each port by a directed route that crosses none of them, so that it can cut
the fabric in two and still reach every port it was asked to change on this
side. TARGET is a LID, port GUID, GID, directed route or path spec of an
end port, or a node's name or description; @PORT_NUM picks a port of its
node (needed for a switch). --discovery and --cache (python-rdma) choose
how the subnet is found; the changes are always SMPs along directed routes.

  --disable  PortPhysicalState Disabled
  --enable   PortPhysicalState Polling
  --init     PortState Down: the link retrains and comes back in Init

Without one of them it only says what it would change. All reads are done
before the first change.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSetPortState(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVar(&f.disable, "disable", false, "set the physical port state to disabled")
	fl.BoolVar(&f.enable, "enable", false, "set the physical port state to polling")
	fl.BoolVar(&f.init, "init", false, "set the port state to down, so that the link comes back in init")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "the targets are directed routes")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "the targets are LIDs")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "the targets are GUIDs")
	f.df.register(c, false)
	return c
}

type portTarget struct {
	arg  string
	port *subnet.Port // the end port the target names
	num  int          // the port of its node to change
}

func runSetPortState(e *Env, f *setPortStateFlags, args []string) error {
	n := 0
	res := &SetPortStateResult{Ports: []PortStateChange{}}
	var phys, state uint8
	for _, o := range []struct {
		on     bool
		name   string
		phys   uint8
		pstate uint8
	}{{f.disable, "disable", 3, 0}, {f.enable, "enable", 2, 0}, {f.init, "init", 0, 1}} {
		if o.on {
			n++
			res.Action, phys, state = o.name, o.phys, o.pstate
		}
	}
	if n > 1 {
		return usagef("--disable, --enable and --init exclude each other")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	sn, rep, err := e.discoverWith(s, f.df, false)
	if err != nil {
		return fmt.Errorf("discovering the subnet: %w", err)
	}
	names, err := loadNames("")
	if err != nil {
		return err
	}
	var targets []portTarget
	cut := map[subnet.PortKey]bool{}
	for _, a := range args {
		spec, idx, hasIdx := strings.Cut(a, "@")
		p, err := findInSubnet(sn, rep, spec, &f.addr, names)
		if err != nil {
			return err
		}
		num := p.Num
		if hasIdx {
			v, err := strconv.Atoi(idx)
			if err != nil || v < 0 || v > p.Node.NumPorts {
				return usagef("%s: no port %q on that node", a, idx)
			}
			num = v
		} else if p.Node.Type == iba.NodeTypeSwitch {
			return usagef("Need to have a port index for switch %s", p.GUID.Colon())
		}
		targets = append(targets, portTarget{arg: a, port: p, num: num})
		cut[subnet.PortKey{Node: p.Node.GUID, Num: num}] = true
		for _, n := range []*subnet.Node{p.Node, sn.Node(p.Node.GUID)} {
			if q := n.Port(num); n != nil && q != nil && q.Remote != nil && q.Remote.Node != nil {
				cut[q.Remote.Key()] = true
			}
		}
	}
	routes := sn.RoutesAvoiding(cut, int(s.local.PortNum))
	var plans []struct {
		t     portTarget
		dr    *ibpath.DRPath
		route string
		pi    iba.PortInfo
	}
	for _, t := range targets {
		path, ok := routes.Port(t.port.Node, t.num)
		if !ok {
			return noRoute(routes, t)
		}
		dr, route := drTarget(path, s.local.LID)
		var pi iba.PortInfo
		if err := s.mc.SubnGet(e.Ctx, dr, &pi, uint32(t.num)); err != nil {
			return fmt.Errorf("reading PortInfo of %s port %d: %w", t.port.GUID.Colon(), t.num, err)
		}
		plans = append(plans, struct {
			t     portTarget
			dr    *ibpath.DRPath
			route string
			pi    iba.PortInfo
		}{t, dr, route, pi})
	}
	var text strings.Builder
	for _, p := range plans {
		ch := PortStateChange{PortGUID: p.t.port.GUID.Colon(), Port: p.t.num, Route: p.route,
			StateBefore: p.pi.PortState.String(), PhysStateBefore: p.pi.PortPhysicalState.String()}
		if res.Action == "" {
			fmt.Fprintf(&text, "Would have changed %s@%d on %s\n", ch.PortGUID, ch.Port, ch.Route)
			res.Ports = append(res.Ports, ch)
			continue
		}
		if err := setPortState(e.Ctx, s.mc, p.dr, p.t.num, p.pi, iba.PortState(state), iba.PhysPortState(phys)); err != nil {
			return fmt.Errorf("setting the port state of %s@%d on %s: %w", ch.PortGUID, ch.Port, ch.Route, err)
		}
		if phys != 0 {
			ch.Set = "PortPhysicalState " + iba.PhysPortState(phys).String()
		} else {
			ch.Set = "PortState " + iba.PortState(state).String()
		}
		fmt.Fprintf(&text, "Changed %s@%d on %s: %s (was %s, %s)\n", ch.PortGUID, ch.Port, ch.Route, ch.Set, ch.StateBefore, ch.PhysStateBefore)
		res.Ports = append(res.Ports, ch)
	}
	if e.JSON {
		return e.writeJSON("set_port_state", res)
	}
	_, err = fmt.Fprint(e.Stdout, text.String())
	return err
}

// noRoute explains a port that cannot be reached around the cut links, and
// points at the peer port when that one can be.
func noRoute(routes *subnet.DRRoutes, t portTarget) error {
	if q := t.port.Node.Port(t.num); q != nil && q.Remote != nil && q.Remote.Node != nil {
		if _, ok := routes.Port(q.Remote.Node, q.Remote.Num); ok {
			peer := q.Remote.Node.EndPort()
			if peer == nil {
				peer = q.Remote
			}
			return fmt.Errorf("no DR path exists to %s port %d - try using the peer %s port %d",
				t.port.GUID.Colon(), t.num, peer.GUID.Colon(), q.Remote.Num)
		}
	}
	return fmt.Errorf("no DR path exists to %s port %d", t.port.GUID.Colon(), t.num)
}
