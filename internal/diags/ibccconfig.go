package diags

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
)

func init() {
	register(command{name: "ibccconfig", make: func(e *Env) *cobra.Command { return newIBCCConfigWith(e, e.open) }})
}

var ccConfigOps = []ccOp{
	{"CongestionKeyInfo", "CK", false, (*ccRun).setKeyInfo},
	{"SwitchCongestionSetting", "SS", false, (*ccRun).setSwitchSetting},
	{"SwitchPortCongestionSetting", "SP", true, (*ccRun).setSwitchPortSetting},
	{"CACongestionSetting", "CS", false, (*ccRun).setCASetting},
	{"CongestionControlTable", "CT", false, (*ccRun).setControlTable},
}

var ccConfigParams = map[string]string{
	"CongestionKeyInfo":           "<cckey> <cckeyprotectbit> <cckeyleaseperiod> <cckeyviolations>",
	"SwitchCongestionSetting":     "<controlmap> <victimmask> <creditmask> <threshold> <packetsize> <csthreshold> <csreturndelay> <markingrate>",
	"SwitchPortCongestionSetting": "<valid> <control_type> <threshold> <packet_size> <cong_parm_marking_rate>",
	"CACongestionSetting":         "<port_control> <control_map> <ccti_timer> <ccti_increase> <trigger_threshold> <ccti_min>",
	"CongestionControlTable":      "<cctilimit> <index> <cctentry> <cctentry> ...",
}

func newIBCCConfigWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &ccFlags{}
	c := &cobra.Command{
		Use:   "ibccconfig [flags] <op> <lid|guid> [op params]",
		Short: "configure congestion control attributes (infiniband-diags ibccconfig)",
		Long: `ibccconfig writes one congestion control (class 0x21, IBA annex A10)
attribute of a node with a CongestionSet, as infiniband-diags' ibccconfig
does. It prints nothing on success; --json shows the attribute written.

WARNING -- You should understand what you are doing before using this tool.
Misuse of this tool could result in a broken fabric.

Supported ops (and aliases, case insensitive):
` + ccOpsUsage(ccConfigOps, true, ccConfigParams) + `
SwitchPortCongestionSetting reads the port's block of 32 ports (IBA
A10.4.3.7), changes the port's element and writes the same block back.

Examples:
  ibccconfig SwitchCongestionSetting 2 0x1F 0x1FFFFFFFFF 0x0 0xF 8 0 0:0 1
  ibccconfig CACongestionSetting 1 0 0x3 150 1 0 0   # SL 0 and SL 1
  ibccconfig CongestionControlTable 1 63 0 0:0 0:1 ...`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCC(e, f, "ibccconfig", ccConfigOps, args, open)
		},
	}
	f.register(c)
	return c
}

// ccParseUint is ibccconfig's parseint and parselonglongint: strtoul in the
// base given (0: C's prefixes), the whole argument consumed, and ERANGE
// beyond 64 bits. The value is then truncated to the C variable's width by
// the caller, as the C tool does.
func ccParseUint(s string, base int) (uint64, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if base == 0 {
		switch {
		case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'):
			base, t = 16, t[2:]
		case len(t) > 1 && t[0] == '0':
			base, t = 8, t[1:]
		default:
			base = 10
		}
	} else if base == 16 && len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t = t[2:]
	}
	if t == "" {
		if s == "" {
			return 0, nil // strtoul of "" consumes nothing and ends at the NUL
		}
		return 0, errors.New("invalid integer input")
	}
	v, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errors.New("value out of range")
		}
		return 0, errors.New("invalid integer input")
	}
	if neg {
		v = -v
	}
	return v, nil
}

// ccParse256 is ibccconfig's parse256: up to 64 hex digits, an optional 0x,
// right aligned in 32 bytes as a big-endian 256-bit number.
func ccParse256(s string) ([]byte, error) {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return nil, errors.New("invalid hex digit read")
		}
	}
	if len(s) > 64 {
		return nil, errors.New("hex code too long")
	}
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b := make([]byte, 32)
	d, _ := hex.DecodeString(s)
	copy(b[32-len(d):], d)
	return b, nil
}

