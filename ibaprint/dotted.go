package ibaprint

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
)

// Formatter spells the value of a component the way one C tool does. It is
// given the bytes of the whole structure, the component's bit offset and its
// width in bits; the table has checked that b holds them.
type Formatter func(b []byte, off, bits int) string

// Row is one line of a dotted renderer: the label the C tool prints, the
// dotted path of the component in the iba metadata, and how to spell it.
type Row struct {
	Label  string
	Path   string
	Format Formatter
	// Bits, when set, reads this many bits from where the component starts
	// instead of the component's own width: saquery prints some bytes and
	// words that hold several components (hop_flow_raw).
	Bits int
}

// literal reports whether the row is a fixed line ("\tRID") printed as is.
func (r Row) literal() bool { return r.Path == "" && r.Format == nil }

// Table renders a structure in the dotted style, one Row per line: Lead,
// the label, a colon when Colon is set, dots up to column Width, the value.
// The paths are resolved against the iba metadata once; a path that no
// longer resolves (a declaration renamed) is an error from Render and from
// Check, never a silently missing line.
type Table struct {
	Struct string
	Lead   string
	Colon  bool
	Width  int
	Rows   []Row

	once sync.Once
	s    *iba.Struct
	refs []iba.Ref
	need int
	err  error
}

func (t *Table) resolve() error {
	t.once.Do(func() {
		s, ok := iba.StructByName(t.Struct)
		if !ok {
			t.err = fmt.Errorf("dotted table: no structure %s", t.Struct)
			return
		}
		t.s = s
		for _, r := range t.Rows {
			if r.literal() {
				t.refs = append(t.refs, iba.Ref{})
				continue
			}
			ref, err := s.Lookup(r.Path)
			if err != nil {
				t.err = fmt.Errorf("dotted table for %s, label %q: %w", t.Struct, r.Label, err)
				return
			}
			w := ref.Bits()
			if r.Bits != 0 {
				w = r.Bits
			}
			t.refs = append(t.refs, ref)
			t.need = max(t.need, (ref.Off+w+7)/8)
		}
	})
	return t.err
}

// Check resolves every path of the table against the metadata.
func (t *Table) Check() error { return t.resolve() }

