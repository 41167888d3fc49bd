package testbed

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// GUIDs of generated fabrics: deterministic, distinct per role, and under
// one vendor OUI (0x0002c9) so they read like real ones. A CA's GUID leaves
// room below the next one for its port GUIDs (node GUID + port).
const (
	LeafGUIDBase  iba.GUID = 0x0002c90300a00000 // + leaf number
	SpineGUIDBase iba.GUID = 0x0002c90300b00000 // + spine number
	HCAGUIDBase   iba.GUID = 0x0002c90300c00000 // + HCA number << 4
)

// LeafName is the name FatTree gives leaf switch i (from 1): "S-leaf-i".
func LeafName(i int) string { return fmt.Sprintf("S-leaf-%d", i) }

// SpineName is the name FatTree gives spine switch i (from 1).
func SpineName(i int) string { return fmt.Sprintf("S-spine-%d", i) }

// HCAName is the name FatTree gives HCA i (from 1, across the fabric).
func HCAName(i int) string { return fmt.Sprintf("H-%d", i) }

// FatTree describes a two-level fat tree (leaf-spine): every leaf switch
// links to every spine switch, and HCAs hang off the leaves.
//
// Port numbering on a leaf: its HCAs' port 1 on ports 1..HCAsPerLeaf; with
// DualPortHCAs, the port 2 of the previous leaf's HCAs on the next
// HCAsPerLeaf ports (so each dual-port HCA reaches two leaves, or its own
// leaf twice when there is one); then spine s on the following port s.
// Spine port l goes to leaf l. HCAs are numbered across the fabric, leaf by
// leaf: H-1..H-<HCAsPerLeaf> on S-leaf-1, and so on.
type FatTree struct {
	Leaves, Spines, HCAsPerLeaf int
	DualPortHCAs                bool
	// HostWidth and HostSpeed are the rate of HCA links, UplinkWidth and
	// UplinkSpeed the rate of leaf-spine links; 4x QDR when zero.
	HostWidth   Width
	HostSpeed   Speed
	UplinkWidth Width
	UplinkSpeed Speed
}

// Build makes the fabric. Change it afterwards (Unlink, a Link's ends) for
// missing or degraded links.
func (ft FatTree) Build() (*Fabric, error) {
	switch {
	case ft.Leaves < 1:
		return nil, fmt.Errorf("%w: fat tree needs at least one leaf, got %d", ErrInvalidFabric, ft.Leaves)
	case ft.Spines < 0 || ft.HCAsPerLeaf < 0:
		return nil, fmt.Errorf("%w: negative spine or HCA count", ErrInvalidFabric)
	case ft.Leaves > 1 && ft.Spines == 0:
		return nil, fmt.Errorf("%w: %d leaves and no spine are not connected", ErrInvalidFabric, ft.Leaves)
	case ft.Leaves > 0xfffff || ft.Spines > 0xfffff || ft.Leaves*ft.HCAsPerLeaf > 0xffff:
		return nil, fmt.Errorf("%w: fat tree too large for the GUID plan", ErrInvalidFabric)
	}
	hw, hs := ft.HostWidth, ft.HostSpeed
	if hw == 0 {
		hw = Width4x
	}
	if hs == "" {
		hs = QDR
	}
	uw, us := ft.UplinkWidth, ft.UplinkSpeed
	if uw == 0 {
		uw = Width4x
	}
	if us == "" {
		us = QDR
	}
	hcaPorts := 1
	if ft.DualPortHCAs {
		hcaPorts = 2
	}
	down := ft.HCAsPerLeaf * hcaPorts
	leafPorts := max(down+ft.Spines, 1)

	f := &Fabric{Title: fmt.Sprintf("fat tree, %d leaves, %d spines, %d HCAs per leaf", ft.Leaves, ft.Spines, ft.HCAsPerLeaf)}
	if ft.DualPortHCAs {
		f.Title += " (dual-port)"
	}
	for l := 1; l <= ft.Leaves; l++ {
		f.AddSwitch(LeafName(l), leafPorts, LeafGUIDBase+iba.GUID(l))
	}
	for s := 1; s <= ft.Spines; s++ {
		f.AddSwitch(SpineName(s), ft.Leaves, SpineGUIDBase+iba.GUID(s))
	}
	for l := 1; l <= ft.Leaves; l++ {
		for i := 1; i <= ft.HCAsPerLeaf; i++ {
			h := (l-1)*ft.HCAsPerLeaf + i
			f.AddCA(HCAName(h), hcaPorts, HCAGUIDBase+iba.GUID(h)<<4)
			f.Connect(HCAName(h), 1, LeafName(l), i, hw, hs)
			if ft.DualPortHCAs {
				next := l%ft.Leaves + 1
				f.Connect(HCAName(h), 2, LeafName(next), ft.HCAsPerLeaf+i, hw, hs)
			}
		}
	}
	for l := 1; l <= ft.Leaves; l++ {
		for s := 1; s <= ft.Spines; s++ {
			f.Connect(LeafName(l), down+s, SpineName(s), l, uw, us)
		}
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// UplinkPort is the leaf port that FatTree links to spine s.
func (ft FatTree) UplinkPort(s int) int {
	if ft.DualPortHCAs {
		return 2*ft.HCAsPerLeaf + s
	}
	return ft.HCAsPerLeaf + s
}
