package ibaprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// The rest of saquery's record dumps (infiniband-diags saquery.c, rdma-core
// 44): the records its other query names, -s, -g and -m print, and the SA's
// ClassPortInfo. Like saquery.go, each prints exactly what the C tool prints
// for one record, from the record's bytes.

// saHexW is printf's 0x%0<w>X.
func saHexW(w int) Formatter {
	return onUint(func(v uint64, _ int) string { return fmt.Sprintf("0x%0*X", w, v) })
}

// byteLSB reads the least significant bit of byte at of the structure, in
// the printf format given:
// libibmad's ib_member_rec_t declares proxy_join as the first one-bit field
// of its byte, which GCC puts in the low bit, where the IBA has a reserved
// bit (IBA 15.2.5.17 puts ProxyJoin in the high bit). OpenSM uses the same
// declaration, so the two agree with each other; saquery prints that bit.
func byteLSB(at int, format string) Formatter {
	return func(b []byte, _, _ int) string {
		if at >= len(b) {
			return fmt.Sprintf(format, 0)
		}
		return fmt.Sprintf(format, b[at]&1)
	}
}

var saClassPortInfo = saTable("ClassPortInfo", 25,
	lit("SA ClassPortInfo:"),
	Row{"Base version", "baseVersion", saUint, 0},
	Row{"Class version", "classVersion", saUint, 0},
	Row{"Capability mask", "capabilityMask", saHexW(4), 0},
	Row{"Capability mask 2", "capabilityMask2", saHexW(8), 0},
	Row{"Response time value", "respTimeValue", saHexW(2), 0},
	Row{"Redirect GID", "redirectGID", saGID, 0},
	Row{"Redirect TC/SL/FL", "redirectTC", saHexW(8), 32},
	Row{"Redirect LID", "redirectLID", saUint, 0},
	Row{"Redirect PKey", "redirectPKey", saHexW(4), 0},
	Row{"Redirect QP", "reserved_256", saHexW(8), 32},
	Row{"Redirect QKey", "redirectQKey", saHexW(8), 0},
	Row{"Trap GID", "trapGID", saGID, 0},
	Row{"Trap TC/SL/FL", "trapTC", saHexW(8), 32},
	Row{"Trap LID", "trapLID", saUint, 0},
	Row{"Trap PKey", "trapPKey", saHexW(4), 0},
	Row{"Trap HL/QP", "trapHL", saHexW(8), 32},
	Row{"Trap QKey", "trapQKey", saHexW(8), 0},
)

// SAClassPortInfo prints the SA's ClassPortInfo (IBA 13.4.8.1) as
// `saquery -c` does.
func SAClassPortInfo(w io.Writer, b []byte) error { return saClassPortInfo.Render(w, b) }

var saPortInfoRecordSM = saTable("PortInfoRecord", 24,
	lit("PortInfoRecord dump:"),
	Row{"EndPortLid", "endportLID", saUint, 0},
	Row{"PortNum", "portNum", saUint, 0},
	Row{"base_lid", "portInfo.LID", saUint, 0},
	Row{"master_sm_base_lid", "portInfo.masterSMLID", saUint, 0},
	Row{"capability_mask", "portInfo.capabilityMask", saHexUp, 0},
)

// SAPortInfoRecordBrief prints a PortInfoRecord as `saquery -s` lists the
// ports with IsSM or IsSMdisabled.
func SAPortInfoRecordBrief(w io.Writer, b []byte) error { return saPortInfoRecordSM.Render(w, b) }

var saMCMemberRecord = saTable("MCMemberRecord", 24,
	lit("MCMember Record dump:"),
	Row{"MGID", "MGID", saGID, 0},
	Row{"PortGid", "portGID", saGID, 0},
	Row{"qkey", "QKey", saHexLo, 0},
	Row{"mlid", "MLID", saHexLo, 0},
	Row{"mtu", "MTUSelector", saHexLo, 8},
	Row{"TClass", "TClass", saHexLo, 0},
	Row{"pkey", "PKey", saHexLo, 0},
	Row{"rate", "rateSelector", saHexLo, 8},
	Row{"pkt_life", "packetLifeTimeSelector", saHexLo, 8},
	Row{"SL", "SL", saHexLo, 0},
	Row{"FlowLabel", "flowLabel", saHexLo, 0},
	Row{"HopLimit", "hopLimit", saHexLo, 0},
	Row{"Scope", "scope", saHexLo, 0},
	Row{"JoinState", "joinState", saHexLo, 0},
	Row{"ProxyJoin", "proxyJoin", byteLSB(49, "0x%x"), 0},
)

