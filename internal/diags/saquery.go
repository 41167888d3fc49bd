package diags

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
)

func init() {
	register(command{name: "saquery", make: newSAQuery})
}

// saExit is a saquery failure with the exit status the C tool gives it:
// saquery returns an errno (EIO for an SA error status, ETIMEDOUT, ENONET
// for a name no node has, EINVAL for a bad LID) or IBPANIC's 255.
type saExit struct {
	msg  string
	code int
	err  error
}

func (e *saExit) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e *saExit) Unwrap() error { return e.err }

func (e *saExit) ExitCode() int { return e.code }

// The errnos saquery exits with.
const (
	errnoEIO       = 5
	errnoEINVAL    = 22
	errnoENONET    = 64
	errnoETIMEDOUT = 110
)

// saCommand is what saquery does besides a plain query (saquery.c enum
// saquery_command).
type saCommand int

const (
	saCmdQuery saCommand = iota
	saCmdNodeRecord
	saCmdClassPortInfo
	saCmdIsSM
	saCmdMCGroups
	saCmdMCMembers
)

// nodePrint is how NodeRecords print (saquery.c node_print_desc).
type nodePrint int

const (
	printAll nodePrint = iota
	printLIDOnly
	printUniqueLIDOnly
	printGUIDOnly
	printAllDesc
	printNameOfLID
	printNameOfGUID
)

// saParams are saquery's query_params: the PathRecord and MCMemberRecord
// selectors, with the C types and "not given" values (-1 for the ones 0 is
// a real value of).
type saParams struct {
	serviceID             uint64
	sgid, dgid, gid, mgid iba.GID
	slid, dlid, mlid      uint16
	flowLabel             uint32
	hopLimit              int32
	tclass                uint8
	reversible, numbPath  int32
	pkey                  uint16
	qosClass, sl          int32
	mtu, rate, pktLife    uint8
	qkey                  uint32
	scope, joinState      uint8
	proxyJoin             int32
}

type saQueryFlags struct {
	p           saParams
	command     saCommand
	queryType   uint16
	print       nodePrint
	srcToDst    string
	nodeNameMap string
	showKeys    bool
	// python-rdma's: SubnAdmGet instead of GetTable, no default values
	// (saquery sets none, as the C one), records in its dotted format.
	get, noDefaults, intNames bool
}

// The SA attribute IDs saquery's query names stand for (IBA 15.2.5,
// table 204; ClassPortInfo is 13.4.8.1).
const (
	saAttrClassPortInfo = 0x0001
	saAttrNode          = 0x0011
	saAttrPortInfo      = 0x0012
	saAttrSL2VL         = 0x0013
	saAttrSwitchInfo    = 0x0014
	saAttrLFT           = 0x0015
	saAttrMFT           = 0x0017
	saAttrSMInfo        = 0x0018
	saAttrLink          = 0x0020
	saAttrGUIDInfo      = 0x0030
	saAttrService       = 0x0031
	saAttrPKeyTable     = 0x0033
	saAttrPath          = 0x0035
	saAttrVLArb         = 0x0036
	saAttrMCMember      = 0x0038
	saAttrInformInfo    = 0x00f3
	saAttrRFT           = 0x0016
	saAttrServiceAssoc  = 0x003b
)

// saQueryName is a row of saquery.c's query_cmds.
type saQueryName struct {
	name, alias string
	attr        uint16
	usage       string
	run         func(q *saRun, args []string) error
}

var saQueryNames []saQueryName

// The table is filled in init: its functions name the table in messages.
func init() {
	saQueryNames = []saQueryName{
		{"ClassPortInfo", "CPI", saAttrClassPortInfo, "", (*saRun).classPortInfo},
		{"NodeRecord", "NR", saAttrNode, "[lid]", (*saRun).nodeRecords},
		{"PortInfoRecord", "PIR", saAttrPortInfo, "[[lid]/[port]/[options]]", (*saRun).portInfoRecords},
		{"SL2VLTableRecord", "SL2VL", saAttrSL2VL, "[[lid]/[in_port]/[out_port]]", (*saRun).sl2vlRecords},
		{"PKeyTableRecord", "PKTR", saAttrPKeyTable, "[[lid]/[port]/[block]]", (*saRun).pkeyRecords},
		{"VLArbitrationTableRecord", "VLAR", saAttrVLArb, "[[lid]/[port]/[block]]", (*saRun).vlarbRecords},
		{"InformInfoRecord", "IIR", saAttrInformInfo, "[subscriber_gid]", (*saRun).informInfoRecords},
		{"LinkRecord", "LR", saAttrLink, "[[from_lid]/[from_port]] [[to_lid]/[to_port]]", (*saRun).linkRecords},
		{"ServiceRecord", "SR", saAttrService, "", (*saRun).serviceRecords},
		{"PathRecord", "PR", saAttrPath, "", (*saRun).pathRecords},
		{"MCMemberRecord", "MCMR", saAttrMCMember, "", (*saRun).mcMemberRecords},
		{"LFTRecord", "LFTR", saAttrLFT, "[[lid]/[block]]", (*saRun).lftRecords},
		{"MFTRecord", "MFTR", saAttrMFT, "[[mlid]/[position]/[block]]", (*saRun).mftRecords},
		{"GUIDInfoRecord", "GIR", saAttrGUIDInfo, "[[lid]/[block]]", (*saRun).guidInfoRecords},
		{"SwitchInfoRecord", "SWIR", saAttrSwitchInfo, "[lid]", (*saRun).switchInfoRecords},
		{"SMInfoRecord", "SMIR", saAttrSMInfo, "[lid]", (*saRun).smInfoRecords},
		// python-rdma's.
		{"RFTRecord", "RFTR", saAttrRFT, "", func(r *saRun, _ []string) error { return r.genericRecords("RandomForwardingTableRecord") }},
		{"ServiceAssociationRecord", "SAR", saAttrServiceAssoc, "", func(r *saRun, _ []string) error { return r.genericRecords("ServiceAssociationRecord") }},
	}
}

func findSAQuery(name string) (saQueryName, bool) {
	for _, q := range saQueryNames {
		if strings.EqualFold(q.name, name) || strings.EqualFold(q.alias, name) {
			return q, true
		}
	}
	return saQueryName{}, false
}

func findSAQueryByType(attr uint16) (saQueryName, bool) {
	for _, q := range saQueryNames {
		if q.attr == attr {
			return q, true
		}
	}
	return saQueryName{}, false
}

// setter is a flag whose Set runs at once, in command-line order, as
// getopt hands saquery.c's process_opt its options: where options overlap
// (-N then -s, -n after --src-to-dst) the last one given wins, as there.
type setter struct {
	typ string
	val string
	set func(string) error
}

