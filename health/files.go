package health

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/subnet"
)

// The report files of ibdiagnet. Their formats are those of ibutils'
// ibdiagnet 1.x (ibdiag/src/ibdebug.tcl, procs lstInfo, writeLstFile,
// writeFdbsFile, writeMcfdbsFile, DumpSMReport, writePMFile and
// CheckPartitions; ibdiagnet.pod's FILES), which ibdiagnet 2 still writes
// for .lst, .sm, .pm and .pkey; .db_csv is ibdiagnet 2's database
// (START_<SECTION> ... END_<SECTION> blocks of CSV), with the sections
// whose data a standard fabric serves. docs/ibdiagnet.md lists each
// file and its differences.

// Files are the report files WriteFiles writes, by extension, in order.
var Files = []string{"lst", "fdbs", "mcfdbs", "sm", "pm", "pkey", "db_csv"}

// WriteFiles writes the report files the data has into dir, named
// prefix.EXT (ibdiagnet's prefix is "ibdiagnet"), and returns their
// paths: .lst and .db_csv always, .fdbs and .mcfdbs when forwarding
// tables were read, .sm when SMs were, .pm when counters were, .pkey
// when P_Key tables were. The directory is made when missing.
func WriteFiles(dir, prefix string, d *Data) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing the report files: %w", err)
	}
	type file struct {
		ext   string
		write func(io.Writer, *Data) error
		have  bool
	}
	hasLFT, hasMFT := false, false
	for _, n := range d.Subnet.NodesOfType(iba.NodeTypeSwitch) {
		hasLFT = hasLFT || len(n.LFT) > 0
		hasMFT = hasMFT || len(n.MFT) > 0
	}
	files := []file{
		{"lst", WriteLST, true},
		{"fdbs", func(w io.Writer, d *Data) error { return WriteFDBS(w, d.Subnet) }, hasLFT},
		{"mcfdbs", func(w io.Writer, d *Data) error { return WriteMCFDBS(w, d.Subnet) }, hasMFT},
		{"sm", WriteSM, d.SMs != nil},
		{"pm", WritePM, d.After != nil || d.Before != nil},
		{"pkey", WritePKey, d.PKeys != nil},
		{"db_csv", WriteDBCSV, true},
	}
	var out []string
	for _, f := range files {
		if !f.have {
			continue
		}
		path := filepath.Join(dir, prefix+"."+f.ext)
		if err := writeFile(path, d, f.write); err != nil {
			return out, err
		}
		out = append(out, path)
	}
	return out, nil
}