// Render writes one line per row for the structure in b.
func (t *Table) Render(w io.Writer, b []byte) error {
	if err := t.resolve(); err != nil {
		return err
	}
	if len(b) < t.need {
		return &iba.DecodeError{Struct: t.s.Name, Offset: len(b), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(b), t.need)}
	}
	var sb strings.Builder
	for i, r := range t.Rows {
		if r.literal() {
			sb.WriteString(r.Label)
			sb.WriteByte('\n')
			continue
		}
		ref := t.refs[i]
		bits := ref.Bits()
		if r.Bits != 0 {
			bits = r.Bits
		}
		t.line(&sb, r.Label, r.Format(b, ref.Off, bits))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (t *Table) line(sb *strings.Builder, label, value string) {
	sb.WriteString(t.Lead)
	sb.WriteString(label)
	n := len(label)
	if t.Colon {
		sb.WriteByte(':')
		n++
	}
	// libibmad leaves the dots out when the label fills the column.
	if d := t.Width - n; d > 0 {
		sb.WriteString(strings.Repeat(".", d))
	}
	sb.WriteString(value)
	sb.WriteByte('\n')
}

// getBits reads width (at most 64) bits at bit offset off, MSB first.
func getBits(b []byte, off, width int) uint64 {
	var v uint64
	for i := 0; i < width; {
		bi := (off + i) / 8
		bo := (off + i) % 8
		n := min(8-bo, width-i)
		v = v<<n | uint64(b[bi]>>(8-bo-n))&(1<<n-1)
		i += n
	}
	return v
}

// bytesAt gives the bytes of a byte-aligned component.
func bytesAt(b []byte, off, bits int) []byte {
	if off%8 != 0 {
		out := make([]byte, (bits+7)/8)
		for i := range out {
			out[i] = byte(getBits(b, off+8*i, min(8, bits-8*i)))
		}
		return out
	}
	return b[off/8 : (off+bits+7)/8]
}

// onUint adapts a formatter of an integer value (at most 64 bits).
func onUint(f func(v uint64, bits int) string) Formatter {
	return func(b []byte, off, bits int) string {
		if bits > 64 {
			bits = 64
		}
		return f(getBits(b, off, bits), bits)
	}
}

// LinkWidth renders a LinkWidthActive value (PortInfo, IBA 14.2.5.6) as
// libibmad's mad_dump_linkwidth does: "4X", or "undefined (n)".
func LinkWidth(v uint64) string {
	if n := iba.LinkWidthLanes(uint8(v)); n > 0 && v < 256 {
		return fmt.Sprintf("%dX", n)
	}
	return fmt.Sprintf("undefined (%d)", v)
}

// LinkSpeed renders a LinkSpeedActive value (PortInfo, IBA 14.2.5.6) as
// libibmad's mad_dump_linkspeed does: "10.0 Gbps", "Extended speed" for 0.
func LinkSpeed(v uint64) string {
	switch v {
	case 0:
		return "Extended speed"
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4:
		return "10.0 Gbps"
	}
	return fmt.Sprintf("undefined (%d)", v)
}

// LinkSpeedExt renders a LinkSpeedExtActive value (PortInfo, IBA 14.2.5.6)
// as libibmad's mad_dump_linkspeedext does: "25.78125 Gbps", "No Extended
// Speed" for 0.
func LinkSpeedExt(v uint64) string {
	switch v {
	case 0:
		return "No Extended Speed"
	case 1:
		return "14.0625 Gbps"
	case 2:
		return "25.78125 Gbps"
	case 4:
		return "53.125 Gbps"
	case 8:
		return "106.25 Gbps"
	}
	return fmt.Sprintf("undefined (%d)", v)
}

// ExtSpeed renders an active extended speed with both groups in one value
// (iba.PortInfo.ExtSpeeds, XDR as iba.LinkSpeedExtXDR) as libibnetdisc's
// ibnd_dump_agg_linkspeedext does (rdma-core 47 and later), which
// iblinkinfo, ibqueryerrors and ibnetdiscover's reports print: "212.5
// Gbps", "No Extended Speed" for 0.
func ExtSpeed(v uint64) string {
	if v == 32 {
		return "212.5 Gbps"
	}
	return LinkSpeedExt(v)
}

// LinkSpeedExt2 renders a LinkSpeedExtActive2 value (PortInfo, IBA
// 14.2.5.6, the XDR extension) as libibmad's mad_dump_linkspeedext2 does
// (rdma-core 47 and later): "212.5 Gbps", "No Extended Speed 2" for 0.
func LinkSpeedExt2(v uint64) string {
	switch v {
	case 0:
		return "No Extended Speed 2"
	case 1:
		return "212.5 Gbps"
	}
	return fmt.Sprintf("undefined (%d)", v)
}

// speedExt2List is libibmad's dump_linkspeedext2 (LinkSpeedExtSupported2
// and Enabled2): "0", "212.5 Gbps", and for any other bit " undefined (n)"
// alone, with its leading blank, written over the speed as libibmad writes
// it at the start of its buffer.
func speedExt2List(v uint64) string {
	switch {
	case v == 0:
		return "0"
	case v>>1 != 0:
		return fmt.Sprintf(" undefined (%d)", v)
	}
	return "212.5 Gbps"
}

// The libibmad formatters (libibmad/dump.c mad_dump_*), by the function they
// copy. Each takes the value and the component width; libibmad sizes hex by
// the whole bytes the field spans.

var (
	diagUint = onUint(func(v uint64, _ int) string { return fmt.Sprintf("%d", v) })
	diagHex  = onUint(func(v uint64, bits int) string { return fmt.Sprintf("0x%0*x", 2*((bits+7)/8), v) })

	diagLinkWidth    = onUint(func(v uint64, _ int) string { return LinkWidth(v) })
	diagLinkWidthSup = onUint(func(v uint64, _ int) string {
		s := widthList(v)
		switch v {
		case 1, 3, 7, 11, 15, 17, 19, 23, 27, 31:
		default:
			if v>>5 == 0 {
				s += " (IBA extension)"
			}
		}
		return s
	})
	diagLinkWidthEn = onUint(func(v uint64, _ int) string { return widthList(v) })

	diagLinkSpeed     = onUint(func(v uint64, _ int) string { return LinkSpeed(v) })
	diagLinkSpeedList = onUint(speedList)

	diagLinkSpeedExt    = onUint(func(v uint64, _ int) string { return LinkSpeedExt(v) })
	diagLinkSpeedExtSup = onUint(func(v uint64, _ int) string { return speedExtList(v) })
	diagLinkSpeedExtEn  = onUint(func(v uint64, _ int) string {
		if v == 30 {
			return "Extended link speeds disabled"
		}
		return speedExtList(v)
	})

	diagLinkSpeedExt2     = onUint(func(v uint64, _ int) string { return LinkSpeedExt2(v) })
	diagLinkSpeedExt2List = onUint(func(v uint64, _ int) string { return speedExt2List(v) })

	diagPortState = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "NoChange", "Down", "Initialize", "Armed", "Active")
	})
	diagPhysPortState = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "NoChange", "Sleep", "Polling", "Disabled",
			"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest")
	})
	diagLinkDownDefState = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "NoChange", "Sleep", "Polling")
	})
	diagMTU = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "", "256", "512", "1024", "2048", "4096")
	})
	diagVLCap = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "", "VL0", "VL0-1", "VL0-3", "VL0-7", "VL0-14")
	})
	diagOperVLs = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)", "No change", "VL0", "VL0-1", "VL0-3", "VL0-7", "VL0-14")
	})
	diagNodeType = onUint(func(v uint64, _ int) string {
		return pick(v, "?(%d)?", "", "Channel Adapter", "Switch", "Router")
	})
	diagPortCapMask  = onUint(func(v uint64, _ int) string { return bitList(v, portCapBits) })
	diagPortCapMask2 = onUint(func(v uint64, _ int) string { return bitList(v, portCap2Bits) })

	// diagNotDisplayed is what smpquery prints for the M_Key without -K.
	diagNotDisplayed Formatter = func([]byte, int, int) string { return "<not displayed>" }
)

