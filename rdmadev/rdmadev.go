package rdmadev

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/nldev"
)

// Device is one RDMA device as both views see it.
type Device struct {
	Name    string
	Sysfs   *device.Device // nil when sysfs does not list the device
	Netlink *nldev.Device  // nil when RDMA netlink does not list it
	Ports   []Port         // by port number, the union of both views
}

// Port is one port of a Device as both views see it.
type Port struct {
	Num     uint32
	Sysfs   *device.Port // nil when sysfs has no such port
	Netlink *nldev.Port  // nil when netlink has no such port
}

// Join reads the devices from sysfs under fs and from the kernel through c
// and pairs them by name, and their ports by number, in name and number
// order.
func Join(ctx context.Context, c *nldev.Conn, fs device.FS) ([]Device, error) {
	sys, err := fs.List()
	if err != nil {
		return nil, fmt.Errorf("joining sysfs and netlink: %w", err)
	}
	nl, err := c.Dev.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("joining sysfs and netlink: %w", err)
	}
	byName := map[string]*Device{}
	get := func(name string) *Device {
		if d, ok := byName[name]; ok {
			return d
		}
		d := &Device{Name: name}
		byName[name] = d
		return d
	}
	for _, s := range sys {
		get(s.Name).Sysfs = s
	}
	for i := range nl {
		d := get(nl[i].Name)
		d.Netlink = &nl[i]
		ports, err := c.Link.ListDevice(ctx, nl[i].Index)
		if err != nil {
			return nil, fmt.Errorf("joining sysfs and netlink: ports of %s: %w", nl[i].Name, err)
		}
		for j := range ports {
			portOf(d, ports[j].Port).Netlink = &ports[j]
		}
	}
	out := make([]Device, 0, len(byName))
	for _, d := range byName {
		if d.Sysfs != nil {
			for _, p := range d.Sysfs.Ports {
				portOf(d, uint32(p.Num)).Sysfs = p
			}
		}
		sort.Slice(d.Ports, func(i, j int) bool { return d.Ports[i].Num < d.Ports[j].Num })
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func portOf(d *Device, num uint32) *Port {
	for i := range d.Ports {
		if d.Ports[i].Num == num {
			return &d.Ports[i]
		}
	}
	d.Ports = append(d.Ports, Port{Num: num})
	return &d.Ports[len(d.Ports)-1]
}

// Mismatch is one attribute on which sysfs and netlink disagree.
type Mismatch struct {
	Device  string
	Port    uint32 // 0 for an attribute of the device
	Field   string // "node_guid", "state", "lid", ...
	Sysfs   string // the value as sysfs has it, "absent" when missing
	Netlink string
}

func (m Mismatch) String() string {
	where := m.Device
	if m.Port != 0 {
		where += "/" + strconv.Itoa(int(m.Port))
	}
	return fmt.Sprintf("%s %s: sysfs %s, netlink %s", where, m.Field, m.Sysfs, m.Netlink)
}

// LinkLayerOf gives the link layer a netlink device's protocol implies
// (RDMA_NLDEV_ATTR_DEV_PROTOCOL, from rdma_protocol_*): InfiniBand for "ib"
// and "opa", Ethernet for RoCE, iWARP and usNIC; Unknown otherwise.
func LinkLayerOf(protocol string) device.LinkLayer {
	switch protocol {
	case "ib", "opa":
		return device.LinkLayerInfiniBand
	case "roce", "iw", "usnic":
		return device.LinkLayerEthernet
	}
	return device.LinkLayerUnknown
}

// Check compares the two views of each device and port and returns every
// disagreement; none means they agree.
func Check(devs []Device) []Mismatch {
	var out []Mismatch
	for _, d := range devs {
		add := func(port uint32, field string, sys, nl any) {
			out = append(out, Mismatch{Device: d.Name, Port: port, Field: field, Sysfs: fmt.Sprint(sys), Netlink: fmt.Sprint(nl)})
		}
		s, n := d.Sysfs, d.Netlink
		switch {
		case s == nil:
			add(0, "device", "absent", "present")
			continue
		case n == nil:
			add(0, "device", "present", "absent")
			continue
		}
		if n.Has(nldev.AttrNodeGUID) && s.NodeGUID != n.NodeGUID {
			add(0, "node_guid", s.NodeGUID.Colon(), n.NodeGUID.Colon())
		}
		if n.Has(nldev.AttrSysImageGUID) && s.SysImageGUID != n.SysImageGUID {
			add(0, "sys_image_guid", s.SysImageGUID.Colon(), n.SysImageGUID.Colon())
		}
		if n.Has(nldev.AttrDevNodeType) && uint8(s.NodeType) != n.NodeType {
			add(0, "node_type", uint8(s.NodeType), n.NodeType)
		}
		if n.Has(nldev.AttrFWVersion) && s.FWVersion != n.FWVersion {
			add(0, "fw_ver", strconv.Quote(s.FWVersion), strconv.Quote(n.FWVersion))
		}
		if n.Has(nldev.AttrPortIndex) && uint32(len(s.Ports)) != n.NumPorts {
			add(0, "ports", len(s.Ports), n.NumPorts)
		}
		ll := device.LinkLayerUnknown
		if n.Has(nldev.AttrDevProtocol) {
			ll = LinkLayerOf(n.Protocol)
		}
		for _, p := range d.Ports {
			out = append(out, checkPort(d.Name, p, ll)...)
		}
	}
	return out
}

func checkPort(dev string, p Port, ll device.LinkLayer) []Mismatch {
	var out []Mismatch
	add := func(field string, sys, nl any) {
		out = append(out, Mismatch{Device: dev, Port: p.Num, Field: field, Sysfs: fmt.Sprint(sys), Netlink: fmt.Sprint(nl)})
	}
	s, n := p.Sysfs, p.Netlink
	switch {
	case s == nil:
		add("port", "absent", "present")
		return out
	case n == nil:
		add("port", "present", "absent")
		return out
	}
	if n.Has(nldev.AttrPortState) && uint8(s.State) != n.State {
		add("state", s.State, device.PortState(n.State))
	}
	if n.Has(nldev.AttrPortPhysState) && uint8(s.PhysState) != n.PhysState {
		add("phys_state", s.PhysState, device.PhysState(n.PhysState))
	}
	// fill_port_info sends LID, SM LID, LMC and the subnet prefix only
	// for InfiniBand ports; sysfs shows zeros for the others.
	num := func(field string, sys uint64, has bool, nl uint64) {
		if !has {
			nl = 0
		}
		if sys != nl {
			add(field, sys, nl)
		}
	}
	num("lid", uint64(s.LID), n.Has(nldev.AttrLID), uint64(n.LID))
	num("sm_lid", uint64(s.SMLID), n.Has(nldev.AttrSMLID), uint64(n.SMLID))
	num("lid_mask_count", uint64(s.LMC), n.Has(nldev.AttrLMC), uint64(n.LMC))
	if n.Has(nldev.AttrSubnetPrefix) && s.GIDPrefix != uint64(n.SubnetPrefix) {
		add("subnet_prefix", fmt.Sprintf("%#016x", s.GIDPrefix), fmt.Sprintf("%#016x", uint64(n.SubnetPrefix)))
	}
	// CAP_FLAGS is port_cap_flags | port_cap_flags2 << 32; sysfs cap_mask
	// is port_cap_flags.
	if n.Has(nldev.AttrCapFlags) && s.CapMask != uint32(n.CapFlags) {
		add("cap_mask", fmt.Sprintf("%#08x", s.CapMask), fmt.Sprintf("%#08x", uint32(n.CapFlags)))
	}
	if ll != device.LinkLayerUnknown && s.LinkLayer != ll {
		add("link_layer", s.LinkLayer, ll)
	}
	if n.Has(nldev.AttrNdevName) {
		// RoCE GIDs name their netdev; iWARP and InfiniBand ones do not.
		named, found := false, false
		for _, g := range s.GIDs {
			if g.NetDev != "" {
				named = true
				found = found || g.NetDev == n.NdevName
			}
		}
		if named && !found {
			add("netdev", "not among the GIDs' netdevs", n.NdevName)
		}
	}
	return out
}