// SAMCMemberRecord prints an MCMemberRecord (IBA 15.2.5.17) as `saquery
// MCMR` does.
func SAMCMemberRecord(w io.Writer, b []byte) error { return saMCMemberRecord.Render(w, b) }

var saMCGroupRecord = saTable("MCMemberRecord", 24,
	lit("MCMemberRecord group dump:"),
	Row{"MGID", "MGID", saGID, 0},
	Row{"Mlid", "MLID", saHexUp, 0},
	Row{"Mtu", "MTUSelector", saHexUp, 8},
	Row{"pkey", "PKey", saHexUp, 0},
	Row{"Rate", "rateSelector", saHexUp, 8},
	Row{"SL", "SL", saHexUp, 0},
)

// SAMCGroupRecord prints an MCMemberRecord as `saquery -g` lists groups.
func SAMCGroupRecord(w io.Writer, b []byte) error { return saMCGroupRecord.Render(w, b) }

var saMCMemberOf = saTable("MCMemberRecord", 24,
	lit("MCMemberRecord member dump:"),
	Row{"MGID", "MGID", saGID, 0},
	Row{"Mlid", "MLID", saHexUp, 0},
	Row{"PortGid", "portGID", saGID, 0},
	Row{"ScopeState", "scope", saHexUp, 8},
	Row{"ProxyJoin", "proxyJoin", byteLSB(49, "0x%X"), 0},
)

// SAMCMember prints an MCMemberRecord as `saquery -m` lists members, with
// the name of the member's node (nodeName, "<unknown>" when the caller
// found none).
func SAMCMember(w io.Writer, b []byte, nodeName string) error {
	var sb strings.Builder
	if err := saMCMemberOf.Render(&sb, b); err != nil {
		return err
	}
	sb.WriteString("\t\tNodeDescription........." + nodeName + "\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAMCMemberGID prints the one line `saquery -m MLID` prints for each member
// of the group.
func SAMCMemberGID(w io.Writer, b []byte, nodeName string) error {
	d := mustRecord(b, "MCMemberRecord")
	if d.err != nil {
		return d.err
	}
	_, err := fmt.Fprintf(w, "\t\tPortGid.................%s (%s)\n", d.gid("portGID"), nodeName)
	return err
}

// SANodeRecordNamed prints a NodeRecord as SANodeRecord does, with name (the
// node name map's name for the node) in place of its NodeDescription.
func SANodeRecordNamed(w io.Writer, b []byte, name string) error {
	var sb strings.Builder
	if err := SANodeRecord(&sb, b); err != nil {
		return err
	}
	s := sb.String()
	const label = "\t\tNodeDescription........."
	if i := strings.LastIndex(s, label); i >= 0 {
		s = s[:i] + label + name + "\n"
	}
	_, err := io.WriteString(w, s)
	return err
}

// record reads components of one record by dotted path, for the dumps that
// are not one line per component.
type record struct {
	s   *iba.Struct
	b   []byte
	err error
}

func mustRecord(b []byte, name string) *record {
	s, ok := iba.StructByName(name)
	if !ok {
		return &record{err: fmt.Errorf("saquery dump: no structure %s", name)}
	}
	if len(b) < s.Size {
		return &record{s: s, err: &iba.DecodeError{Struct: s.Name, Offset: len(b), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(b), s.Size)}}
	}
	return &record{s: s, b: b}
}

func (r *record) ref(path string) iba.Ref {
	ref, err := r.s.Lookup(path)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("saquery dump of %s: %w", r.s.Name, err)
	}
	return ref
}

func (r *record) uint(path string) uint64 {
	ref := r.ref(path)
	if r.err != nil {
		return 0
	}
	return getBits(r.b, ref.Off, ref.Bits())
}

func (r *record) gid(path string) string {
	ref := r.ref(path)
	if r.err != nil {
		return ""
	}
	return saGID(r.b, ref.Off, 128)
}

// elems reads every element of the array at path.
func (r *record) elems(path string) []uint64 {
	ref := r.ref(path)
	if r.err != nil {
		return nil
	}
	out := make([]uint64, ref.Field.Count)
	for i := range out {
		out[i] = getBits(r.b, ref.Off+i*ref.Field.Bits, ref.Field.Bits)
	}
	return out
}