// pick gives names[v], or the default format when v has no name.
func pick(v uint64, def string, names ...string) string {
	if v < uint64(len(names)) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf(def, v)
}

// widthList is libibmad's dump_linkwidth, "1X or 4X", with its quirk of
// keeping the last " or " before "undefined".
func widthList(v uint64) string {
	var s string
	for _, w := range []struct {
		bit  uint64
		name string
	}{{1, "1X"}, {2, "4X"}, {4, "8X"}, {8, "12X"}, {16, "2X"}} {
		if v&w.bit != 0 {
			s += w.name + " or "
		}
	}
	if v == 0 || v>>5 != 0 {
		return s + fmt.Sprintf("undefined (%d)", v)
	}
	return strings.TrimSuffix(s, " or ")
}

// speedList is libibmad's dump_linkspeed (LinkSpeedSupported and Enabled).
func speedList(v uint64, _ int) string {
	var s string
	for _, sp := range []struct {
		bit  uint64
		name string
	}{{1, "2.5 Gbps"}, {2, "5.0 Gbps"}, {4, "10.0 Gbps"}} {
		if v&sp.bit != 0 {
			s += sp.name + " or "
		}
	}
	if v == 0 || v>>3 != 0 {
		s += fmt.Sprintf("undefined (%d)", v)
	} else {
		s = strings.TrimSuffix(s, " or ")
	}
	switch v {
	case 1, 3, 5, 7:
	default:
		if v>>3 == 0 {
			s += " (IBA extension)"
		}
	}
	return s
}

// speedExtList is libibmad's dump_linkspeedext.
func speedExtList(v uint64) string {
	if v == 0 {
		return "0"
	}
	var s string
	for _, sp := range []struct {
		bit  uint64
		name string
	}{{1, "14.0625 Gbps"}, {2, "25.78125 Gbps"}, {4, "53.125 Gbps"}, {8, "106.25 Gbps"}} {
		if v&sp.bit != 0 {
			s += sp.name + " or "
		}
	}
	if v>>4 != 0 {
		return s + fmt.Sprintf("undefined (%d)", v)
	}
	return strings.TrimSuffix(s, " or ")
}

