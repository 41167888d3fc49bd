package sim

import (
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// SetNodeGUID makes a node report guid as its NodeInfo:NodeGUID (IBA
// 14.2.5.3) from now on, as a device with a misprogrammed GUID does: two
// nodes can be given the same GUID to stage a duplicate. A switch reports
// its node GUID as its port GUID too. The fabric still knows the node by
// its topology id and GUID (FindNode, the SM's bookkeeping); what changes
// is what the SMA answers, so a sweep after this one (the built-in SM's,
// OpenSM's, a discovery) sees the devices as they now are.
func (f *Fabric) SetNodeGUID(name string, guid iba.GUID) error {
	n, ok := f.ids[name]
	if !ok {
		return fmt.Errorf("setting the node GUID: %w: %q", ErrNoNode, name)
	}
	nd := &f.nodes[n]
	nd.mu.Lock()
	nd.guid = guid
	if nd.sw != nil {
		for p := int32(0); p <= int32(nd.numPorts); p++ {
			f.ports[nd.base+p].guid = guid
		}
	}
	nd.mu.Unlock()
	return nil
}

// SetPortGUID makes a CA or router port report guid as its port GUID
// (NodeInfo:PortGUID when asked through that port, and GUIDInfo index 0),
// to stage a duplicate port GUID. A switch's ports share its node GUID:
// use SetNodeGUID for them.
func (f *Fabric) SetPortGUID(name string, portNum int, guid iba.GUID) error {
	i, err := f.portIndex(name, portNum)
	if err != nil {
		return fmt.Errorf("setting the port GUID: %w", err)
	}
	p := &f.ports[i]
	nd := &f.nodes[p.node]
	if nd.sw != nil {
		return fmt.Errorf("setting the port GUID of %s port %d: a switch's ports carry its node GUID (SetNodeGUID)", name, portNum)
	}
	nd.mu.Lock()
	p.guid = guid
	nd.mu.Unlock()
	return nil
}

// SetSMInfo makes an end port (a CA port, or a switch's port 0) answer
// SMInfo Get (IBA 14.2.5.13) as a subnet manager in info's state and
// priority would, and sets PortInfo:CapabilityMask.IsSM there, so that
// tools that look for SMs (IBA 14.4) find it: a standby SM, or a second
// master, beside the built-in one. info.GUID 0 takes the port's GUID. Each
// Get answered counts as activity (SMInfo:ActCount moves). A nil info
// takes the SM away again. The built-in SM's own port keeps answering as
// the built-in SM.
func (f *Fabric) SetSMInfo(name string, portNum int, info *iba.SMInfo) error {
	i, err := f.portIndex(name, portNum)
	if err != nil {
		return fmt.Errorf("setting SMInfo: %w", err)
	}
	p := &f.ports[i]
	nd := &f.nodes[p.node]
	if nd.sw != nil && portNum != 0 {
		return fmt.Errorf("setting SMInfo of %s port %d: a switch's SM runs on port 0", name, portNum)
	}
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if info == nil {
		p.sm = nil
		p.capMask &^= capIsSM
		return nil
	}
	c := *info
	if c.GUID == 0 {
		c.GUID = p.guid
	}
	p.sm = &c
	p.capMask |= capIsSM
	return nil
}

// capIsSM is PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6, table 146, bit 1).
const capIsSM = 1 << 1

// otherSM answers SMInfo at a port that SetSMInfo made an SM; it reports
// whether it did.
func (f *Fabric) otherSM(to int32, m *msg) bool {
	p := &f.ports[to]
	nd := &f.nodes[p.node]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if p.sm == nil {
		return false
	}
	b := m.buf[:]
	method := b[offMethod]
	if method != methodGet && method != methodSet {
		setResponse(b, statusMethodUnsupp)
		return true
	}
	p.sm.ActCount++
	clear(b[offSMPData : offSMPData+64])
	p.sm.MarshalTo(b[offSMPData:])
	setResponse(b, 0)
	return true
}

// SetCableWidths says which link widths (PortInfo:LinkWidth bits, IBA
// 14.2.5.6) the cable at a port can carry, as a cable with broken lanes
// can carry fewer than the ports enable: the link retrains at once to the
// widest width both ends enable that the cable carries (a 1x cable
// between two 4x ports trains at 1x), and trains so again after a flap.
// The enabled and supported widths stay as they were; 0 gives back a
// cable that carries any width.
func (f *Fabric) SetCableWidths(name string, portNum int, widths uint8) error {
	i, err := f.portIndex(name, portNum)
	if err != nil {
		return fmt.Errorf("setting cable widths: %w", err)
	}
	p := &f.ports[i]
	if p.peer < 0 {
		return fmt.Errorf("setting cable widths of %s port %d: %w", name, portNum, ErrNoLink)
	}
	unlock := f.lock2(i, p.peer)
	p.cable, f.ports[p.peer].cable = widths, widths
	unlock()
	f.renegotiate(i)
	return nil
}

// ErrNoLink is returned for a port that has no cable.
var ErrNoLink = errors.New("sim: no cable at the port")

// cableWidths is the widths the cable at p carries (all when not set);
// caller holds p's node lock.
func cableWidths(p *port) uint8 {
	if p.cable == 0 {
		return 0xFF
	}
	return p.cable
}