func (s *setter) String() string     { return s.val }
func (s *setter) Type() string       { return s.typ }
func (s *setter) Set(v string) error { s.val = v; return s.set(v) }

func newSAQuery(e *Env) *cobra.Command { return newSAQueryWith(e, e.open) }

// newSAQueryWith is newSAQuery on the fabric open connects to (tests serve
// an SA of their own there).
func newSAQueryWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &saQueryFlags{}
	f.p = saParams{hopLimit: -1, reversible: -1, numbPath: -1, qosClass: -1, sl: -1, proxyJoin: -1}
	var names strings.Builder
	for _, q := range saQueryNames {
		fmt.Fprintf(&names, "  %s (%s) %s\n", q.name, q.alias, q.usage)
	}
	c := &cobra.Command{
		Use:   "saquery [flags] [query-name] [<name> | <lid> | <guid>] [MEMBER=VALUE]...",
		Short: "query the subnet administrator's records (infiniband-diags saquery)",
		Long: `saquery asks the SA for records and prints them as infiniband-diags'
saquery does.

Supported query names (and aliases):
` + names.String() + `
  Queries node records by default.

From python-rdma: trailing MEMBER=VALUE arguments set a field of the query
record by its dotted IBA name (nodeInfo.portGUID=0x0002c90300001491) and
its component mask bit; --get sends SubnAdmGet for one record; --int-names
prints records in python-rdma's dotted format; RFTRecord and
ServiceAssociationRecord are queried (printed in that format).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSAQuery(e, f, args, open)
		},
	}
	fl := c.Flags()
	do := func(name, short, usage string, fn func()) {
		fl.VarP(&setter{typ: "bool", set: func(string) error { fn(); return nil }}, name, short, usage)
		fl.Lookup(name).NoOptDefVal = "true"
	}
	query := func(attr uint16) func() { return func() { f.queryType = attr } }
	cmd := func(c saCommand) func() { return func() { f.command = c } }
	nodes := func(p nodePrint) func() { return func() { f.print, f.command = p, saCmdNodeRecord } }
	do("p", "p", "get PathRecord info", query(saAttrPath))
	do("N", "N", "get NodeRecord info", cmd(saCmdNodeRecord))
	do("L", "L", "return the Lids of the name specified", nodes(printLIDOnly))
	do("l", "l", "return the unique Lid of the name specified", nodes(printUniqueLIDOnly))
	do("G", "G", "return the Guids of the name specified", nodes(printGUIDOnly))
	do("O", "O", "return name for the Lid specified", nodes(printNameOfLID))
	do("U", "U", "return name for the Guid specified", nodes(printNameOfGUID))
	do("s", "s", "return the PortInfoRecords with isSM or isSMdisabled capability mask bit on", cmd(saCmdIsSM))
	do("g", "g", "get multicast group info", cmd(saCmdMCGroups))
	do("m", "m", "get multicast member info (if multicast group specified, list member GIDs only for group specified, for example 'saquery -m 0xC000')", cmd(saCmdMCMembers))
	do("x", "x", "get LinkRecord info", query(saAttrLink))
	do("c", "c", "get the SA's class port info", cmd(saCmdClassPortInfo))
	do("S", "S", "get ServiceRecord info", query(saAttrService))
	do("I", "I", "get InformInfoRecord (subscription) info", query(saAttrInformInfo))
	do("list", "D", "the node desc of the CA's", nodes(printAllDesc))
	fl.BoolVarP(&f.showKeys, "show_keys", "K", false, "display security keys in output")
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "specify a node name map file")
	fl.BoolVar(&f.get, "get", false, "use SubnAdmGet instead of SubnAdmGetTable: one record (python-rdma)")
	fl.BoolVar(&f.noDefaults, "no-defaults", false, "set no default values in the query (python-rdma; saquery sets none, as the C tool)")
	fl.BoolVar(&f.intNames, "int-names", false, "print records in python-rdma's dotted format, with IBA field names (python-rdma)")

	val := func(name, short, tmpl, usage string, set func(string) error) {
		fl.VarP(&setter{typ: tmpl, set: set}, name, short, usage)
	}
	num := func(s string) uint64 { return cStrtoul(s) }
	gidOpt := func(dst *iba.GID) func(string) error {
		return func(s string) error {
			g, err := parseInet6(s)
			if err != nil {
				return err
			}
			*dst = g
			return nil
		}
	}
	p := &f.p
	val("src-to-dst", "", "src:dst", "get a PathRecord for <src:dst> where src and dst are either node names or LIDs", func(s string) error {
		if !strings.Contains(s, ":") {
			return errors.New("want <src:dst>")
		}
		f.srcToDst = s
		p.numbPath, f.queryType = 0x7f, saAttrPath
		return nil
	})
	val("sgid-to-dgid", "", "sgid-dgid", "get a PathRecord for <sgid-dgid> where sgid and dgid are addresses in IPv6 format", func(s string) error {
		src, dst, ok := strings.Cut(s, "-")
		if !ok {
			return errors.New("want <sgid-dgid>")
		}
		if err := gidOpt(&p.sgid)(src); err != nil {
			return err
		}
		if err := gidOpt(&p.dgid)(dst); err != nil {
			return err
		}
		p.numbPath, f.queryType = 0x7f, saAttrPath
		return nil
	})
	val("slid", "", "lid", "Source LID (PathRecord)", func(s string) error { p.slid = uint16(num(s)); return nil })
	val("dlid", "", "lid", "Destination LID (PathRecord)", func(s string) error { p.dlid = uint16(num(s)); return nil })
	val("mlid", "", "lid", "Multicast LID (MCMemberRecord)", func(s string) error { p.mlid = uint16(num(s)); return nil })
	val("sgid", "", "gid", "Source GID (IPv6 format) (PathRecord)", gidOpt(&p.sgid))
	val("dgid", "", "gid", "Destination GID (IPv6 format) (PathRecord)", gidOpt(&p.dgid))
	val("gid", "", "gid", "Port GID (MCMemberRecord)", gidOpt(&p.gid))
	val("mgid", "", "gid", "Multicast GID (MCMemberRecord)", gidOpt(&p.mgid))
	val("reversible", "r", "val", "Reversible path (PathRecord)", func(s string) error { p.reversible = int32(num(s)); return nil })
	val("numb_path", "n", "val", "Number of paths (PathRecord)", func(s string) error { p.numbPath = int32(num(s)); return nil })
	val("pkey", "", "val", "P_Key (PathRecord, MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value", func(s string) error {
		s, err := e.promptIfNotHex(s, "P_Key: ")
		if err != nil {
			return err
		}
		p.pkey = uint16(num(s))
		return nil
	})
	val("qos_class", "Q", "val", "QoS Class (PathRecord)", func(s string) error { p.qosClass = int32(num(s)); return nil })
	val("sl", "", "val", "Service level (PathRecord, MCMemberRecord)", func(s string) error { p.sl = int32(num(s)); return nil })
	val("mtu", "M", "val", "MTU and selector (PathRecord, MCMemberRecord)", func(s string) error { p.mtu = uint8(num(s)); return nil })
	val("rate", "R", "val", "Rate and selector (PathRecord, MCMemberRecord)", func(s string) error { p.rate = uint8(num(s)); return nil })
	val("pkt_lifetime", "", "val", "Packet lifetime and selector (PathRecord, MCMemberRecord)", func(s string) error { p.pktLife = uint8(num(s)); return nil })
	val("qkey", "q", "val", "Q_Key (MCMemberRecord). If non-numeric value (like 'x') is specified then saquery will prompt for a value", func(s string) error {
		s, err := e.promptIfNotHex(s, "Q_Key: ")
		if err != nil {
			return err
		}
		p.qkey = uint32(num(s))
		return nil
	})
	val("tclass", "T", "val", "Traffic Class (PathRecord, MCMemberRecord)", func(s string) error { p.tclass = uint8(num(s)); return nil })
	val("flow_label", "F", "val", "Flow Label (PathRecord, MCMemberRecord)", func(s string) error { p.flowLabel = uint32(num(s)); return nil })
	val("hop_limit", "H", "val", "Hop limit (PathRecord, MCMemberRecord)", func(s string) error { p.hopLimit = int32(num(s)); return nil })
	val("scope", "", "val", "Scope (MCMemberRecord)", func(s string) error { p.scope = uint8(num(s)); return nil })
	val("join_state", "J", "val", "Join state (MCMemberRecord)", func(s string) error { p.joinState = uint8(num(s)); return nil })
	val("proxy_join", "X", "val", "Proxy join (MCMemberRecord)", func(s string) error { p.proxyJoin = int32(num(s)); return nil })
	val("service_id", "", "val", "ServiceID (PathRecord)", func(s string) error { p.serviceID = num(s); return nil })
	fl.SortFlags = false
	return c
}

// parseInet6 is inet_pton(AF_INET6): IPv6 text only, no zone.
func parseInet6(s string) (iba.GID, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() || a.Zone() != "" {
		return iba.GID{}, fmt.Errorf("%q is not an IPv6 address", s)
	}
	return iba.GID(a.As16()), nil
}

// SAQueryResult is what saquery read: the query, and every record printed,
// decoded by IBA names.
type SAQueryResult struct {
	// Query is the query name as saquery's usage lists it (NodeRecord,
	// PathRecord, ...), or the option's meaning (IsSM, MCGroups, ...).
	Query string `json:"query"`
	// ComponentMask is the SA component mask of the (last) query sent.
	ComponentMask uint64 `json:"componentMask"`
	// ClassPortInfo is the SA's ClassPortInfo, when the query read it.
	ClassPortInfo json.RawMessage `json:"classPortInfo,omitempty"`
	Records       []SARecord      `json:"records"`

	text bytes.Buffer
}

// SARecord is one record saquery printed.
type SARecord struct {
	Attribute string `json:"attribute"`
	// Section names the part of the output: "IsSM" and "IsSMdisabled" for
	// -s.
	Section string `json:"section,omitempty"`
	// NodeName is the node's name after the node name map, where saquery
	// prints one (NodeRecords, -m).
	NodeName string          `json:"nodeName,omitempty"`
	Data     json.RawMessage `json:"data"`
}

// saRun is one saquery run.
type saRun struct {
	e *Env
	f *saQueryFlags
	// members are python-rdma's MEMBER=VALUE arguments, set in the query
	// of mainAttr.
	members  [][2]string
	mainAttr uint16
	s        *session
	sa       *sa.Client
	names    *namemap.Map
	res      *SAQueryResult
	cpi      []byte
	reqArg   string // requested_name
}

func runSAQuery(e *Env, f *saQueryFlags, args []string, open func() (*session, error)) error {
	var q saQueryName
	haveQ := false
	if f.queryType == 0 && f.command == saCmdQuery {
		if len(args) > 0 {
			q, haveQ = findSAQuery(args[0])
		}
		if haveQ {
			args = args[1:]
		} else {
			f.queryType = saAttrNode
		}
	}
	r := &saRun{e: e, f: f, res: &SAQueryResult{Records: []SARecord{}}}
	// python-rdma's MEMBER=VALUE arguments come last.
	for len(args) > 0 && strings.Contains(args[len(args)-1], "=") {
		k, v, _ := strings.Cut(args[len(args)-1], "=")
		r.members = append([][2]string{{strings.TrimSpace(k), v}}, r.members...)
		args = args[:len(args)-1]
	}
	var reqLID uint16
	var reqGUID uint64
	if len(args) > 0 {
		switch f.print {
		case printNameOfLID:
			reqLID = uint16(cStrtoul(args[0]))
		case printNameOfGUID:
			reqGUID = cStrtoul(args[0])
		default:
			r.reqArg = args[0]
		}
	}
	switch {
	case (f.print == printLIDOnly || f.print == printUniqueLIDOnly || f.print == printGUIDOnly) && r.reqArg == "":
		return usagef("ERROR: name not specified")
	case f.print == printNameOfLID && len(args) == 0:
		return usagef("ERROR: lid not specified")
	case f.print == printNameOfGUID && len(args) == 0:
		return usagef("ERROR: guid not specified")
	case f.print == printNameOfLID && reqLID == 0:
		return usagef("ERROR: lid invalid")
	}

	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	r.s = s
	r.sa = s.f.SA()
	if _, err := r.sa.Target(e.Ctx); err != nil {
		return &saExit{msg: "Failed to bind to the SA", code: 255, err: err}
	}
	if r.names, err = loadNames(f.nodeNameMap); err != nil {
		return err
	}
	err = r.run(q, haveQ, args, reqLID, reqGUID)
	if e.JSON {
		if err != nil {
			return err
		}
		return e.writeJSON("saquery", r.res)
	}
	// What was printed before a failure stays printed, as the C tool's.
	if _, werr := e.Stdout.Write(r.res.text.Bytes()); werr != nil && err == nil {
		err = werr
	}
	return err
}

// errUniqueDone ends -l after its first match (the C tool's exit(0)).
var errUniqueDone = errors.New("unique LID printed")

func (r *saRun) run(q saQueryName, haveQ bool, args []string, reqLID uint16, reqGUID uint64) error {
	f := r.f
	if f.srcToDst != "" {
		src, dst, _ := strings.Cut(f.srcToDst, ":")
		if src != "" {
			lid, err := r.lid(src)
			if err != nil {
				return err
			}
			f.p.slid = lid
		}
		if dst != "" {
			lid, err := r.lid(dst)
			if err != nil {
				return err
			}
			f.p.dlid = lid
		}
	}
	if f.command == saCmdClassPortInfo || f.queryType == saAttrClassPortInfo || f.queryType == saAttrSwitchInfo || (haveQ && (q.attr == saAttrClassPortInfo || q.attr == saAttrSwitchInfo)) {
		if err := r.readCPI(); err != nil {
			return err
		}
	}
	r.mainAttr = map[saCommand]uint16{saCmdNodeRecord: saAttrNode, saCmdIsSM: saAttrPortInfo,
		saCmdMCGroups: saAttrMCMember, saCmdMCMembers: saAttrMCMember}[f.command]
	switch f.command {
	case saCmdNodeRecord:
		r.res.Query = "NodeRecord"
		err := r.printNodeRecords(reqLID, reqGUID)
		if errors.Is(err, errUniqueDone) {
			return nil
		}
		return err
	case saCmdClassPortInfo:
		r.res.Query = "ClassPortInfo"
		return r.render(ibaprint.SAClassPortInfo, r.cpi)
	case saCmdIsSM:
		r.res.Query = "IsSM"
		return r.isSM()
	case saCmdMCGroups:
		r.res.Query = "MCGroups"
		return r.mcGroups()
	case saCmdMCMembers:
		r.res.Query = "MCMembers"
		return r.mcMembers()
	}
	if !haveQ {
		var ok bool
		if q, ok = findSAQueryByType(f.queryType); !ok {
			return &saExit{msg: fmt.Sprintf("Unknown query type %d", f.queryType), code: errnoEINVAL}
		}
	}
	r.res.Query = q.name
	r.mainAttr = q.attr
	return q.run(r, args)
}

// genericRecords queries records saquery.c has no query for (python-rdma's
// RFTRecord, ServiceAssociationRecord): an empty record but for
// MEMBER=VALUE, printed in python-rdma's dotted format.
func (r *saRun) genericRecords(attr string) error {
	d, _ := iba.StructByName(attr)
	return r.queryAndDump(newRecord(attr), func(w io.Writer, b []byte) error { return dottedRecord(w, d, b) })
}

// dottedRecord is python-rdma saquery's record: "NAME dump:" and the
// record in its dotted format, indented by two tabs.
func dottedRecord(w io.Writer, d *iba.Struct, b []byte) error {
	var sb strings.Builder
	if err := ibaprint.StructDotted(&sb, d, b); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s dump:\n", d.Name)
	for _, l := range strings.SplitAfter(sb.String(), "\n") {
		if l != "" {
			io.WriteString(w, "\t\t"+l)
		}
	}
	return nil
}

// applyMembers sets python-rdma's MEMBER=VALUE fields in the record of
// the query asked for, with their component mask bits.
func (r *saRun) applyMembers(rb *saRecordBuilder) error {
	if len(r.members) == 0 || rb.d.AttrID != r.mainAttr {
		return nil
	}
	for _, m := range r.members {
		ref, err := rb.d.Lookup(m[0])
		if err != nil {
			return usagef("%s=%s: %v (the components of %s: %s)", m[0], m[1], err, rb.d.Name, strings.Join(rb.d.CompMask, ", "))
		}
		if err := ref.SetText(rb.b, m[1]); err != nil {
			return usagef("%s=%s: %v", m[0], m[1], err)
		}
		bits, err := sa.MaskBits(rb.d, m[0])
		if err != nil {
			return usagef("%s=%s: %v", m[0], m[1], err)
		}
		rb.mask |= bits
	}
	return nil
}

func (r *saRun) render(fn func(io.Writer, []byte) error, b []byte) error {
	return fn(&r.res.text, b)
}

// saFailure turns a failed SA query into saquery's message and status:
// sa_report_err's decoding of an error status (EIO), or "Query SA failed"
// with the errno of the transport's failure.
func saFailure(err error) error {
	var se *mad.StatusError
	if errors.As(err, &se) {
		return &saExit{msg: saReportErr(se.Status), code: errnoEIO, err: err}
	}
	if errors.Is(err, mad.ErrTimeout) {
		return &saExit{msg: "Query SA failed: Connection timed out", code: errnoETIMEDOUT, err: err}
	}
	return &saExit{msg: "Query SA failed", code: errnoEIO, err: err}
}

var (
	saErrNames = []string{"SA_NO_ERROR", "SA_ERR_NO_RESOURCES", "SA_ERR_REQ_INVALID", "SA_ERR_NO_RECORDS",
		"SA_ERR_TOO_MANY_RECORDS", "SA_ERR_REQ_INVALID_GID", "SA_ERR_REQ_INSUFFICIENT_COMPONENTS",
		"SA_ERR_REQ_DENIED", "SA_ERR_STATUS_PRIO_SUGGESTED", "SA_ERR_UNKNOWN"}
	madInvFieldNames = []string{"MAD No invalid fields", "MAD Bad version", "MAD Method specified is not supported",
		"MAD Method/Attribute combination is not supported", "MAD Reserved", "MAD Reserved", "MAD Reserved",
		"MAD Invalid value in Attribute field(s) or Attribute Modifier", "MAD UNKNOWN ERROR"}
)

// saReportErr is ibdiag_sa.c's sa_report_err message.
func saReportErr(status uint16) string {
	var madStr, saStr string
	if st := status & 0xff; st != 0 {
		b, r := "", ""
		if st&1 != 0 {
			b = "BUSY"
		}
		if st&2 != 0 {
			r = "Redirection Required"
		}
		madStr = fmt.Sprintf(" (%s; %s; %s)", b, r, madInvFieldNames[min(int(st>>2), len(madInvFieldNames)-1)])
	}
	if st := status >> 8; st != 0 {
		saStr = fmt.Sprintf(" SA(%s)", saErrNames[min(int(st&0xff), len(saErrNames)-1)])
	}
	return fmt.Sprintf("ERROR: Query result returned 0x%04x, %s%s", status, madStr, saStr)
}

// readCPI reads the SA's ClassPortInfo (query_sa_cpi).
func (r *saRun) readCPI() error {
	t, err := r.sa.Target(r.e.Ctx)
	if err != nil {
		return err
	}
	cpi := &iba.ClassPortInfo{}
	if err := r.s.mc.SubnAdmGet(r.e.Ctx, t, cpi, 0); err != nil {
		e := saFailure(err).(*saExit)
		e.msg += "\nFailed to query SA:ClassPortInfo"
		return e
	}
	b, err := marshal(cpi)
	if err != nil {
		return err
	}
	r.cpi = b
	r.res.ClassPortInfo = jsonOf(cpi.Desc(), b)
	return nil
}

// saRecordBuilder lays out a query record as saquery.c does: values
// written with the C types' widths into the components named by IBA path,
// and the component mask bits saquery.c's CHECK_AND_SET_* macros set,
// numbered as libibmad's IB_*_COMPMASK_* (which is what OpenSM reads).
type saRecordBuilder struct {
	d    *iba.Struct
	b    []byte
	mask uint64
	err  error
}

func newRecord(attr string) *saRecordBuilder {
	d, ok := iba.StructByName(attr)
	if !ok {
		return &saRecordBuilder{err: fmt.Errorf("no structure %s", attr)}
	}
	return &saRecordBuilder{d: d, b: make([]byte, d.Size)}
}

// put writes the low width bits of v where the component at path starts.
func (rb *saRecordBuilder) put(path string, width int, v uint64) {
	if rb.err != nil {
		return
	}
	ref, err := rb.d.Lookup(path)
	if err != nil {
		rb.err = err
		return
	}
	putBitsAt(rb.b, ref.Off, width, v)
}

// putGID writes a GID component (GIDs are byte aligned in every record).
func (rb *saRecordBuilder) putGID(path string, g iba.GID) {
	if rb.err != nil {
		return
	}
	ref, err := rb.d.Lookup(path)
	if err != nil {
		rb.err = err
		return
	}
	copy(rb.b[ref.Off/8:], g[:])
}

// get reads width bits where the component at path starts.
func (rb *saRecordBuilder) get(path string, width int) uint64 {
	if rb.err != nil {
		return 0
	}
	ref, err := rb.d.Lookup(path)
	if err != nil {
		rb.err = err
		return 0
	}
	var v uint64
	for i := 0; i < width; i++ {
		bit := ref.Off + i
		v = v<<1 | uint64(rb.b[bit/8]>>(7-bit%8)&1)
	}
	return v
}

func (rb *saRecordBuilder) bits(n ...int) {
	for _, i := range n {
		rb.mask |= 1 << i
	}
}

// checkAndSet is CHECK_AND_SET_VAL: when v, as a signed integer of size
// bits, differs from unset, it is written (size bits wide) and the mask
// bits are set. It reports whether it wrote.
func (rb *saRecordBuilder) checkAndSet(v int64, size int, unset int64, path string, bits ...int) bool {
	if signExtend(v, size) == signExtend(unset, size) {
		return false
	}
	rb.put(path, size, uint64(v))
	rb.bits(bits...)
	return true
}

// checkAndSetGID is CHECK_AND_SET_GID: a GID that is not zero.
func (rb *saRecordBuilder) checkAndSetGID(g iba.GID, path string, bit int) {
	if g == (iba.GID{}) {
		return
	}
	rb.putGID(path, g)
	rb.bits(bit)
}

func signExtend(v int64, size int) int64 {
	if size >= 64 {
		return v
	}
	sh := 64 - size
	return v << sh >> sh
}

func putBitsAt(b []byte, off, width int, v uint64) {
	for i := 0; i < width; i++ {
		bit := off + i
		if bit/8 >= len(b) {
			return
		}
		m := byte(0x80 >> (bit % 8))
		if v>>(width-1-i)&1 != 0 {
			b[bit/8] |= m
		} else {
			b[bit/8] &^= m
		}
	}
}

// table asks the SA for every record matching the built record, sent as
// built: through a typed attribute the reserved bits saquery sets (the
// PortInfoRecord options byte, MCMemberRecord's proxy join bit) would be
// lost.
func (r *saRun) table(rb *saRecordBuilder) ([][]byte, error) { return r.tableMod(rb, 0) }

// allRecords is get_all_records: a table query with an empty record.
func (r *saRun) allRecords(attr string) ([][]byte, error) {
	return r.table(newRecord(attr))
}

// dump records and prints each record.
func (r *saRun) dump(attr string, recs [][]byte, section string, print func(io.Writer, []byte) error) error {
	d, _ := iba.StructByName(attr)
	for _, b := range recs {
		rec := SARecord{Attribute: d.Name, Section: section, Data: jsonOf(d, b)}
		if d.Name == "NodeRecord" {
			rec.NodeName = r.nodeName(b)
		}
		r.res.Records = append(r.res.Records, rec)
		if r.f.intNames {
			print = func(w io.Writer, b []byte) error { return dottedRecord(w, d, b) }
		}
		if err := print(&r.res.text, b); err != nil {
			return err
		}
	}
	return nil
}

func (r *saRun) queryAndDump(rb *saRecordBuilder, print func(io.Writer, []byte) error) error {
	recs, err := r.table(rb)
	if err != nil {
		return err
	}
	return r.dump(rb.d.Name, recs, "", print)
}

// nodeName is remap_node_name: the node name map's name for the node, or
// its description made printable.
func (r *saRun) nodeName(nr []byte) string {
	guid, desc := nodeGUIDAndDesc(nr)
	return r.names.NameBytes(guid, desc)
}

// NodeRecord byte layout (IBA 15.2.5.2): LID at 0, NodeInfo at 4 (node
// type at 6, node GUID at 16, port GUID at 24), NodeDescription at 44.
const (
	nrNodeType = 6
	nrNodeGUID = 16
	nrPortGUID = 24
	nrDesc     = 44
)

func nodeGUIDAndDesc(nr []byte) (iba.GUID, []byte) {
	return iba.GUID(be64(nr[nrNodeGUID:])), nr[nrDesc : nrDesc+64]
}

func be64(b []byte) uint64 {
	var v uint64
	for _, c := range b[:8] {
		v = v<<8 | uint64(c)
	}
	return v
}

// descEqual is strncmp(name, desc, 64) == 0.
func descEqual(name string, desc []byte) bool {
	n := []byte(name)
	for i := 0; i < 64; i++ {
		var a, b byte
		if i < len(n) {
			a = n[i]
		}
		if i < len(desc) {
			b = desc[i]
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

// lid is get_lid: a node's description (looked up in the SA's
// NodeRecords) or a LID.
func (r *saRun) lid(name string) (uint16, error) {
	// isalpha of the first byte; "" reads as the LID 0, which is invalid.
	if c := name + "\x00"; (c[0] >= 'a' && c[0] <= 'z') || (c[0] >= 'A' && c[0] <= 'Z') {
		recs, err := r.allRecords("NodeRecord")
		if err != nil {
			return 0, err
		}
		for _, nr := range recs {
			_, desc := nodeGUIDAndDesc(nr)
			if descEqual(name, desc) {
				return uint16(nr[0])<<8 | uint16(nr[1]), nil
			}
		}
		return 0, &saExit{msg: fmt.Sprintf("Failed to find lid for \"%s\": Machine is not on the network", name), code: errnoENONET,
			err: fmt.Errorf("no node of the SA's %d is described so (query names are %s)", len(recs), saQueryNameList())}
	}
	t := strings.TrimLeft(name, " \t\n\v\f\r")
	v := cStrtoul(t)
	if strings.HasPrefix(t, "-") || v == 0 || v > 0xffff {
		return 0, &saExit{msg: fmt.Sprintf("Invalid lid specified: \"%s\"", name), code: errnoEINVAL}
	}
	return uint16(v), nil
}

func saQueryNameList() string {
	var s []string
	for _, q := range saQueryNames {
		s = append(s, q.name+" ("+q.alias+")")
	}
	return strings.Join(s, ", ")
}

// lidAndPorts is parse_lid_and_ports: "lid/port1/port2", each part
// optional; a port that is not a number is -1.
func (r *saRun) lidAndPorts(arg string) (lid int64, p1, p2 int64, err error) {
	parts := strings.SplitN(arg, "/", 3)
	l, err := r.lid(parts[0])
	if err != nil {
		return 0, -1, -1, err
	}
	port := func(s string) int64 {
		t := strings.TrimLeft(s, " \t\n\v\f\r")
		t = strings.TrimLeft(t, "+-")
		if t == "" || t[0] < '0' || t[0] > '9' {
			return -1
		}
		return int64(int32(uint32(cStrtoul(s))))
	}
	p1, p2 = -1, -1
	if len(parts) > 1 {
		p1 = port(parts[1])
	}
	if len(parts) > 2 {
		p2 = port(parts[2])
	}
	return int64(l), p1, p2, nil
}

func (r *saRun) argLIDPorts(args []string) (int64, int64, int64, error) {
	if len(args) == 0 {
		return 0, -1, -1, nil
	}
	return r.lidAndPorts(args[0])
}

func (r *saRun) classPortInfo(_ []string) error {
	return r.render(ibaprint.SAClassPortInfo, r.cpi)
}

func (r *saRun) nodeRecords(args []string) error {
	lid, _, _, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("NodeRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	return r.queryAndDump(rb, r.printNodeRecord)
}

func (r *saRun) printNodeRecord(w io.Writer, b []byte) error {
	return ibaprint.SANodeRecordNamed(w, b, r.nodeName(b))
}

func (r *saRun) portInfoRecords(args []string) error {
	lid, port, options, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("PortInfoRecord")
	rb.checkAndSet(lid, 16, 0, "endportLID", 0)
	rb.checkAndSet(port, 8, -1, "portNum", 1)
	rb.checkAndSet(options, 8, -1, "reserved_24", 2)
	return r.queryAndDump(rb, ibaprint.SAPortInfoRecord)
}

func (r *saRun) sl2vlRecords(args []string) error {
	lid, in, out, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("SLtoVLMappingTableRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(in, 8, -1, "inputPortNum", 1)
	rb.checkAndSet(out, 8, -1, "outputPortNum", 2)
	return r.queryAndDump(rb, ibaprint.SASL2VLRecord)
}

func (r *saRun) pkeyRecords(args []string) error {
	lid, port, block, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("PKeyTableRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(port, 8, -1, "portNum", 2)
	rb.checkAndSet(block, 16, -1, "blockNum", 1)
	return r.queryAndDump(rb, ibaprint.SAPKeyTableRecord)
}

func (r *saRun) vlarbRecords(args []string) error {
	lid, port, block, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("VLArbitrationTableRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(port, 8, -1, "outputPortNum", 1)
	rb.checkAndSet(block, 8, -1, "blockNum", 2)
	return r.queryAndDump(rb, ibaprint.SAVLArbRecord)
}

func (r *saRun) informInfoRecords(args []string) error {
	rb := newRecord("InformInfoRecord")
	if len(args) > 0 {
		g, err := parseInet6(args[0])
		if err != nil {
			return &saExit{msg: fmt.Sprintf("Invalid SubscriberGID specified: \"%s\"", args[0]), code: errnoEINVAL}
		}
		rb.putGID("subscriberGID", g)
		rb.bits(0) // even for the zero GID, as saquery.c does
	}
	return r.queryAndDump(rb, func(w io.Writer, b []byte) error { return ibaprint.SAInformInfoRecord(w, b, r.f.showKeys) })
}

func (r *saRun) linkRecords(args []string) error {
	var from, fromPort, to, toPort int64 = 0, -1, 0, -1
	var err error
	if len(args) > 0 {
		if from, fromPort, _, err = r.lidAndPorts(args[0]); err != nil {
			return err
		}
	}
	if len(args) > 1 {
		if to, toPort, _, err = r.lidAndPorts(args[1]); err != nil {
			return err
		}
	}
	rb := newRecord("LinkRecord")
	rb.checkAndSet(from, 16, 0, "fromLID", 0)
	rb.checkAndSet(fromPort, 8, -1, "fromPort", 1)
	rb.checkAndSet(to, 16, 0, "toLID", 3)
	rb.checkAndSet(toPort, 8, -1, "toPort", 2)
	return r.queryAndDump(rb, ibaprint.SALinkRecord)
}

func (r *saRun) serviceRecords(_ []string) error {
	return r.queryAndDump(newRecord("ServiceRecord"), func(w io.Writer, b []byte) error { return ibaprint.SAServiceRecord(w, b, r.f.showKeys) })
}

// pathRecords is query_path_records, quirks included: the hop limit is
// written as the whole 32-bit word it ends, the flow label only by its
// low 8 bits, the SL as the 16-bit word of QoS class and SL.
func (r *saRun) pathRecords(_ []string) error {
	p := &r.f.p
	rb := newRecord("PathRecord")
	if p.serviceID != 0 {
		rb.put("serviceID", 64, p.serviceID)
		rb.bits(0, 1)
	}
	rb.checkAndSetGID(p.sgid, "SGID", 3)
	rb.checkAndSetGID(p.dgid, "DGID", 2)
	rb.checkAndSet(int64(p.slid), 16, 0, "SLID", 5)
	rb.checkAndSet(int64(p.dlid), 16, 0, "DLID", 4)
	rb.checkAndSet(int64(p.hopLimit), 32, -1, "rawTraffic", 9)
	var flow uint64
	if uint8(p.flowLabel) != 0 {
		flow = uint64(uint8(p.flowLabel))
		rb.bits(8)
	}
	rb.put("rawTraffic", 32, rb.get("rawTraffic", 32)|uint64(uint32(flow<<8)))
	rb.checkAndSet(int64(p.tclass), 8, 0, "TClass", 10)
	var reversible uint64
	if int8(p.reversible) != -1 {
		reversible = uint64(uint8(p.reversible))
		rb.bits(11)
	}
	rb.checkAndSet(int64(p.numbPath), 8, -1, "reversible", 12)
	rb.put("reversible", 8, rb.get("reversible", 8)|uint64(uint8(reversible<<7)))
	rb.checkAndSet(int64(p.pkey), 16, 0, "PKey", 13)
	rb.checkAndSet(int64(p.sl), 16, -1, "QOSClass", 15)
	qos := uint64(0)
	if p.qosClass != -1 {
		qos = uint64(uint32(p.qosClass))
		rb.bits(14)
	}
	rb.put("QOSClass", 16, rb.get("QOSClass", 16)&0xf|uint64(uint16(qos<<4)))
	selector := func(v uint8, path string, bits ...int) {
		if v != 0 {
			rb.put(path, 8, uint64(v))
			rb.bits(bits...)
		}
	}
	selector(p.mtu, "MTUSelector", 16, 17)
	selector(p.rate, "rateSelector", 18, 19)
	selector(p.pktLife, "packetLifeTimeSelector", 20, 21)
	return r.queryAndDump(rb, ibaprint.SAPathRecord)
}

// mcMemberRecords is query_mcmember_records. ProxyJoin goes into the low
// bit of its byte, where libibmad's and OpenSM's bit field put it.
func (r *saRun) mcMemberRecords(_ []string) error {
	p := &r.f.p
	rb := newRecord("MCMemberRecord")
	rb.checkAndSetGID(p.mgid, "MGID", 0)
	rb.checkAndSetGID(p.gid, "portGID", 1)
	rb.checkAndSet(int64(p.mlid), 16, 0, "MLID", 3)
	rb.checkAndSet(int64(p.qkey), 32, 0, "QKey", 2)
	selector := func(v uint8, path string, bits ...int) {
		if v != 0 {
			rb.put(path, 8, uint64(v))
			rb.bits(bits...)
		}
	}
	selector(p.mtu, "MTUSelector", 4, 5)
	selector(p.rate, "rateSelector", 8, 9)
	selector(p.pktLife, "packetLifeTimeSelector", 10, 11)
	rb.checkAndSet(int64(p.tclass), 8, 0, "TClass", 6)
	rb.checkAndSet(int64(p.pkey), 16, 0, "PKey", 7)
	var sl, flow, hop, scope uint32
	if int8(p.sl) != -1 {
		sl = uint32(uint8(p.sl))
		rb.bits(12)
	}
	if uint8(p.flowLabel) != 0 {
		flow = uint32(uint8(p.flowLabel))
		rb.bits(13)
	}
	if int8(p.hopLimit) != -1 {
		hop = uint32(uint8(p.hopLimit))
		rb.bits(14)
	}
	rb.put("SL", 32, uint64(sl<<28|(flow&0xfffff)<<8|hop))
	if p.scope != 0 {
		scope = uint32(p.scope)
		rb.bits(15)
	}
	rb.checkAndSet(int64(p.joinState), 8, 0, "scope", 16)
	rb.put("scope", 8, rb.get("scope", 8)|uint64(uint8(scope<<4)))
	if int8(p.proxyJoin) != -1 {
		ref, err := rb.d.Lookup("proxyJoin")
		if err == nil {
			at := ref.Off / 8
			rb.b[at] = rb.b[at]&^1 | byte(p.proxyJoin&1)
		}
		rb.bits(17)
	}
	return r.queryAndDump(rb, ibaprint.SAMCMemberRecord)
}

func (r *saRun) lftRecords(args []string) error {
	lid, block, _, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("LinearForwardingTableRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(block, 16, -1, "blockNum", 1)
	return r.queryAndDump(rb, ibaprint.SALFTRecord)
}

// mftRecords is query_mft_records: the block number goes in the low bits
// of the position/block word as saquery.c writes it (a 16-bit store), the
// position in its top 4 bits.
func (r *saRun) mftRecords(args []string) error {
	lid, position, block, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("MulticastForwardingTableRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(block, 16, -1, "position", 3)
	word := rb.get("position", 16) & 0x1ff
	var pos uint64
	if int8(position) != -1 {
		pos = uint64(uint8(position))
		rb.bits(1)
	}
	rb.put("position", 16, word|uint64(uint16(pos<<12)))
	return r.queryAndDump(rb, ibaprint.SAMFTRecord)
}

func (r *saRun) guidInfoRecords(args []string) error {
	lid, block, _, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("GUIDInfoRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	rb.checkAndSet(block, 8, -1, "blockNum", 1)
	return r.queryAndDump(rb, ibaprint.SAGUIDInfoRecord)
}

// isMcastTopSupported is UMAD_SA_CAP_MASK2_IS_MCAST_TOP_SUP in the SA's
// ClassPortInfo:CapabilityMask2.
func (r *saRun) isMcastTopSupported() bool {
	if len(r.cpi) < 8 {
		return false
	}
	cm2 := (uint32(r.cpi[4])<<24 | uint32(r.cpi[5])<<16 | uint32(r.cpi[6])<<8 | uint32(r.cpi[7])) >> 5
	return cm2&(1<<3) != 0
}

func (r *saRun) switchInfoRecords(args []string) error {
	lid, _, _, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("SwitchInfoRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	top := r.isMcastTopSupported()
	return r.queryAndDump(rb, func(w io.Writer, b []byte) error { return ibaprint.SASwitchInfoRecord(w, b, top) })
}

func (r *saRun) smInfoRecords(args []string) error {
	lid, _, _, err := r.argLIDPorts(args)
	if err != nil {
		return err
	}
	rb := newRecord("SMInfoRecord")
	rb.checkAndSet(lid, 16, 0, "LID", 0)
	return r.queryAndDump(rb, ibaprint.SASMInfoRecord)
}

// printNodeRecords is print_node_records: every NodeRecord, filtered and
// printed as -N, -L, -l, -G, -O, -U and -D ask.
func (r *saRun) printNodeRecords(reqLID uint16, reqGUID uint64) error {
	recs, err := r.allRecords("NodeRecord")
	if err != nil {
		return err
	}
	d, _ := iba.StructByName("NodeRecord")
	w := &r.res.text
	if r.f.print == printAllDesc {
		w.WriteString("   LID \"name\"\n================\n")
	}
	keep := func(nr []byte) {
		r.res.Records = append(r.res.Records, SARecord{Attribute: d.Name, NodeName: r.nodeName(nr), Data: jsonOf(d, nr)})
	}
	show := func(nr []byte) error {
		keep(nr)
		switch r.f.print {
		case printLIDOnly, printUniqueLIDOnly:
			fmt.Fprintf(w, "%d\n", uint16(nr[0])<<8|uint16(nr[1]))
		case printGUIDOnly:
			fmt.Fprintf(w, "0x%016x\n", be64(nr[nrPortGUID:]))
		case printNameOfLID, printNameOfGUID:
			fmt.Fprintf(w, "%s\n", r.nodeName(nr))
		default:
			return r.printNodeRecord(w, nr)
		}
		return nil
	}
	for _, nr := range recs {
		lid := uint16(nr[0])<<8 | uint16(nr[1])
		switch r.f.print {
		case printAllDesc:
			if nr[nrNodeType] == byte(iba.NodeTypeCA) {
				keep(nr)
				fmt.Fprintf(w, "%6d  \"%s\"\n", lid, r.nodeName(nr))
			}
		case printNameOfLID:
			if lid == reqLID {
				if err := show(nr); err != nil {
					return err
				}
			}
		case printNameOfGUID:
			if be64(nr[nrPortGUID:]) == reqGUID {
				if err := show(nr); err != nil {
					return err
				}
			}
		default:
			_, desc := nodeGUIDAndDesc(nr)
			if r.reqArg == "" || descEqual(r.reqArg, desc) || descEqual(r.reqArg, []byte(r.nodeName(nr))) {
				if err := show(nr); err != nil {
					return err
				}
				if r.f.print == printUniqueLIDOnly {
					return errUniqueDone
				}
			}
		}
	}
	return nil
}

// isSM is print_issm_records: the PortInfoRecords with IsSM, then those
// with IsSMdisabled, asked with attribute modifier bit 31 as saquery does.
func (r *saRun) isSM() error {
	for _, sec := range []struct {
		title, name string
		bit         uint64
	}{{"IsSM ports\n", "IsSM", 1 << 1}, {"\nIsSMdisabled ports\n", "IsSMdisabled", 1 << 10}} {
		rb := newRecord("PortInfoRecord")
		rb.put("portInfo.capabilityMask", 32, sec.bit)
		rb.bits(7)
		recs, err := r.tableMod(rb, 1<<31)
		if err != nil {
			return err
		}
		r.res.text.WriteString(sec.title)
		if err := r.dump(rb.d.Name, recs, sec.name, ibaprint.SAPortInfoRecordBrief); err != nil {
			return err
		}
	}
	return nil
}

// tableMod sends the raw GetTable with an attribute modifier (-s sets bit
// 31) and cuts the records at the SA header's AttributeOffset.
func (r *saRun) tableMod(rb *saRecordBuilder, mod uint32) ([][]byte, error) {
	if rb.err != nil {
		return nil, fmt.Errorf("building the %s query: %w", rb.d.Name, rb.err)
	}
	if err := r.applyMembers(rb); err != nil {
		return nil, err
	}
	r.res.ComponentMask = rb.mask
	t, err := r.sa.Target(r.e.Ctx)
	if err != nil {
		return nil, err
	}
	method := iba.MethodGetTable
	if r.f.get && rb.d.AttrID == r.mainAttr {
		method = iba.MethodGet
	}
	rep, err := r.s.mc.Do(r.e.Ctx, mad.Request{Target: t, Class: iba.ClassSubnAdm, Method: method,
		AttrID: rb.d.AttrID, AttrMod: mod, Data: rb.b, CompMask: rb.mask})
	if err != nil {
		return nil, saFailure(err)
	}
	if method == iba.MethodGet {
		if len(rep.Data()) < rb.d.Size {
			return nil, &saExit{msg: "Query SA failed: a short reply", code: errnoEIO}
		}
		return [][]byte{rep.Data()[:rb.d.Size]}, nil
	}
	tb, err := r.s.mc.SplitTable(rep, rb.d)
	if err != nil {
		return nil, &saExit{msg: "Query SA failed", code: errnoEIO, err: err}
	}
	return tb.Records, nil
}

func (r *saRun) mcGroups() error {
	recs, err := r.allRecords("MCMemberRecord")
	if err != nil {
		return err
	}
	return r.dump("MCMemberRecord", recs, "", ibaprint.SAMCGroupRecord)
}

// mcMembers is print_multicast_member_records: every MCMemberRecord, with
// the node whose port GUID is the member's interface ID; with an MLID
// argument, only that group's members' GIDs.
func (r *saRun) mcMembers() error {
	recs, err := r.allRecords("MCMemberRecord")
	if err != nil {
		return err
	}
	nodes, err := r.allRecords("NodeRecord")
	if err != nil {
		return err
	}
	d, _ := iba.StructByName("MCMemberRecord")
	for _, mr := range recs {
		name := "<unknown>"
		iid := be64(mr[24:]) // portGID's interface ID
		for _, nr := range nodes {
			if be64(nr[nrPortGUID:]) == iid {
				name = r.nodeName(nr)
				break
			}
		}
		mlid := uint16(mr[36])<<8 | uint16(mr[37])
		if r.reqArg != "" {
			if int64(cStrtol(r.reqArg)) == int64(mlid) {
				r.res.Records = append(r.res.Records, SARecord{Attribute: d.Name, NodeName: name, Data: jsonOf(d, mr)})
				if err := ibaprint.SAMCMemberGID(&r.res.text, mr, name); err != nil {
					return err
				}
			}
			continue
		}
		r.res.Records = append(r.res.Records, SARecord{Attribute: d.Name, NodeName: name, Data: jsonOf(d, mr)})
		if err := ibaprint.SAMCMember(&r.res.text, mr, name); err != nil {
			return err
		}
	}
	return nil
}

// cStrtol is strtol(s, NULL, 0) on a 64-bit long.
func cStrtol(s string) int64 {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if strings.HasPrefix(t, "-") {
		return -int64(cStrtoul(t[1:]))
	}
	return int64(cStrtoul(t))
}

var _ pflag.Value = (*setter)(nil)
