package diags

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/perf"
)

// The ibcheck* commands of python-rdma (libibtool/errors.py), on the
// engine in checks.go: their list, and the node, port and error checks.

var (
	checkNode      = check{kindNode, (*checkCtx).node}
	checkPortState = check{kindPort, (*checkCtx).portState}
	checkPortWidth = check{kindPort, (*checkCtx).portWidth}
	checkPort      = check{kindPort, (*checkCtx).port}
	checkErrors    = check{kindPerf, (*checkCtx).errors}
)

var checkSpecs = []checkSpec{
	{"ibchecknode", "check a node: SMP NodeInfo against the SA's NodeRecord, and an SA path to it", "TARGET", true, []check{checkNode}, ""},
	{"ibcheckport", "check a port's physical and logical state, width and speed", "TARGET PORT", true, []check{checkPortState, checkPortWidth, checkPort}, ""},
	{"ibcheckportstate", "check that a port is LinkUp and Active", "TARGET PORT", true, []check{checkPortState}, ""},
	{"ibcheckportwidth", "check that a port runs at the widest width both ends support", "TARGET PORT", true, []check{checkPortWidth}, ""},
	{"ibcheckerrs", "check a port's PortCounters against the error thresholds", "TARGET [PORT]", true, []check{checkErrors}, ""},
	{"ibcheckstate", "run ibchecknode on every node and ibcheckportstate on every port", "", false, []check{checkNode, checkPortState}, ""},
	{"ibcheckwidth", "run ibchecknode on every node and ibcheckportwidth on every port", "", false, []check{checkNode, checkPortWidth}, ""},
	{"ibchecknet", "run ibchecknode on every node, ibcheckport and ibcheckerrs on every port", "", false, []check{checkNode, checkPortState, checkPortWidth, checkPort, checkErrors}, ""},
	{"ibcheckerrors", "run ibchecknode on every node, ibcheckportstate and ibcheckerrs on every port", "", false, []check{checkNode, checkPortState, checkErrors}, ""},
}

func init() {
	for _, sp := range checkSpecs {
		registerCheck(sp)
	}
}

// portState is do_check_portstate.
func (c *checkCtx) portState() error {
	if err := c.expect("portPhysicalState", physStateName(c.pi.PortPhysicalState), physStateName(iba.PhysPortStateLinkUp), true); err != nil {
		return err
	}
	return c.expect("portState", portStateName(c.pi.PortState), portStateName(iba.PortStateActive), false)
}

func physStateName(s iba.PhysPortState) string {
	switch s {
	case 1:
		return "Sleep"
	case iba.PhysPortStatePolling:
		return "Polling"
	case iba.PhysPortStateDisabled:
		return "Disabled"
	case 4:
		return "Config.Train"
	case iba.PhysPortStateLinkUp:
		return "Link UP"
	case iba.PhysPortStateLinkErrRecovery:
		return "Error Recovery"
	case 7:
		return "Phy Test"
	}
	return fmt.Sprintf("?? %d", s)
}

func portStateName(s iba.PortState) string {
	switch s {
	case 1:
		return "Down"
	case 2:
		return "Init"
	case 3:
		return "Armed"
	case iba.PortStateActive:
		return "Active"
	}
	return fmt.Sprintf("?? %d", s)
}

// linkConfigured is errors.py's link_configured: speed and width mean
// something only on a link that is up.
func linkConfigured(pi *iba.PortInfo) bool {
	return pi.PortPhysicalState == iba.PhysPortStateLinkUp || pi.PortPhysicalState == iba.PhysPortStateLinkErrRecovery
}

// widestWidth is the supported width with the most lanes (python-rdma
// takes the highest bit, which ranks 2x, bit 4, above 12x).
func widestWidth(sup uint8) uint8 {
	best := uint8(0)
	for b := uint8(1); b != 0 && b <= 0x10; b <<= 1 {
		if sup&b != 0 && iba.LinkWidthLanes(b) > iba.LinkWidthLanes(best) {
			best = b
		}
	}
	return best
}

func widthName(w uint8) string { return fmt.Sprintf("%dx", iba.LinkWidthLanes(w)) }

// portWidth is do_check_portwidth: the active width is the widest both
// ends support.
func (c *checkCtx) portWidth() error {
	if !linkConfigured(&c.pi) {
		return nil
	}
	want := widestWidth(c.pi.LinkWidthSupported)
	if c.peer != nil {
		if !linkConfigured(c.peer) {
			return nil
		}
		if p := widestWidth(c.peer.LinkWidthSupported); iba.LinkWidthLanes(p) < iba.LinkWidthLanes(want) {
			want = p
		}
	}
	return c.expect("linkWidthActive", widthName(c.pi.LinkWidthActive), widthName(want), false)
}