func writeFile(path string, d *Data, write func(io.Writer, *Data) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	w := bufio.NewWriterSize(fh, 1<<16)
	err = write(w, d)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// errWriter keeps the first write error, so that writers can print
// freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

// lstType is .lst's node type: SW, CA (CA-SM for the master SM's port),
// Rt.
func lstType(p *subnet.Port, masters map[*subnet.Port]bool) string {
	switch p.Node.Type {
	case iba.NodeTypeSwitch:
		return "SW"
	case iba.NodeTypeRouter:
		return "Rt"
	}
	if masters[p] {
		return "CA-SM"
	}
	return "CA"
}

func (d *Data) masters() map[*subnet.Port]bool {
	m := map[*subnet.Port]bool{}
	for _, sm := range d.SMs {
		if sm.Err == nil && sm.Last.SMState == iba.SMStateMaster {
			m[sm.Port] = true
		}
	}
	return m
}

// lstPort is one end of a .lst line (ibdebug.tcl lstInfo "port"): hex
// fields without 0x, VenID, DevID, Rev, LID and PN in capitals, a zero
// system image GUID shown as the node GUID.
func lstPort(p *subnet.Port, masters map[*subnet.Port]bool) string {
	ni := p.Node.NodeInfo()
	sys := ni.SystemImageGUID
	if sys == 0 {
		sys = ni.NodeGUID
	}
	lid := p.BaseLID
	if p.Node.Type == iba.NodeTypeSwitch {
		lid = p.Node.SMALID
	}
	return fmt.Sprintf("%s Ports:%02x SystemGUID:%016x NodeGUID:%016x PortGUID:%016x VenID:00%06X DevID:%04X Rev:%08X {%s} LID:%04X PN:%02X",
		lstType(p, masters), ni.NumPorts, uint64(sys), uint64(ni.NodeGUID), uint64(p.GUID), ni.VendorID, ni.DeviceID, ni.Revision,
		p.Node.Description(), lid, p.Num)
}

// lstWidth is .lst's PHY (LinkWidthActive: 1x, 4x, 8x, 12x; 2x since IBA
// 1.3).
func lstWidth(w uint8) string {
	if l := iba.LinkWidthLanes(w); l > 0 {
		return fmt.Sprintf("%dx", l)
	}
	return fmt.Sprintf("0x%x", w)
}

var lstStates = map[iba.PortState]string{iba.PortStateDown: "DWN", iba.PortStateInit: "INI", iba.PortStateArmed: "ARM", iba.PortStateActive: "ACT"}

// lstSpeed is .lst's SPD: the lane rate in Gb/s as ibdiagnet prints it
// (2.5, 5, 10; ibdiagnet 2 adds 14, 25, 50, 100, and FDR10).
func lstSpeed(s iba.Speed) string {
	switch s {
	case 0:
		return "0"
	case iba.SpeedFDR10:
		return "FDR10"
	}
	return strconv.FormatFloat(s.DataGbps(), 'f', -1, 64)
}

// WriteLST writes ibdiagnet.lst: one line per link, both ends and the
// link's width, state and speed (ibdebug.tcl writeLstFile):
//
//	{ CA Ports:01 SystemGUID:... NodeGUID:... PortGUID:... VenID:000002C9 DevID:1003 Rev:000000A1 {desc} LID:0001 PN:01 } { SW ... } PHY=4x LOG=ACT SPD=2.5
func WriteLST(w io.Writer, d *Data) error {
	ew := &errWriter{w: w}
	masters := d.masters()
	for _, l := range Links(d.Subnet) {
		if !l[0].HasInfo {
			continue
		}
		pi := l[0].PortInfo()
		state := lstStates[pi.PortState]
		if state == "" {
			state = fmt.Sprint(int(pi.PortState))
		}
		ew.printf("{ %s } { %s } PHY=%s LOG=%s SPD=%s\n", lstPort(l[0], masters), lstPort(l[1], masters),
			lstWidth(pi.LinkWidthActive), state, lstSpeed(iba.ActiveSpeed(&pi, mlnxSpeed(l[0]))))
	}
	return ew.err
}

// WriteFDBS writes ibdiagnet.fdbs, every switch's unicast forwarding
// table in OpenSM's dump format as ibdiagnet writes it (writeFdbsFile):
//
//	osm_ucast_mgr_dump_ucast_routes: Switch 0x0008f10400410015
//	LID    : Port : Hops : Optimal
//	0x0001 : 001  : 00   : yes
//	0x0002 : UNREACHABLE
//
// up to SwitchInfo:LinearFDBTop, a blank line after each switch.
func WriteFDBS(w io.Writer, s *subnet.Subnet) error {
	ew := &errWriter{w: w}
	for _, n := range s.NodesOfType(iba.NodeTypeSwitch) {
		if len(n.LFT) == 0 {
			continue
		}
		var si iba.SwitchInfo
		_ = si.Unmarshal(n.SwitchInfo[:])
		top := int(si.LinearFDBTop)
		if top >= len(n.LFT) {
			top = len(n.LFT) - 1
		}
		ew.printf("osm_ucast_mgr_dump_ucast_routes: Switch 0x%016x\nLID    : Port : Hops : Optimal\n", uint64(n.GUID))
		// Millions of lines on a large fabric: built by hand, not by
		// Printf.
		b := make([]byte, 0, 32*top+1)
		for lid := 1; lid <= top; lid++ {
			b = append(b, '0', 'x')
			b = appendHex(b, uint64(lid), 4, true)
			port := n.LFT[lid]
			if port == 0xff || (port == 0 && uint16(lid) != n.SMALID) {
				b = append(b, " : UNREACHABLE\n"...)
				continue
			}
			b = append(b, ' ', ':', ' ', '0'+port/100, '0'+port/10%10, '0'+port%10)
			b = append(b, "  : 00   : yes\n"...)
		}
		b = append(b, '\n')
		if ew.err == nil {
			_, ew.err = ew.w.Write(b)
		}
	}
	return ew.err
}

// WriteMCFDBS writes ibdiagnet.mcfdbs, every switch's multicast
// forwarding table (writeMcfdbsFile): per switch a header, then per MLID
// with ports the ports in hex:
//
//	Switch 0x0008f10400410015
//	LID    : Out Port(s)
//	0xC000 : 0x001  0x003
func WriteMCFDBS(w io.Writer, s *subnet.Subnet) error {
	ew := &errWriter{w: w}
	for _, n := range s.NodesOfType(iba.NodeTypeSwitch) {
		if len(n.MFT) == 0 {
			continue
		}
		ew.printf("\nSwitch 0x%016x\nLID    : Out Port(s) \n", uint64(n.GUID))
		maxIdx := 0
		for _, m := range n.MFT {
			maxIdx = max(maxIdx, len(m))
		}
		for i := 0; i < maxIdx; i++ {
			mlid := uint16(0xc000 + i)
			ports := n.MFTPorts(mlid)
			if len(ports) == 0 {
				continue
			}
			sort.Ints(ports)
			var b strings.Builder
			fmt.Fprintf(&b, "0x%04X :", mlid)
			for _, p := range ports {
				fmt.Fprintf(&b, " 0x%03X ", p)
			}
			ew.printf("%s\n", b.String())
		}
	}
	return ew.err
}

// appendHex appends v in hex, zero-padded to width digits.
func appendHex(b []byte, v uint64, width int, upper bool) []byte {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	var tmp [16]byte
	i := len(tmp)
	for v != 0 || len(tmp)-i < width {
		i--
		tmp[i] = digits[v&0xf]
		v >>= 4
	}
	return append(b, tmp[i:]...)
}

// PortName names a port as ibdiagnet's reports do without a topology
// file (ibdebug.tcl DrPath2Name -fullName): a CA port as the first word
// of its description, /U<n> for an "HCA-<n>" other than 1, and /P<port>;
// a switch port as Port=<port>; then its LID, port GUID and device ID.
func PortName(p *subnet.Port) string {
	ni := p.Node.NodeInfo()
	lid := p.BaseLID
	if p.Node.Type == iba.NodeTypeSwitch {
		lid = p.Node.SMALID
	}
	name := fmt.Sprintf("Port=%d", p.Num)
	if p.Node.Type != iba.NodeTypeSwitch {
		if f := strings.Fields(p.Node.Description()); len(f) > 0 {
			name = f[0]
			if len(f) > 1 && len(f[1]) > 4 {
				if u, err := strconv.Atoi(f[1][4:]); err == nil && u != 1 {
					name += fmt.Sprintf("/U%d", u)
				}
			}
			name += fmt.Sprintf("/P%d", p.Num)
		}
	}
	return fmt.Sprintf("%s lid=0x%04x guid=0x%016x dev=%d", name, lid, uint64(p.GUID), ni.DeviceID)
}

var smStateNames = [...]string{"not-active", "discovering", "standby", "master"}

// WriteSM writes ibdiagnet.sm (writeSMFile, DumpSMReport): the SMs by
// state, master first, each state's by priority, highest first:
//
//	ibdiagnet fabric SM report
//
//	  SM - master
//	    H-1/P1 lid=0x0001 guid=0x0002c90000000002 dev=23108 priority:0
//
// rdmakit adds the ActCount of both reads after the priority.
func WriteSM(w io.Writer, d *Data) error {
	ew := &errWriter{w: w}
	ew.printf("ibdiagnet fabric SM report\n")
	for st := 3; st >= 0; st-- {
		var l []*SMRecord
		for _, sm := range d.SMs {
			if sm.Err == nil && int(sm.Last.SMState) == st {
				l = append(l, sm)
			}
		}
		if len(l) == 0 {
			continue
		}
		sort.SliceStable(l, func(i, j int) bool { return l[i].Last.Priority > l[j].Last.Priority })
		ew.printf("\n  SM - %s\n", smStateNames[st])
		for _, sm := range l {
			ew.printf("    %s priority:%d act_count:%d->%d\n", PortName(sm.Port), sm.Last.Priority, sm.First.ActCount, sm.Last.ActCount)
		}
	}
	return ew.err
}

// pmCounters are ibdiagnet 1.x's counter names in its order
// (G(var:list.pm.counter)) and the counters they are.
var pmCounters = []struct {
	name string
	k    perf.Counter
}{
	{"symbol_error_counter", perf.SymbolErrorCounter}, {"link_error_recovery_counter", perf.LinkErrorRecoveryCounter},
	{"link_down_counter", perf.LinkDownedCounter}, {"port_rcv_errors", perf.PortRcvErrors},
	{"port_xmit_discard", perf.PortXmitDiscards}, {"vl15_dropped", perf.VL15Dropped},
	{"port_rcv_constraint_errors", perf.PortRcvConstraintErrors}, {"local_link_integrity_errors", perf.LocalLinkIntegrityErrors},
	{"port_xmit_constraint_errors", perf.PortXmitConstraintErrors}, {"excesive_buffer_errors", perf.ExcessiveBufferOverrunErrors},
	{"port_xmit_data", perf.PortXmitData}, {"port_rcv_data", perf.PortRcvData},
	{"port_xmit_pkts", perf.PortXmitPkts}, {"port_rcv_pkts", perf.PortRcvPkts},
	{"port_rcv_remote_physical_errors", perf.PortRcvRemotePhysicalErrors}, {"port_rcv_switch_relay_errors", perf.PortRcvSwitchRelayErrors},
}

// lastSample is the latest good reading of every port, by node.
func (d *Data) lastSample() map[*subnet.Node]*perf.NodeResult {
	if d.After != nil {
		return d.After
	}
	return d.Before
}

// WritePM writes ibdiagnet.pm (writePMFile): per port read, a line of 80
// dashes, the port's name (PortName), another line of dashes, then each
// counter of ibdiagnet's list as "name = 0x<hex>", from the last sample.
func WritePM(w io.Writer, d *Data) error {
	ew := &errWriter{w: w}
	sample := d.lastSample()
	dashes := strings.Repeat("-", 80)
	for _, n := range d.Subnet.Nodes() {
		nr := sample[n]
		if nr == nil {
			continue
		}
		for pn, pr := range nr.Ports {
			p := n.Port(pn)
			if pr == nil || !pr.OK || p == nil {
				continue
			}
			ew.printf("%s\n%s\n%s\n", dashes, PortName(p), dashes)
			for _, c := range pmCounters {
				v, _ := pr.Get(c.k)
				ew.printf("%s = 0x%x\n", c.name, v)
			}
		}
	}
	return ew.err
}

// WritePKey writes ibdiagnet.pkey (CheckPartitions): per partition (P_Key
// without its membership bit), the CA and router ports that have it,
// full or limited ("Part") members:
//
//	GROUP PKey:0x7fff Hosts:2
//	   Full H-1/P1 lid=0x0001 guid=0x0002c90000000002 dev=23108
//	--------------------------------------------------------------------------------
func WritePKey(w io.Writer, d *Data) error {
	ew := &errWriter{w: w}
	type member struct {
		p    *subnet.Port
		full bool
	}
	groups := map[uint16][]member{}
	for _, n := range d.Subnet.Nodes() {
		if n.Type == iba.NodeTypeSwitch {
			continue
		}
		for _, p := range n.Ports {
			t, ok := d.PKeys[p]
			if p == nil || !ok {
				continue
			}
			for _, k := range sortedKeys(validKeys(t)) {
				groups[PKeyBase(k)] = append(groups[PKeyBase(k)], member{p, fullMember(k)})
			}
		}
	}
	var bases []int
	for b := range groups {
		bases = append(bases, int(b))
	}
	sort.Ints(bases)
	for _, b := range bases {
		ms := groups[uint16(b)]
		ew.printf("GROUP PKey:0x%04x Hosts:%d\n", b, len(ms))
		for _, m := range ms {
			kind := "Part"
			if m.full {
				kind = "Full"
			}
			ew.printf("   %s %s\n", kind, PortName(m.p))
		}
		ew.printf("%s\n", strings.Repeat("-", 80))
	}
	return ew.err
}

// csvSection writes one START_/END_ block of ibdiagnet 2's .db_csv.
func csvSection(ew *errWriter, name string, header []string, rows func(row func(...any))) {
	ew.printf("START_%s\n%s\n", name, strings.Join(header, ","))
	rows(func(v ...any) {
		s := make([]string, len(v))
		for i, x := range v {
			switch x := x.(type) {
			case iba.GUID:
				s[i] = fmt.Sprintf("0x%016x", uint64(x))
			case csvRaw:
				s[i] = string(x)
			case string:
				s[i] = strconv.Quote(x)
			default:
				s[i] = fmt.Sprint(x)
			}
		}
		ew.printf("%s\n", strings.Join(s, ","))
	})
	ew.printf("END_%s\n\n\n", name)
}

// csvRaw is a .db_csv value written as it is (hex numbers), where a
// string is quoted.
type csvRaw string

func hex64(v uint64) csvRaw { return csvRaw(fmt.Sprintf("0x%016x", v)) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteDBCSV writes ibdiagnet 2's .db_csv database: the sections NODES,
// PORTS, SWITCHES, LINKS, SM_INFO, PM_INFO, PM_DELTA and PKEY, each as
// START_<SECTION>, a CSV header, rows and END_<SECTION>, with GUIDs in
// 0x%016x, descriptions quoted and numbers in decimal. The columns are
// ibdiagnet 2's for what a standard fabric serves (PortInfo, SwitchInfo,
// SMInfo, PortCounters and PortCountersExtended, PKeyTable).
func WriteDBCSV(w io.Writer, d *Data) error {
	ew := &errWriter{w: w}
	s := d.Subnet
	csvSection(ew, "NODES", strings.Split("NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,PortGUID,DeviceID,PartitionCap,revision,VendorID,LocalPortNum", ","),
		func(row func(...any)) {
			for _, n := range s.Nodes() {
				ni := n.NodeInfo()
				row(n.Description(), ni.NumPorts, int(ni.NodeType), ni.ClassVersion, ni.BaseVersion, ni.SystemImageGUID, ni.NodeGUID, ni.PortGUID,
					ni.DeviceID, ni.PartitionCap, ni.Revision, ni.VendorID, ni.LocalPortNum)
			}
		})
	csvSection(ew, "PORTS", strings.Split("NodeGuid,PortGuid,PortNum,MKey,GIDPrfx,MSMLID,LID,CapMsk,M_KeyLeasePeriod,DiagCode,LinkWidthActv,LinkWidthSup,LinkWidthEn,LocalPortNum,LinkSpeedEn,LinkSpeedActv,LMC,MKeyProtBits,LinkDownDefState,PortPhyState,PortState,LinkSpeedSup,VLArbHighCap,VLHighLimit,InitType,VLCap,MSMSL,NMTU,FilterRawOutb,FilterRawInb,PartEnfOutb,PartEnfInb,OpVLs,HoQLife,VLStallCnt,MTUCap,InitTypeReply,VLArbLowCap,PKeyViolations,MKeyViolations,SubnTmo,MulticastPKeyTrapSuppressionEnabled,ClientReregister,GUIDCap,QKeyViolations,MaxCreditHint,OverrunErrs,LocalPhyError,RespTimeValue,LinkRoundTripLatency,CapMsk2,LinkSpeedExtActv,LinkSpeedExtSup,LinkSpeedExtEn", ","),
		func(row func(...any)) {
			for _, n := range s.Nodes() {
				for _, p := range n.Ports {
					if p == nil || !p.HasInfo {
						continue
					}
					pi := p.PortInfo()
					row(n.GUID, p.GUID, p.Num, hex64(pi.MKey), hex64(pi.GIDPrefix), pi.MasterSMLID, pi.LID, pi.CapabilityMask,
						pi.MKeyLeasePeriod, pi.DiagCode, pi.LinkWidthActive, pi.LinkWidthSupported, pi.LinkWidthEnabled, pi.LocalPortNum,
						pi.LinkSpeedEnabled, pi.LinkSpeedActive, pi.LMC, pi.MKeyProtectBits, pi.LinkDownDefaultState, int(pi.PortPhysicalState),
						int(pi.PortState), pi.LinkSpeedSupported, pi.VLArbitrationHighCap, pi.VLHighLimit, pi.InitType, pi.VLCap, pi.MasterSMSL,
						int(pi.NeighborMTU), pi.FilterRawOutbound, pi.FilterRawInbound, pi.PartitionEnforcementOutbound, pi.PartitionEnforcementInbound,
						pi.OperationalVLs, pi.HOQLife, pi.VLStallCount, int(pi.MTUCap), pi.InitTypeReply, pi.VLArbitrationLowCap, pi.PKeyViolations,
						pi.MKeyViolations, pi.SubnetTimeOut, pi.MulticastPKeyTrapSuppressionEnabled, pi.ClientReregister, pi.GUIDCap,
						pi.QKeyViolations, pi.MaxCreditHint, pi.OverrunErrors, pi.LocalPhyErrors, pi.RespTimeValue, pi.LinkRoundTripLatency,
						pi.CapabilityMask2, pi.LinkSpeedExtActive, pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled)
				}
			}
		})
	csvSection(ew, "SWITCHES", strings.Split("NodeGUID,LinearFDBCap,RandomFDBCap,MCastFDBCap,LinearFDBTop,DefPort,DefMCastPriPort,DefMCastNotPriPort,LifeTimeValue,PortStateChange,OptimizedSLVLMapping,LidsPerPort,PartEnfCap,InbEnfCap,OutbEnfCap,FilterRawInbCap,FilterRawOutbCap,ENP0,MCastFDBTop", ","),
		func(row func(...any)) {
			for _, n := range s.NodesOfType(iba.NodeTypeSwitch) {
				if !n.HasSwitchInfo {
					continue
				}
				var si iba.SwitchInfo
				_ = si.Unmarshal(n.SwitchInfo[:])
				row(n.GUID, si.LinearFDBCap, si.RandomFDBCap, si.MulticastFDBCap, si.LinearFDBTop, si.DefaultPort, si.DefaultMulticastPrimaryPort,
					si.DefaultMulticastNotPrimaryPort, si.LifeTimeValue, si.PortStateChange, si.OptimizedSLtoVLMappingProgramming, si.LIDsPerPort,
					si.PartitionEnforcementCap, si.InboundEnforcementCap, si.OutboundEnforcementCap, si.FilterRawInboundCap, si.FilterRawOutboundCap,
					si.EnhancedPort0, si.MulticastFDBTop)
			}
		})
	csvSection(ew, "LINKS", []string{"NodeGuid1", "PortNum1", "NodeGuid2", "PortNum2"}, func(row func(...any)) {
		for _, l := range Links(s) {
			row(l[0].Node.GUID, l[0].Num, l[1].Node.GUID, l[1].Num)
		}
	})
	if d.SMs != nil {
		csvSection(ew, "SM_INFO", strings.Split("NodeGUID,PortGUID,PortNumber,GUID,Sm_Key,ActCount,SmState,Priority", ","), func(row func(...any)) {
			for _, sm := range d.SMs {
				if sm.Err != nil {
					continue
				}
				row(sm.Port.Node.GUID, sm.Port.GUID, sm.Port.Num, sm.Last.GUID, hex64(sm.Last.SMKey), sm.Last.ActCount, int(sm.Last.SMState), sm.Last.Priority)
			}
		})
	}
	pmHeader := []string{"NodeGUID", "PortGUID", "PortNumber"}
	for _, c := range pmCSV {
		pmHeader = append(pmHeader, c.name)
	}
	pmRows := func(delta bool) func(row func(...any)) {
		return func(row func(...any)) {
			for _, n := range s.Nodes() {
				var a, b *perf.NodeResult
				if d.After != nil {
					a = d.After[n]
				}
				if d.Before != nil {
					b = d.Before[n]
				}
				last := a
				if last == nil {
					last = b
				}
				if last == nil {
					continue
				}
				for pn, pr := range last.Ports {
					p := n.Port(pn)
					if pr == nil || !pr.OK || p == nil {
						continue
					}
					vals := []any{n.GUID, p.GUID, pn}
					for _, c := range pmCSV {
						v, ok := pr.Get(c.k)
						if delta {
							var prev *perf.PortResult
							if b != nil && a != nil && pn < len(b.Ports) {
								prev = b.Ports[pn]
							}
							if prev == nil || !prev.OK {
								vals = append(vals, csvRaw("N/A"))
								continue
							}
							dl, ok2 := perf.Diff(&prev.Counters, &pr.Counters, c.k)
							v, ok = dl.Value, ok2
						}
						if ok {
							vals = append(vals, v)
						} else {
							vals = append(vals, csvRaw("N/A"))
						}
					}
					row(vals...)
				}
			}
		}
	}
	if d.Before != nil || d.After != nil {
		csvSection(ew, "PM_INFO", pmHeader, pmRows(false))
	}
	if d.Before != nil && d.After != nil {
		csvSection(ew, "PM_DELTA", pmHeader, pmRows(true))
	}
	if d.PKeys != nil {
		csvSection(ew, "PKEY", strings.Split("NodeGUID,PortGUID,LocalPortNum,BlockNum,Index,PKey,Membership", ","), func(row func(...any)) {
			for _, n := range s.Nodes() {
				for _, p := range n.Ports {
					t, ok := d.PKeys[p]
					if p == nil || !ok {
						continue
					}
					for i, k := range t {
						if PKeyBase(k) == 0 {
							continue
						}
						row(n.GUID, p.GUID, p.Num, i/32, i%32, csvRaw(fmt.Sprintf("0x%04x", PKeyBase(k))), b2i(fullMember(k)))
					}
				}
			}
		})
	}
	return ew.err
}

// pmCSV are the PM_INFO and PM_DELTA columns: ibdiagnet 2's names of the
// PortCounters and PortCountersExtended counters.
var pmCSV = []struct {
	name string
	k    perf.Counter
}{
	{"LinkDownedCounter", perf.LinkDownedCounter}, {"LinkErrorRecoveryCounter", perf.LinkErrorRecoveryCounter},
	{"SymbolErrorCounter", perf.SymbolErrorCounter}, {"PortRcvRemotePhysicalErrors", perf.PortRcvRemotePhysicalErrors},
	{"PortRcvErrors", perf.PortRcvErrors}, {"PortXmitDiscards", perf.PortXmitDiscards},
	{"PortRcvSwitchRelayErrors", perf.PortRcvSwitchRelayErrors}, {"ExcessiveBufferOverrunErrors", perf.ExcessiveBufferOverrunErrors},
	{"LocalLinkIntegrityErrors", perf.LocalLinkIntegrityErrors}, {"PortRcvConstraintErrors", perf.PortRcvConstraintErrors},
	{"PortXmitConstraintErrors", perf.PortXmitConstraintErrors}, {"VL15Dropped", perf.VL15Dropped},
	{"PortXmitData", perf.PortXmitData}, {"PortRcvData", perf.PortRcvData}, {"PortXmitPkts", perf.PortXmitPkts},
	{"PortRcvPkts", perf.PortRcvPkts}, {"PortXmitWait", perf.PortXmitWait},
	{"PortUniCastXmitPkts", perf.PortUnicastXmitPkts}, {"PortUniCastRcvPkts", perf.PortUnicastRcvPkts},
	{"PortMultiCastXmitPkts", perf.PortMulticastXmitPkts}, {"PortMultiCastRcvPkts", perf.PortMulticastRcvPkts},
}