// ccParseCCT is parsecct: "shift:multiplier".
func ccParseCCT(s string) (shift, mult uint64, err error) {
	a, m, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, errors.New("ccts are formatted shift:multiplier")
	}
	if shift, err = ccParseUint(a, 0); err != nil {
		return 0, 0, err
	}
	if mult, err = ccParseUint(m, 0); err != nil {
		return 0, 0, err
	}
	return uint32Of(shift), uint32Of(mult), nil
}

// uint32Of is the C tools' uint32_t variable holding strtoul's result.
func uint32Of(v uint64) uint64 { return v & math.MaxUint32 }

// ccPayload builds the data of a Set by component name: each value is
// truncated to its component's width as mad_encode_field does.
type ccPayload struct {
	s   *iba.Struct
	b   []byte
	err error
}

func newCCPayload(name string) *ccPayload {
	s, _ := iba.StructByName(name)
	return &ccPayload{s: s, b: make([]byte, ccDataSize)}
}

func (p *ccPayload) set(path string, v uint64) {
	if p.err != nil {
		return
	}
	r, err := p.s.Lookup(path)
	if err != nil {
		p.err = err
		return
	}
	if w := r.Bits(); w < 64 {
		v &= 1<<w - 1
	}
	p.err = r.SetUint(p.b, v)
}

func (p *ccPayload) setBytes(path string, v []byte) {
	if p.err != nil {
		return
	}
	r, err := p.s.Lookup(path)
	if err != nil {
		p.err = err
		return
	}
	copy(p.b[r.Off/8:(r.Off+r.Bits())/8], v)
}

// parseArgs reads the op's integer parameters, each with strtoul base 0,
// into uint32_t variables.
func parseArgs(args []string) ([]uint64, error) {
	out := make([]uint64, len(args))
	for i, a := range args {
		v, err := ccParseUint(a, 0)
		if err != nil {
			return nil, err
		}
		out[i] = uint32Of(v)
	}
	return out, nil
}

// write sends the Set and records it.
func (q *ccRun) write(attr uint16, name string, mod uint32, p *ccPayload, what string) error {
	if p.err != nil {
		return p.err
	}
	if _, err := q.do(iba.MethodSet, attr, mod, p.b); err != nil {
		return q.fail(err, what+" config failed")
	}
	return q.record(name, "CongestionSet", mod, nil, p.b)
}

func (q *ccRun) setKeyInfo(args []string) error {
	if len(args) != 4 {
		return q.fail(nil, "invalid number of parameters for CongestionKeyInfo")
	}
	key, err := ccParseUint(args[0], 0)
	if err != nil {
		return q.fail(nil, err.Error())
	}
	v, err := parseArgs(args[1:])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	switch {
	case v[0] != 0 && v[0] != 1:
		return q.fail(nil, "invalid cc_keyprotectbit value")
	case v[1] > math.MaxUint16:
		return q.fail(nil, "invalid cc_keyleaseperiod value")
	case v[2] > math.MaxUint16:
		return q.fail(nil, "invalid cc_keyviolations value")
	}
	p := newCCPayload("CongestionKeyInfo")
	p.set("CCKey", key)
	p.set("CCKeyProtectBit", v[0])
	p.set("CCKeyLeasePeriod", v[1])
	// IBA A10.4.3.4: writing a non-zero violation count leaves the
	// counter unchanged, so the value is passed as given.
	p.set("CCKeyViolations", v[2])
	return q.write(ccAttrCongestionKeyInfo, "CongestionKeyInfo", 0, p, "congestion key info")
}