// highestBit is errors.py's get_max.
func highestBit(v uint8) uint8 {
	if v == 0 {
		return 0
	}
	b := uint8(1)
	for v > 1 {
		v >>= 1
		b <<= 1
	}
	return b
}

func speedName(v uint8) string {
	var s []string
	for i, n := range []string{"SDR", "DDR", "QDR"} {
		if v&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	return strings.Join(s, ",")
}

func extSpeedName(v uint8) string {
	var s []string
	for i, n := range []string{"FDR", "EDR", "HDR", "NDR"} {
		if v&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	return strings.Join(s, ",")
}

// port is do_check_port: the speed is the fastest both ends support (the
// extended speeds when both have them, which python-rdma did not know),
// the port has a LID and an SM, and a CA port is the port it says it is.
func (c *checkCtx) port() error {
	if !linkConfigured(&c.pi) {
		return nil
	}
	if c.peer != nil && !linkConfigured(c.peer) {
		return nil
	}
	if c.pi.LinkSpeedExtSupported != 0 && (c.peer == nil || c.peer.LinkSpeedExtSupported != 0) {
		want := highestBit(c.pi.LinkSpeedExtSupported)
		if c.peer != nil {
			want = min(want, highestBit(c.peer.LinkSpeedExtSupported))
		}
		_ = c.expect("linkSpeedExtActive", extSpeedName(c.pi.LinkSpeedExtActive), extSpeedName(want), false)
	} else {
		want := highestBit(c.pi.LinkSpeedSupported)
		if c.peer != nil {
			want = min(want, highestBit(c.peer.LinkSpeedSupported))
		}
		_ = c.expect("linkSpeedActive", speedName(c.pi.LinkSpeedActive), speedName(want), false)
	}
	// A switch's external ports carry no LID or SM LID of their own
	// (IBA 14.2.5.6: those components are for port 0); python-rdma warned
	// about them on every switch port.
	if c.ni.NodeType != iba.NodeTypeSwitch || c.portIdx == 0 {
		if c.pi.LID == 0 {
			c.warn("LID is '0', but shouldn't be '0': %s", c.desc)
		}
		if c.pi.MasterSMLID == 0 {
			c.warn("masterSMLID is '0', but shouldn't be '0': %s", c.desc)
		}
	}
	if c.ni.NodeType != iba.NodeTypeSwitch {
		return c.expect("localPortNum", strconv.Itoa(int(c.pi.LocalPortNum)), strconv.Itoa(c.portIdx), false)
	}
	return nil
}

// node is do_check_node: the SA's NodeRecord for the port's LID names the
// same port GUID as the SMP NodeInfo, and the SA has a path to it.
func (c *checkCtx) node() error {
	ctx := c.r.e.Ctx
	rec := iba.NodeRecord{LID: c.epLID}
	if c.epLID == 0 {
		rec = iba.NodeRecord{NodeInfo: iba.NodeInfo{PortGUID: c.pguid}}
	}
	if err := c.r.sa.Get(ctx, &rec); err != nil {
		return fmt.Errorf("SA NodeRecord of lid %d: %w", c.epLID, err)
	}
	if rec.NodeInfo.PortGUID != c.pguid {
		return &CheckError{Msg: fmt.Sprintf("SA and SMP NodeInfo's differ %s != %s", c.pguid.Colon(), rec.NodeInfo.PortGUID.Colon())}
	}
	lp := c.r.s.local
	sgid := iba.MakeGID(lp.GIDPrefix, lp.PortGUID)
	dgid := iba.MakeGID(lp.GIDPrefix, c.pguid)
	if _, err := c.r.sa.PathRecord(ctx, sgid, dgid, 0); err != nil {
		if mad.IsNoRecords(err) {
			return &CheckError{Msg: fmt.Sprintf("SA could not find a path for %s", c.pguid.Colon())}
		}
		return fmt.Errorf("SA PathRecord to %s: %w", c.pguid.Colon(), err)
	}
	return nil
}

// errors is do_check_errors: every counter with a threshold above 0 is at
// most its threshold.
func (c *checkCtx) errors() error {
	b, err := c.getPerf()
	if err != nil {
		return err
	}
	c.recordCounters(b)
	desc := fmt.Sprintf("lid %d port %d", c.epLID, c.portIdx)
	if c.portIdx == perf.AllPorts {
		desc = fmt.Sprintf("lid %d all ports", c.epLID)
	}
	s := (&iba.PortCounters{}).Desc()
	for _, k := range c.r.names {
		limit := c.r.thresh[k]
		if limit == 0 {
			continue
		}
		ref, err := s.Lookup(k)
		if err != nil {
			return err
		}
		if v := ref.Uint(b); v > limit {
			c.warn("%s is '%d', expected less than '%d': %s", k, v, limit, desc)
		}
	}
	return nil
}
