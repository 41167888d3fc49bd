package diags

import (
	"context"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

// Port state changes along directed routes, as python-rdma's
// set_port_state and init_all_ports make them.

// PortStateChange is one port and the directed route used to reach it.
type PortStateChange struct {
	PortGUID string `json:"portGUID"`
	Port     int    `json:"port"`
	Route    string `json:"route"`
	// Before is the port's PortInfo:PortState and PortPhysicalState as
	// read before the change.
	StateBefore     string `json:"stateBefore"`
	PhysStateBefore string `json:"physStateBefore"`
	// Set says what was written; empty for a dry run.
	Set string `json:"set,omitempty"`
}

// drTarget is the SMP target of a directed route from the local port, and
// the route as the commands print it.
func drTarget(path subnet.DRPath, localLID uint16) (*ibpath.DRPath, string) {
	dr := ibpath.NewDR(append([]byte{0}, path...)...)
	return dr, dr.Route().DR.String(localLID)
}

// setPortState writes PortInfo pi back to port num with the port state and
// physical state given (IBA 14.2.5.6; 0 leaves one unchanged) and no
// change of the enabled speeds and widths.
func setPortState(ctx context.Context, mc *mad.Client, t mad.Target, num int, pi iba.PortInfo, state iba.PortState, phys iba.PhysPortState) error {
	pi.PortState, pi.PortPhysicalState = state, phys
	pi.LinkSpeedEnabled, pi.LinkWidthEnabled = 0, 0
	return mc.SubnSet(ctx, t, &pi, uint32(num))
}