func (q *ccRun) setSwitchSetting(args []string) error {
	if len(args) != 8 {
		return q.fail(nil, "invalid number of parameters for SwitchCongestionSetting")
	}
	p := newCCPayload("SwitchCongestionSetting")
	cm, err := ccParseUint(args[0], 0)
	if err != nil {
		return q.fail(nil, err.Error())
	}
	victim, err := ccParse256(args[1])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	credit, err := ccParse256(args[2])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	v, err := parseArgs(args[3:6])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	shift, mult, err := ccParseCCT(args[6])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	rate, err := ccParseUint(args[7], 0)
	if err != nil {
		return q.fail(nil, err.Error())
	}
	p.set("controlMap", uint32Of(cm))
	p.setBytes("victimMask", victim)
	p.setBytes("creditMask", credit)
	p.set("threshold", v[0])
	p.set("packetSize", v[1])
	p.set("CSThreshold", v[2])
	// CS_ReturnDelay is a CCT entry: shift in the top 2 bits, multiplier
	// in the low 14.
	p.set("CSReturnDelay", uint32Of(mult|shift<<14))
	p.set("markingRate", uint32Of(rate))
	return q.write(ccAttrSwitchCongSetting, "SwitchCongestionSetting", 0, p, "switch congestion setting")
}

func (q *ccRun) setSwitchPortSetting(args []string) error {
	if len(args) != 6 {
		return q.fail(nil, "invalid number of parameters for SwitchPortCongestion")
	}
	v, err := parseArgs(args)
	if err != nil {
		return q.fail(nil, err.Error())
	}
	portnum := int(v[0])
	numPorts, err := q.switchNumPorts("config")
	if err != nil {
		return err
	}
	if portnum > numPorts {
		return q.fail(nil, "invalid port number specified")
	}
	blk := uint32(portnum / ccPortsPerBlock)
	cur, err := q.get(ccAttrSwitchPortSetting, blk)
	if err != nil {
		return q.fail(err, "switch port congestion setting query failed")
	}
	p := newCCPayload("SwitchPortCongestionSetting")
	copy(p.b, cur)
	i := portnum % ccPortsPerBlock
	p.set("block["+strconv.Itoa(i)+"].valid", v[1])
	p.set("block["+strconv.Itoa(i)+"].controlType", v[2])
	p.set("block["+strconv.Itoa(i)+"].threshold", v[3])
	p.set("block["+strconv.Itoa(i)+"].packetSize", v[4])
	p.set("block["+strconv.Itoa(i)+"].congParmMarkingRate", v[5])
	return q.write(ccAttrSwitchPortSetting, "SwitchPortCongestionSetting", blk, p, "switch port congestion setting")
}

func (q *ccRun) setCASetting(args []string) error {
	if len(args) != 6 {
		return q.fail(nil, "invalid number of parameters for CACongestionSetting")
	}
	v, err := parseArgs(args)
	if err != nil {
		return q.fail(nil, err.Error())
	}
	p := newCCPayload("CACongestionSetting")
	p.set("portControl", v[0])
	p.set("controlMap", v[1])
	for sl := 0; sl < 16; sl++ {
		if v[1]&(1<<sl) == 0 {
			continue
		}
		e := "entryList[" + strconv.Itoa(sl) + "]."
		p.set(e+"CCTITimer", v[2])
		p.set(e+"CCTIIncrease", v[3])
		p.set(e+"triggerThreshold", v[4])
		p.set(e+"CCTIMin", v[5])
	}
	return q.write(ccAttrCACongSetting, "CACongestionSetting", 0, p, "ca congestion setting")
}

func (q *ccRun) setControlTable(args []string) error {
	if len(args) < 2 || len(args) > 66 {
		return q.fail(nil, "invalid number of parameters for CongestionControlTable")
	}
	v, err := parseArgs(args[:2])
	if err != nil {
		return q.fail(nil, err.Error())
	}
	limit, index := v[0], v[1]
	entries := args[2:]
	if limit != 0 && limit+1 != index*64+uint64(len(entries)) {
		return q.fail(nil, "invalid number of cct entries input given ccti_limit and index")
	}
	p := newCCPayload("CongestionControlTable")
	p.set("CCTILimit", limit)
	for i, a := range entries {
		shift, mult, err := ccParseCCT(a)
		if err != nil {
			return q.fail(nil, err.Error())
		}
		e := "entryList[" + strconv.Itoa(i) + "]."
		p.set(e+"CCTShift", shift)
		p.set(e+"CCTMultiplier", mult)
	}
	return q.write(ccAttrCongControlTable, "CongestionControlTable", uint32(index), p, "congestion control table")
}