// SASL2VLRecord prints an SLtoVLMappingTableRecord (IBA 15.2.5.4) as
// `saquery SL2VL` does.
func SASL2VLRecord(w io.Writer, b []byte) error {
	r := mustRecord(b, "SLtoVLMappingTableRecord")
	lid, in, out := r.uint("LID"), r.uint("inputPortNum"), r.uint("outputPortNum")
	vls := r.elems("SLToVLMappingTable.SLtoVL")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "SL2VLTableRecord dump:\n\t\tLID........................%d\n\t\tInPort.....................%d\n\t\tOutPort....................%d\n", lid, in, out)
	sb.WriteString("\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n\t\tVL:")
	for _, v := range vls {
		fmt.Fprintf(&sb, "%2d|", v)
	}
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAVLArbRecord prints a VLArbitrationTableRecord (IBA 15.2.5.9) as
// `saquery VLAR` does: libibmad's ib_vl_arb_element_t is a VL byte (the
// reserved bits included) and a weight byte.
func SAVLArbRecord(w io.Writer, b []byte) error {
	r := mustRecord(b, "VLArbitrationTableRecord")
	lid, port, block := r.uint("LID"), r.uint("outputPortNum"), r.uint("blockNum")
	ents := r.elems("VLArbitrationTable.VLWeightBlock")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "VLArbTableRecord dump:\n\t\tLID........................%d\n\t\tPort.......................%d\n\t\tBlock......................%d\n", lid, port, block)
	for i := 0; i < 32; i += 16 {
		sb.WriteString("\t\tVL    :")
		for _, e := range ents[i : i+16] {
			fmt.Fprintf(&sb, "%2d|", e>>8)
		}
		sb.WriteString("\n\t\tWeight:")
		for _, e := range ents[i : i+16] {
			fmt.Fprintf(&sb, "%2d|", e&0xff)
		}
		sb.WriteByte('\n')
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAPKeyTableRecord prints a PKeyTableRecord (IBA 15.2.5.11) as `saquery
// PKTR` does, blank line included.
func SAPKeyTableRecord(w io.Writer, b []byte) error {
	r := mustRecord(b, "PKeyTableRecord")
	lid, port, block := r.uint("LID"), r.uint("portNum"), r.uint("blockNum")
	keys := r.elems("PKeyTable.PKeyBlock")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "PKeyTableRecord dump:\n\t\tLID........................%d\n\t\tPort.......................%d\n\t\tBlock......................%d\n\t\tPKey Table:\n", lid, port, block)
	for i := 0; i < 32; i += 8 {
		sb.WriteString("\t\t")
		for j, k := range keys[i : i+8] {
			if j > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "0x%04x", k)
		}
		sb.WriteByte('\n')
	}
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// SALFTRecord prints a LinearForwardingTableRecord (IBA 15.2.5.6) as
// `saquery LFTR` does: the 64 LIDs of the block and their ports.
func SALFTRecord(w io.Writer, b []byte) error {
	r := mustRecord(b, "LinearForwardingTableRecord")
	lid, block := r.uint("LID"), r.uint("blockNum")
	ports := r.elems("linearForwardingTable.portBlock")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "LFT Record dump:\n\t\tLID........................%d\n\t\tBlock......................%d\n\t\tLFT:\n\t\tLID\tPort Number\n", lid, block)
	for i, p := range ports {
		// The C tool computes block*64+i in an unsigned int.
		fmt.Fprintf(&sb, "\t\t%d\t%d\n", uint32(block*64+uint64(i)), p)
	}
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAMFTRecord prints a MulticastForwardingTableRecord (IBA 15.2.5.8) as
// `saquery MFTR` does: the 32 MLIDs of the block and their port masks.
func SAMFTRecord(w io.Writer, b []byte) error {
	r := mustRecord(b, "MulticastForwardingTableRecord")
	lid := r.uint("LID")
	pos, block := r.uint("position"), r.uint("blockNum")
	masks := r.elems("multicastForwardingTable.portMaskBlock")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "MFT Record dump:\n\t\tLID........................%d\n\t\tPosition...................%d\n\t\tBlock......................%d\n\t\tMFT:\n\t\tMLID\tPort Mask\n", lid, pos, block)
	for i, m := range masks {
		fmt.Fprintf(&sb, "\t\t0x%04x\t0x%04x\n", 0xc000+block*32+uint64(i), m)
	}
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAInformInfoRecord prints an InformInfoRecord (IBA 15.2.5.12) as
// `saquery IIR` does: the generic or the vendor form by IsGeneric, the QPN
// only when showKeys (-K).
func SAInformInfoRecord(w io.Writer, b []byte, showKeys bool) error {
	r := mustRecord(b, "InformInfoRecord")
	sgid, enum := r.gid("subscriberGID"), r.uint("enumeration")
	gid := r.gid("informInfo.GID")
	begin, end := r.uint("informInfo.LIDRangeBegin"), r.uint("informInfo.LIDRangeEnd")
	generic, subscribe, typ := r.uint("informInfo.isGeneric"), r.uint("informInfo.subscribe"), r.uint("informInfo.type")
	num := r.uint("informInfo.trapNumber")
	qpn, resp := r.uint("informInfo.QPN"), r.uint("informInfo.respTimeValue")
	prod := r.uint("informInfo.producerType")
	if r.err != nil {
		return r.err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "InformInfoRecord dump:\n\t\tRID\n\t\tSubscriberGID...........%s\n\t\tSubscriberEnum..........0x%X\n\t\tInformInfo dump:\n", sgid, enum)
	fmt.Fprintf(&sb, "\t\tgid.....................%s\n\t\tlid_range_begin.........%d\n\t\tlid_range_end...........%d\n\t\tis_generic..............0x%X\n\t\tsubscribe...............0x%X\n\t\ttrap_type...............0x%X\n",
		gid, begin, end, generic, subscribe, typ)
	if generic != 0 {
		fmt.Fprintf(&sb, "\t\ttrap_num................%d\n", num)
	} else {
		fmt.Fprintf(&sb, "\t\tdev_id..................0x%X\n", num)
	}
	if showKeys {
		fmt.Fprintf(&sb, "\t\tqpn.....................0x%06X\n", qpn)
	} else {
		sb.WriteString("\t\tqpn.....................<not displayed>\n")
	}
	if generic != 0 {
		fmt.Fprintf(&sb, "\t\tresp_time_val...........0x%X\n\t\tnode_type...............0x%06X\n", resp, prod)
	} else {
		fmt.Fprintf(&sb, "\t\tresp_time_val...........0x%X\n\t\tvendor_id...............0x%06X\n", resp, prod)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAServiceRecord prints a ServiceRecord (IBA 15.2.5.14) as `saquery SR`
// does, the ServiceKey only when showKeys (-K).
func SAServiceRecord(w io.Writer, b []byte, showKeys bool) error {
	r := mustRecord(b, "ServiceRecord")
	id, gid := r.uint("serviceID"), r.gid("serviceGID")
	pkey, lease := r.uint("servicePKey"), r.uint("serviceLease")
	keyRef := r.ref("serviceKey")
	nameRef := r.ref("serviceName")
	d8, d16 := r.elems("serviceData8"), r.elems("serviceData16")
	d32, d64 := r.elems("serviceData32"), r.elems("serviceData64")
	if r.err != nil {
		return r.err
	}
	key := "<not displayed>"
	if showKeys {
		key = "0x" + fmt.Sprintf("%032x", bytesAt(b, keyRef.Off, 128))
	}
	// strncpy of 64 bytes: the text up to the first NUL, as is.
	name := bytesAt(b, nameRef.Off, nameRef.Bits())
	if i := strings.IndexByte(string(name), 0); i >= 0 {
		name = name[:i]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "ServiceRecord dump:\n\t\tServiceID...............0x%016x\n\t\tServiceGID..............%s\n\t\tServiceP_Key............0x%X\n\t\tServiceLease............0x%X\n\t\tServiceKey..............%s\n\t\tServiceName.............%s\n",
		id, gid, pkey, lease, key, name)
	groups := []struct {
		width int
		vals  []uint64
	}{{8, d8}, {16, d16}, {32, d32}, {64, d64}}
	for _, g := range groups {
		for i, v := range g.vals {
			label := fmt.Sprintf("ServiceData%d.%d", g.width, i+1)
			val := fmt.Sprintf("0x%X", v)
			if g.width == 64 {
				val = fmt.Sprintf("0x%016x", v)
			}
			fmt.Fprintf(&sb, "\t\t%s%s%s\n", label, strings.Repeat(".", max(0, 24-len(label))), val)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
