package mad

import (
	"fmt"
	"strings"
	"time"
)

// LIDPermissive is the permissive LID (IBA 4.1.3): the DLID of a directed
// route SMP that starts at the local port.
const LIDPermissive = 0xffff

// MaxHops is the most hops a directed route may take (IBA 14.2.1.2: the
// initial path has 64 entries, entry 0 unused).
const MaxHops = 63

// Target is where an RPC goes. Package ibpath's paths implement it; Route
// implements it for callers that have the addressing already.
type Target interface {
	// Route gives the addressing and the per-path timing.
	Route() Route
	// String names the target in messages and errors.
	String() string
}

// DirectedRoute is the directed route part of an SMP (IBA 14.2.2): the
// initial path and the LIDs at which the LID-routed parts end.
type DirectedRoute struct {
	// Path is the initial path: Path[0] is 0, Path[i] the port out of hop
	// i; the hop count is len(Path)-1.
	Path []byte
	// DrSLID and DrDLID are LIDPermissive unless the route starts (DrSLID,
	// with Addr.LID the LID-routed start) or ends (DrDLID) LID routed.
	DrSLID, DrDLID uint16
}

// Route is the addressing of a request and how long to wait for its reply.
// It is a Target by itself.
type Route struct {
	// Addr is the LRH/GRH/BTH/DETH addressing of the request (QPN and
	// Q_Key are chosen by the client for SMPs).
	Addr Addr
	// DR, when set, sends SMPs directed route (class 0x81); GMPs refuse a
	// directed route.
	DR *DirectedRoute
	// Timeout is the wait per try and Tries the number of sends before an
	// RPC fails; zero values take the client's (WithTimeout, WithRetries).
	Timeout time.Duration
	Tries   int
	// MKey goes into SMPs (IBA 14.2.1.1), SMKey into SA requests (15.2.1.1).
	MKey  uint64
	SMKey uint64
	// CCKey goes into congestion control MADs (IBA A10.4.1).
	CCKey uint64
	// Name, when set, is what String prints.
	Name string
}

// Route returns r itself.
func (r Route) Route() Route { return r }

// String names the route as python-rdma prints paths: "DR Path (0, 1, 4)"
// or "Path LID 5 SL=0".
func (r Route) String() string {
	if r.Name != "" {
		return r.Name
	}
	if r.DR != nil {
		return r.DR.String(r.Addr.LID)
	}
	s := fmt.Sprintf("LID %d", r.Addr.LID)
	if r.Addr.GRH != nil {
		s = "GID " + r.Addr.GRH.GID.String() + " " + s
	}
	return s
}

// String prints the route as python-rdma does: "DR Path (0, 1, 4)", with
// the LID-routed parts before and after.
func (d *DirectedRoute) String(startLID uint16) string {
	hops := make([]string, len(d.Path))
	for i, p := range d.Path {
		hops[i] = fmt.Sprint(p)
	}
	p := "(" + strings.Join(hops, ", ") + ")"
	if len(hops) == 1 {
		p = "(" + hops[0] + ",)"
	}
	s := "DR Path "
	if d.DrSLID != LIDPermissive && d.DrSLID != 0 {
		s += fmt.Sprintf("%d -> ", startLID)
	}
	s += p
	if d.DrDLID != LIDPermissive && d.DrDLID != 0 {
		s += fmt.Sprintf(" -> %d", d.DrDLID)
	}
	return s
}

// Validate checks what an SMP needs: a path starting with 0 and at most
// MaxHops hops.
func (d *DirectedRoute) Validate() error {
	if len(d.Path) == 0 || d.Path[0] != 0 {
		return fmt.Errorf("directed route %v: must start with port 0", d.Path)
	}
	if len(d.Path)-1 > MaxHops {
		return fmt.Errorf("directed route has %d hops, at most %d", len(d.Path)-1, MaxHops)
	}
	for _, p := range d.Path[1:] {
		if p == 255 {
			return fmt.Errorf("directed route %v: port 255 is not a port", d.Path)
		}
	}
	return nil
}
