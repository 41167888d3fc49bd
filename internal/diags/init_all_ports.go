package diags

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "init_all_ports", make: newInitAllPorts})
}

// InitAllPortsResult lists the ports init_all_ports set Down, and those it
// could not.
type InitAllPortsResult struct {
	Ports  []PortStateChange `json:"ports"`
	Failed []PortStateChange `json:"failed,omitempty"`
}

func newInitAllPorts(e *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "init_all_ports [flags]",
		Short: "drop every active link back to Init (python-rdma init_all_ports)",
		Long: `init_all_ports discovers the subnet by directed route and sets every
port that is Armed or Active (switch port 0 aside) to Down, so that its link
retrains and comes back in Init, where it carries only management traffic.
It can recover a subnet from a credit loop deadlock; the SM then brings the
links up again. Ports farthest from here go first, this port last, so that
no change cuts the routes to the ones still to do. It may need more than one
run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInitAllPorts(e)
		},
	}
}

func runInitAllPorts(e *Env) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	sn, rep, err := subnet.Discover(e.Ctx, s.mc, subnet.DiscoverOptions{LocalLID: s.local.LID})
	if err != nil {
		return fmt.Errorf("discovering the subnet: %w", err)
	}
	// The ports of nodes the discovery lost are not reset: the run is
	// partial.
	lost := rep.Incomplete(sn)
	res := &InitAllPortsResult{Ports: []PortStateChange{}}
	var text strings.Builder
	nodes := sn.Nodes()
	routes := sn.RoutesAvoiding(nil, int(s.local.PortNum))
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		for num := n.NumPorts; num >= 1; num-- {
			p := n.Port(num)
			if p == nil || !p.HasInfo {
				continue
			}
			path, ok := routes.Port(n, num)
			if !ok {
				continue // a CA port with no switch behind it: no SMP reaches it
			}
			dr, route := drTarget(path, s.local.LID)
			pi := p.PortInfo()
			if pi.PortState == iba.PortState(1) || pi.PortState == iba.PortState(2) {
				continue
			}
			ch := PortStateChange{PortGUID: p.GUID.Colon(), Port: num, Route: route,
				StateBefore: pi.PortState.String(), PhysStateBefore: pi.PortPhysicalState.String(), Set: "PortState " + iba.PortState(1).String()}
			if err := setPortState(e.Ctx, s.mc, dr, num, pi, iba.PortState(1), 0); err != nil {
				fmt.Fprintf(&text, "Failed to set port state on %s@%d via %s\n    %v\n", ch.PortGUID, num, route, err)
				res.Failed = append(res.Failed, ch)
				continue
			}
			fmt.Fprintf(&text, "Changed %s@%d on %s: %s (was %s)\n", ch.PortGUID, num, route, ch.Set, ch.StateBefore)
			res.Ports = append(res.Ports, ch)
		}
	}
	if e.JSON {
		return incomplete(e.writeJSON("init_all_ports", res), lost)
	}
	_, err = fmt.Fprint(e.Stdout, text.String())
	return incomplete(err, lost)
}