// bitList is mad_dump_portcapmask: the mask in hex, then one line of four
// tabs and a name per set bit that has one.
func bitList(v uint64, names map[int]string) string {
	s := fmt.Sprintf("0x%x", v)
	for i := 0; i < 32; i++ {
		if v&(1<<i) != 0 && names[i] != "" {
			s += "\n\t\t\t\t" + names[i]
		}
	}
	return s
}

// portCapBits are the PortInfo:CapabilityMask bits libibmad names (IBA
// 14.2.5.6, table 153), with its spellings.
var portCapBits = map[int]string{
	1: "IsSM", 2: "IsNoticeSupported", 3: "IsTrapSupported",
	4: "IsOptionalIPDSupported", 5: "IsAutomaticMigrationSupported",
	6: "IsSLMappingSupported", 7: "IsMKeyNVRAM", 8: "IsPKeyNVRAM",
	9: "IsLedInfoSupported", 10: "IsSMdisabled",
	11: "IsSystemImageGUIDsupported", 12: "IsPkeySwitchExternalPortTrapSupported",
	14: "IsExtendedSpeedsSupported", 15: "IsCapabilityMask2Supported",
	16: "IsCommunicatonManagementSupported", 17: "IsSNMPTunnelingSupported",
	18: "IsReinitSupported", 19: "IsDeviceManagementSupported",
	20: "IsVendorClassSupported", 21: "IsDRNoticeSupported",
	22: "IsCapabilityMaskNoticeSupported", 23: "IsBootManagementSupported",
	24: "IsLinkRoundTripLatencySupported", 25: "IsClientRegistrationSupported",
	26: "IsOtherLocalChangesNoticeSupported", 27: "IsLinkSpeedWidthPairsTableSupported",
	28: "IsVendorSpecificMadsTableSupported", 29: "IsMcastPkeyTrapSuppressionSupported",
	30: "IsMulticastFDBTopSupported", 31: "IsHierarchyInfoSupported",
}

// portCap2Bits are the PortInfo:CapabilityMask2 bits (IBA 14.2.5.6, table 154).
var portCap2Bits = map[int]string{
	0: "IsSetNodeDescriptionSupported", 1: "IsPortInfoExtendedSupported",
	2: "IsVirtualizationSupported", 3: "IsSwitchPortStateTableSupported",
	4: "IsLinkWidth2xSupported", 5: "IsLinkSpeedHDRSupported",
	6: "IsMKeyProtectBitsExtSupported", 7: "IsEnhancedTrap128Supported",
	8: "IsPartitionTopSupported", 9: "IsEnhancedQoSArbiterSupported",
	10: "IsLinkSpeedNDRSupported",
}

// The saquery formatters (infiniband-diags saquery.c printf formats).
var (
	saUint  = onUint(func(v uint64, _ int) string { return fmt.Sprintf("%d", v) })
	saHexUp = onUint(func(v uint64, _ int) string { return fmt.Sprintf("0x%X", v) })
	saHexLo = onUint(func(v uint64, _ int) string { return fmt.Sprintf("0x%x", v) })
	saGUID  = onUint(func(v uint64, _ int) string { return fmt.Sprintf("0x%016x", v) })
	// saNodeType is OpenSM's ib_get_node_type_str.
	saNodeType = onUint(func(v uint64, _ int) string {
		if v >= 1 && v <= 3 {
			return [...]string{"Channel Adapter", "Switch", "Router"}[v-1]
		}
		return "UNKNOWN"
	})
	saGID Formatter = func(b []byte, off, bits int) string {
		var g [16]byte
		copy(g[:], bytesAt(b, off, 128))
		return netip.AddrFrom16(g).String()
	}
	// saHexBytes prints bytes as %02X each (PathRecord resv2).
	saHexBytes Formatter = func(b []byte, off, bits int) string {
		return fmt.Sprintf("0x%X", bytesAt(b, off, bits))
	}
	// saNodeDesc is remap_node_name without a map: the text up to the first
	// NUL, anything unprintable as a space.
	saNodeDesc Formatter = func(b []byte, off, bits int) string { return cleanNodeDesc(bytesAt(b, off, bits)) }
)

func cleanNodeDesc(v []byte) string {
	out := make([]byte, 0, len(v))
	for _, c := range v {
		if c == 0 {
			break
		}
		if c < 0x20 || c > 0x7e {
			c = ' '
		}
		out = append(out, c)
	}
	return string(out)
}
