package rdmatool

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/nldev"
)

// procRoot is where process names are read from (/proc/PID/comm).
var procRoot = "/proc"

func (r *rd) resHelp() error {
	w := r.out.w
	fmt.Fprintf(w, "Usage: %s resource\n", r.name)
	for _, l := range []string{
		"resource show [DEV]",
		"resource show [qp|cm_id|pd|mr|cq|ctx|srq]",
		"resource show qp link [DEV/PORT]",
		"resource show qp link [DEV/PORT] [FILTER-NAME FILTER-VALUE]",
		"resource show cm_id link [DEV/PORT]",
		"resource show cm_id link [DEV/PORT] [FILTER-NAME FILTER-VALUE]",
		"resource show cq dev [DEV]",
		"resource show cq dev [DEV] [FILTER-NAME FILTER-VALUE]",
		"resource show pd dev [DEV]",
		"resource show pd dev [DEV] [FILTER-NAME FILTER-VALUE]",
		"resource show mr dev [DEV]",
		"resource show mr dev [DEV] [FILTER-NAME FILTER-VALUE]",
		"resource show ctx dev [DEV]",
		"resource show ctx dev [DEV] [FILTER-NAME FILTER-VALUE]",
		"resource show srq dev [DEV]",
		"resource show srq dev [DEV] [FILTER-NAME FILTER-VALUE]",
	} {
		fmt.Fprintf(w, "          %s\n", l)
	}
	return nil
}

func (r *rd) cmdRes() error {
	return r.exec([]command{
		{"", (*rd).resShow},
		{"show", (*rd).resShow},
		{"list", (*rd).resShow},
		{"help", (*rd).resHelp},
	}, "resource command")
}

func (r *rd) resShow() error {
	// "rdma res show DEV" is the summary of one device.
	if len(r.args) == 1 && r.lookupDev(r.arg()) != nil {
		return r.execDev((*rd).resSummary)
	}
	return r.exec([]command{
		{"", func(r *rd) error { return r.execDev((*rd).resSummary) }},
		{"qp", resFunc(qpFilters, true, (*rd).showQPs)},
		{"cm_id", resFunc(cmidFilters, true, (*rd).showCMIDs)},
		{"cq", resFunc(cqFilters, false, (*rd).showCQs)},
		{"mr", resFunc(mrFilters, false, (*rd).showMRs)},
		{"pd", resFunc(pdFilters, false, (*rd).showPDs)},
		{"ctx", resFunc(ctxFilters, false, (*rd).showCtxs)},
		{"srq", resFunc(srqFilters, false, (*rd).showSRQs)},
	}, "parameter")
}

// resFunc is iproute2's RES_FUNC: filters, then the device (or link) the
// filters name, then one query per device (or per port for QPs and CM IDs).
func resFunc(defs []filterDef, perPort bool, show func(*rd) error) func(*rd) error {
	return func(r *rd) error {
		if err := r.buildFilters(defs); err != nil {
			return err
		}
		if err := r.setArgToDevName(); err != nil {
			return err
		}
		if perPort {
			return r.execLink(show, false)
		}
		return r.execDev(show)
	}
}

func (r *rd) query() nldev.Query {
	return nldev.Query{Dev: r.devIdx, Port: r.portIdx, DriverDetails: r.opt.driverDetails, Raw: r.opt.raw}
}

// byID runs the per-object query when a filter names one object, falling
// back to the dump when the kernel refuses it (old kernels, or no such
// object: the dump then prints nothing), as iproute2 does. With -r there
// is no fallback.
func byID[T any](r *rd, get func(id uint32) (*T, error), dump func() ([]T, error)) ([]T, error) {
	if id, ok := r.doitIndex(); ok {
		one, err := get(id)
		if err == nil {
			return []T{*one}, nil
		}
		if r.opt.raw {
			return nil, err
		}
	}
	return dump()
}

func (r *rd) resSummary() error {
	s, err := r.conn.Res.SummaryOf(r.ctx, r.devIdx)
	if err != nil {
		return err
	}
	o := r.out
	o.openObject()
	o.num(anyOut, "ifindex", fmt.Sprintf("%d: ", s.DevIndex), uint64(s.DevIndex))
	o.str(anyOut, "ifname", s.DevName+": ", s.DevName)
	for _, e := range s.Entries {
		r.printU64(e.Name, e.Curr, true)
	}
	o.newline()
	return nil
}

// printU32 and printU64 are res_print_u32/u64: "name value " when present.
func (r *rd) printU32(name string, v uint32, present bool) {
	r.printU64(name, uint64(v), present)
}

func (r *rd) printU64(name string, v uint64, present bool) {
	if present {
		r.out.num(anyOut, name, fmt.Sprintf("%s %d ", name, v), v)
	}
}

// printKey is print_key: hex, a JSON string without 0x. iproute2 cuts
// the value to 32 bits; rdmatool prints all 64 (the MR's iova).
func (r *rd) printKey(name string, v uint64, present bool) {
	if present {
		r.out.str(anyOut, name, fmt.Sprintf("%s 0x%x ", name, v), strconv.FormatUint(v, 16))
	}
}

// comm returns the name of an object's owner: the process name from /proc
// for user objects, the kernel module otherwise ("" if unknown).
type owner struct {
	name  string
	known bool
}

func comm(e *nldev.Entry) owner {
	if e.Has(nldev.AttrResPID) {
		if e.PID == 0 {
			return owner{}
		}
		// comm is at most 16 bytes (TASK_COMM_LEN); read no more than a
		// line of 64 whatever procRoot holds.
		f, err := os.Open(filepath.Join(procRoot, strconv.FormatUint(uint64(e.PID), 10), "comm"))
		if err != nil {
			return owner{}
		}
		var buf [64]byte
		n, _ := io.ReadFull(f, buf[:])
		f.Close()
		if n == 0 {
			return owner{}
		}
		s := string(buf[:n])
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[:i]
		}
		if len(s) > 63 {
			s = s[:63]
		}
		return owner{s, true}
	}
	if e.Has(nldev.AttrResKernName) {
		return owner{e.KernName, true}
	}
	return owner{}
}

// printComm is print_comm: kernel owners in brackets in text.
func (r *rd) printComm(e *nldev.Entry, ow owner) {
	if !ow.known {
		return
	}
	c := ow.name
	if !e.Has(nldev.AttrResPID) && !r.opt.json {
		c = "[" + c + "]"
	}
	if len(c) > 17 {
		c = c[:17] // iproute2 formats into an 18-byte buffer
	}
	r.out.str(anyOut, "comm", "comm "+c+" ", c)
}

// printDev is print_dev: the device of a device-scoped object.
func (r *rd) printDev(idx uint32, name string) {
	r.out.inum(jsonOut, "ifindex", "", int64(int32(idx)))
	r.out.str(anyOut, "ifname", "dev "+name+" ", name)
}

// printLink is print_link: the device and port of a port-scoped object.
func (r *rd) printLink(idx uint32, name string, port uint32, hasPort bool) {
	o := r.out
	o.num(jsonOut, "ifindex", "", uint64(idx))
	o.str(jsonOut, "ifname", "", name)
	tmp := name + "/-"
	if hasPort {
		o.num(jsonOut, "port", "", uint64(port))
		tmp = fmt.Sprintf("%s/%d", name, int32(port))
	}
	if !r.opt.json {
		o.str(anyOut, "", "link "+tmp+" ", tmp)
	}
}

// printDriver is print_driver_table, shown with -dd.
func (r *rd) printDriver(e *nldev.Entry) {
	if !r.opt.driverDetails || !e.Has(nldev.AttrDriver) {
		return
	}
	o := r.out
	o.newlineIndent()
	cc := 0
	for _, d := range e.Driver {
		if cc > 80 {
			o.newlineIndent()
			cc = 0
		}
		key := "drv_" + d.Name
		hex := d.PrintType == nldev.PrintTypeHex
		if d.PrintType > nldev.PrintTypeHex && d.Value.Type != nldev.AttrDriverString {
			return
		}
		var txt string
		switch d.Value.Type {
		case nldev.AttrDriverString:
			o.str(anyOut, key, key, d.Value.Str)
			o.fp(" " + d.Value.Str + " ")
			continue
		case nldev.AttrDriverS32:
			v := int32(d.Value.Int)
			txt = fmt.Sprintf("%s %d ", key, v)
			if hex {
				txt = fmt.Sprintf("%s 0x%x ", key, uint32(v))
			}
			o.inum(jsonOut, key, "", int64(v))
		case nldev.AttrDriverU32:
			v := uint32(d.Value.Uint)
			txt = fmt.Sprintf("%s %d ", key, v)
			if hex {
				txt = fmt.Sprintf("%s 0x%x ", key, v)
			}
			o.inum(jsonOut, key, "", int64(int32(v)))
		case nldev.AttrDriverS64:
			txt = fmt.Sprintf("%s %d ", key, d.Value.Int)
			if hex {
				txt = fmt.Sprintf("%s 0x%x ", key, uint64(d.Value.Int))
			}
			o.inum(jsonOut, key, "", int64(int32(d.Value.Int)))
		case nldev.AttrDriverU64:
			txt = fmt.Sprintf("%s %d ", key, d.Value.Uint)
			if hex {
				txt = fmt.Sprintf("%s 0x%x ", key, d.Value.Uint)
			}
			o.inum(jsonOut, key, "", int64(int32(d.Value.Uint)))
		default:
			return
		}
		o.fp(txt)
		if o.jw == nil {
			cc += len(txt)
		}
	}
}

// printRaw is print_raw_data, shown with -r.
func (r *rd) printRaw(e *nldev.Entry) {
	o := r.out
	o.openArray(jsonOut, "data")
	for _, b := range e.Raw {
		o.num(anyOut, "", strconv.Itoa(int(b)), uint64(b))
	}
	o.closeArray(anyOut, ">")
}

var qpTypes = []string{"SMI", "GSI", "RC", "UC", "UD", "RAW_IPV6", "RAW_ETHERTYPE", "UNKNOWN", "RAW_PACKET", "XRC_INI", "XRC_TGT"}

// qpTypeDriver is IB_QPT_DRIVER, a QP type private to a driver.
const qpTypeDriver = 0xff

func qpTypeName(t uint8) string {
	if int(t) < len(qpTypes) {
		return qpTypes[t]
	}
	if t == qpTypeDriver {
		return "DRIVER"
	}
	return "UNKNOWN"
}

var (
	qpStates      = []string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}
	pathMigStates = []string{"MIGRATED", "REARM", "ARMED"}
	cmidStates    = []string{"IDLE", "ADDR_QUERY", "ADDR_RESOLVED", "ROUTE_QUERY", "ROUTE_RESOLVED", "CONNECT",
		"DISCONNECT", "ADDR_BOUND", "LISTEN", "DEVICE_REMOVAL", "DESTROYING"}
	pollCtxs = []string{"DIRECT", "SOFTIRQ", "WORKQUEUE", "UNBOUND_WORKQUEUE"}
	srqTypes = []string{"BASIC", "XRC", "TM"}
)

var qpFilters = []filterDef{
	{name: "link"}, {name: "lqpn", number: true, doit: true}, {name: "rqpn", number: true},
	{name: "pid", number: true}, {name: "sq-psn", number: true}, {name: "rq-psn", number: true},
	{name: "type"}, {name: "path-mig-state"}, {name: "state"}, {name: "pdn", number: true},
}

func (r *rd) showQPs() error {
	q := r.query()
	qps, err := byID(r, func(id uint32) (*nldev.QP, error) { return r.conn.Res.QP(r.ctx, q, id) },
		func() ([]nldev.QP, error) { return r.conn.Res.QPs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range qps {
		r.qpLine(&qps[i])
	}
	return nil
}

func (r *rd) qpLine(q *nldev.QP) {
	o := r.out
	if r.opt.raw {
		o.openObject()
		r.printLink(q.DevIndex, q.DevName, r.portIdx, q.Has(nldev.AttrPortIndex))
		r.printRaw(&q.Entry)
		o.newline()
		return
	}
	if q.Port != r.portIdx ||
		r.filteredNum("lqpn", q.LQPN, true) ||
		r.filteredNum("pdn", q.PDN, q.Has(nldev.AttrResPDN)) ||
		r.filteredNum("rqpn", q.RQPN, q.Has(nldev.AttrResRQPN)) ||
		r.filteredNum("rq-psn", q.RQPSN, q.Has(nldev.AttrResRQPSN)) ||
		r.filteredNum("sq-psn", q.SQPSN, q.Has(nldev.AttrResSQPSN)) ||
		r.filteredStr("path-mig-state", enumName(pathMigStates, uint64(q.PathMigState))) ||
		r.filteredStr("type", qpTypeName(q.Type)) ||
		r.filteredStr("state", enumName(qpStates, uint64(q.State))) {
		return
	}
	c := comm(&q.Entry)
	if r.filteredNum("pid", q.PID, q.Has(nldev.AttrResPID)) {
		return
	}
	o.openObject()
	r.printLink(q.DevIndex, q.DevName, q.Port, q.Has(nldev.AttrPortIndex))
	r.printU32("lqpn", q.LQPN, true)
	if q.Has(nldev.AttrResRQPN) {
		o.num(anyOut, "rqpn", fmt.Sprintf("rqpn %d ", int32(q.RQPN)), uint64(q.RQPN))
	}
	t := qpTypeName(q.Type)
	o.str(anyOut, "type", "type "+t+" ", t)
	if q.Type == qpTypeDriver && q.Has(nldev.AttrResSubtype) {
		// A driver-internal QP (shown with -dd, Linux 6.10+).
		o.str(anyOut, "subtype", "subtype "+q.Subtype+" ", q.Subtype)
	}
	s := enumName(qpStates, uint64(q.State))
	o.str(anyOut, "state", "state "+s+" ", s)
	if q.Has(nldev.AttrResRQPSN) {
		o.num(anyOut, "rq-psn", fmt.Sprintf("rq-psn %d ", int32(q.RQPSN)), uint64(q.RQPSN))
	}
	r.printU32("sq-psn", q.SQPSN, true)
	if q.Has(nldev.AttrResPathMigState) {
		m := enumName(pathMigStates, uint64(q.PathMigState))
		o.str(anyOut, "path-mig-state", "path-mig-state "+m+" ", m)
	}
	r.printU32("pdn", q.PDN, q.Has(nldev.AttrResPDN))
	r.printU32("pid", q.PID, q.Has(nldev.AttrResPID))
	r.printComm(&q.Entry, c)
	r.printDriver(&q.Entry)
	o.newline()
}

var cmidFilters = []filterDef{
	{name: "link"}, {name: "lqpn", number: true}, {name: "qp-type"}, {name: "state"}, {name: "ps"},
	{name: "dev-type"}, {name: "transport-type"}, {name: "pid", number: true}, {name: "src-addr"},
	{name: "src-port", number: true}, {name: "dst-addr"}, {name: "dst-port", number: true},
	{name: "cm-idn", number: true, doit: true},
}

// psName is cm_id_ps_to_str; iproute2 6.1 calls RDMA_PS_IB "IPoIB" too.
func psName(ps uint32) string {
	switch ps {
	case 0x0002, 0x013F: // RDMA_PS_IPOIB, RDMA_PS_IB
		return "IPoIB"
	case 0x0106:
		return "TCP"
	case 0x0111:
		return "UDP"
	}
	return "---"
}

func (r *rd) showCMIDs() error {
	q := r.query()
	ids, err := byID(r, func(id uint32) (*nldev.CMID, error) { return r.conn.Res.CMID(r.ctx, q, id) },
		func() ([]nldev.CMID, error) { return r.conn.Res.CMIDs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range ids {
		r.cmidLine(&ids[i])
	}
	return nil
}

func (r *rd) cmidLine(c *nldev.CMID) {
	o := r.out
	if c.Port != 0 && c.Port != r.portIdx {
		return
	}
	src, srcOK := c.Src()
	dst, dstOK := c.Dst()
	hasSrc, hasDst := c.Has(nldev.AttrResSrcAddr), c.Has(nldev.AttrResDstAddr)
	if (hasSrc && !srcOK) || (hasDst && !dstOK) {
		return // ss_ntop failed: iproute2 skips the entry
	}
	if r.filteredNum("lqpn", c.LQPN, c.Has(nldev.AttrResLQPN)) ||
		r.filteredStr("qp-type", qpTypeName(c.Type)) ||
		r.filteredStr("ps", psName(c.PS)) ||
		r.filteredStr("state", enumName(cmidStates, uint64(c.State))) ||
		r.filteredStr("src-addr", src.Addr().String()) ||
		r.filteredNum("src-port", uint32(src.Port()), hasSrc) ||
		r.filteredStr("dst-addr", dst.Addr().String()) ||
		r.filteredNum("dst-port", uint32(dst.Port()), hasDst) {
		return
	}
	cm := comm(&c.Entry)
	if r.filteredNum("pid", c.PID, c.Has(nldev.AttrResPID)) ||
		r.filteredNum("cm-idn", c.CMIDN, c.Has(nldev.AttrResCMIDN)) {
		return
	}
	o.openObject()
	r.printLink(c.DevIndex, c.DevName, c.Port, c.Has(nldev.AttrPortIndex))
	r.printU32("cm-idn", c.CMIDN, c.Has(nldev.AttrResCMIDN))
	r.printU32("lqpn", c.LQPN, c.Has(nldev.AttrResLQPN))
	if c.Has(nldev.AttrResType) {
		t := qpTypeName(c.Type)
		o.str(anyOut, "qp-type", "qp-type "+t+" ", t)
	}
	s := enumName(cmidStates, uint64(c.State))
	o.str(anyOut, "state", "state "+s+" ", s)
	ps := psName(c.PS)
	o.str(anyOut, "ps", "ps "+ps+" ", ps)
	r.printU32("pid", c.PID, c.Has(nldev.AttrResPID))
	r.printComm(&c.Entry, cm)
	if hasSrc {
		r.printAddr("src-addr", src.Addr().String(), src.Port())
	}
	if hasDst {
		r.printAddr("dst-addr", dst.Addr().String(), dst.Port())
	}
	r.printDriver(&c.Entry)
	o.newline()
}

func (r *rd) printAddr(key, addr string, port uint16) {
	o := r.out
	o.str(anyOut, key, key, fmt.Sprintf("%s:%d", addr, port))
	o.fp(fmt.Sprintf(" %s:%d ", addr, port))
}

var cqFilters = []filterDef{
	{name: "dev"}, {name: "users", number: true}, {name: "poll-ctx"}, {name: "pid", number: true},
	{name: "cqn", number: true, doit: true}, {name: "ctxn", number: true},
}

func (r *rd) showCQs() error {
	q := r.query()
	cqs, err := byID(r, func(id uint32) (*nldev.CQ, error) { return r.conn.Res.CQ(r.ctx, q, id) },
		func() ([]nldev.CQ, error) { return r.conn.Res.CQs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range cqs {
		c := &cqs[i]
		o := r.out
		if r.opt.raw {
			o.openObject()
			r.printDev(c.DevIndex, c.DevName)
			r.printRaw(&c.Entry)
			o.newline()
			continue
		}
		pc := enumName(pollCtxs, uint64(c.PollCtx))
		if r.filteredNum("users", uint32(c.Users), true) || r.filteredStr("poll-ctx", pc) {
			continue
		}
		cm := comm(&c.Entry)
		if r.filteredNum("pid", c.PID, c.Has(nldev.AttrResPID)) ||
			r.filteredNum("cqn", c.CQN, c.Has(nldev.AttrResCQN)) ||
			r.filteredNum("ctxn", c.CTXN, c.Has(nldev.AttrResCTXN)) {
			continue
		}
		o.openObject()
		r.printDev(c.DevIndex, c.DevName)
		r.printU32("cqn", c.CQN, c.Has(nldev.AttrResCQN))
		r.printU32("cqe", c.CQE, true)
		r.printU64("users", c.Users, true)
		if c.Has(nldev.AttrResPollCtx) {
			o.str(anyOut, "poll-ctx", "poll-ctx "+pc+" ", pc)
		}
		if c.Has(nldev.AttrDevDIM) && c.DIM <= 1 {
			o.onOff(anyOut, "adaptive-moderation", "adaptive-moderation %s ", c.DIM == 1)
		}
		r.printU32("ctxn", c.CTXN, c.Has(nldev.AttrResCTXN))
		r.printU32("pid", c.PID, c.Has(nldev.AttrResPID))
		r.printComm(&c.Entry, cm)
		r.printDriver(&c.Entry)
		o.newline()
	}
	return nil
}

var mrFilters = []filterDef{
	{name: "dev"}, {name: "rkey", number: true}, {name: "lkey", number: true}, {name: "mrlen", number: true},
	{name: "pid", number: true}, {name: "mrn", number: true, doit: true}, {name: "pdn", number: true},
}

func (r *rd) showMRs() error {
	q := r.query()
	mrs, err := byID(r, func(id uint32) (*nldev.MR, error) { return r.conn.Res.MR(r.ctx, q, id) },
		func() ([]nldev.MR, error) { return r.conn.Res.MRs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range mrs {
		m := &mrs[i]
		o := r.out
		if r.opt.raw {
			o.openObject()
			r.printDev(m.DevIndex, m.DevName)
			r.printRaw(&m.Entry)
			o.newline()
			continue
		}
		if !m.Has(nldev.AttrResMRLen) {
			// iproute2 fails the whole listing at an MR without a length.
			return fmt.Errorf("MR %d of %s without a length", m.MRN, m.DevName)
		}
		if r.filteredNum("mrlen", uint32(m.MRLen), true) {
			continue
		}
		cm := comm(&m.Entry)
		if r.filteredNum("pid", m.PID, m.Has(nldev.AttrResPID)) ||
			r.filteredNum("mrn", m.MRN, m.Has(nldev.AttrResMRN)) ||
			r.filteredNum("pdn", m.PDN, m.Has(nldev.AttrResPDN)) {
			continue
		}
		o.openObject()
		r.printDev(m.DevIndex, m.DevName)
		r.printU32("mrn", m.MRN, m.Has(nldev.AttrResMRN))
		r.printKey("rkey", uint64(m.RKey), m.Has(nldev.AttrResRKey))
		r.printKey("lkey", uint64(m.LKey), m.Has(nldev.AttrResLKey))
		r.printKey("iova", m.IOVA, m.Has(nldev.AttrResIOVA))
		r.printU64("mrlen", m.MRLen, true)
		r.printU32("pdn", m.PDN, m.Has(nldev.AttrResPDN))
		r.printU32("pid", m.PID, m.Has(nldev.AttrResPID))
		r.printComm(&m.Entry, cm)
		r.printDriver(&m.Entry)
		o.newline()
	}
	return nil
}

var pdFilters = []filterDef{
	{name: "dev"}, {name: "users", number: true}, {name: "pid", number: true}, {name: "ctxn", number: true},
	{name: "pdn", number: true, doit: true}, {name: "ctxn", number: true},
}

func (r *rd) showPDs() error {
	q := r.query()
	pds, err := byID(r, func(id uint32) (*nldev.PD, error) { return r.conn.Res.PD(r.ctx, q, id) },
		func() ([]nldev.PD, error) { return r.conn.Res.PDs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range pds {
		p := &pds[i]
		if r.filteredNum("users", uint32(p.Users), true) {
			continue
		}
		cm := comm(&p.Entry)
		if r.filteredNum("pid", p.PID, p.Has(nldev.AttrResPID)) ||
			r.filteredNum("ctxn", p.CTXN, p.Has(nldev.AttrResCTXN)) ||
			r.filteredNum("pdn", p.PDN, p.Has(nldev.AttrResPDN)) {
			continue
		}
		o := r.out
		o.openObject()
		r.printDev(p.DevIndex, p.DevName)
		r.printU32("pdn", p.PDN, p.Has(nldev.AttrResPDN))
		r.printKey("local_dma_lkey", uint64(p.LocalDMALKey), p.Has(nldev.AttrResLocalDMALKey))
		r.printU64("users", p.Users, true)
		r.printKey("unsafe_global_rkey", uint64(p.UnsafeGlobalRKey), p.Has(nldev.AttrResUnsafeGlobalRKey))
		r.printU32("ctxn", p.CTXN, p.Has(nldev.AttrResCTXN))
		r.printU32("pid", p.PID, p.Has(nldev.AttrResPID))
		r.printComm(&p.Entry, cm)
		r.printDriver(&p.Entry)
		o.newline()
	}
	return nil
}

var ctxFilters = []filterDef{{name: "dev"}, {name: "pid", number: true}, {name: "ctxn", number: true, doit: true}}

func (r *rd) showCtxs() error {
	q := r.query()
	ctxs, err := byID(r, func(id uint32) (*nldev.Ctx, error) { return r.conn.Res.Ctx(r.ctx, q, id) },
		func() ([]nldev.Ctx, error) { return r.conn.Res.Ctxs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range ctxs {
		c := &ctxs[i]
		cm := comm(&c.Entry)
		if r.filteredNum("pid", c.PID, c.Has(nldev.AttrResPID)) || r.filteredNum("ctxn", c.CTXN, true) {
			continue
		}
		o := r.out
		o.openObject()
		r.printDev(c.DevIndex, c.DevName)
		r.printU32("ctxn", c.CTXN, true)
		r.printU32("pid", c.PID, c.Has(nldev.AttrResPID))
		r.printComm(&c.Entry, cm)
		r.printDriver(&c.Entry)
		o.newline()
	}
	return nil
}

var srqFilters = []filterDef{
	{name: "dev"}, {name: "pid", number: true}, {name: "srqn", number: true, doit: true}, {name: "type"},
	{name: "pdn", number: true}, {name: "cqn", number: true}, {name: "lqpn", number: true},
}

func (r *rd) showSRQs() error {
	q := r.query()
	srqs, err := byID(r, func(id uint32) (*nldev.SRQ, error) { return r.conn.Res.SRQ(r.ctx, q, id) },
		func() ([]nldev.SRQ, error) { return r.conn.Res.SRQs(r.ctx, q) })
	if err != nil {
		return err
	}
	for i := range srqs {
		s := &srqs[i]
		if r.opt.raw {
			o := r.out
			o.openObject()
			r.printDev(s.DevIndex, s.DevName)
			r.printRaw(&s.Entry)
			o.newline()
			continue
		}
		cm := comm(&s.Entry)
		t := enumName(srqTypes, uint64(s.Type))
		if r.filteredNum("pid", s.PID, s.Has(nldev.AttrResPID)) ||
			r.filteredNum("srqn", s.SRQN, true) ||
			r.filteredStr("type", t) ||
			r.filteredNum("pdn", s.PDN, s.Has(nldev.AttrResPDN)) ||
			r.filteredNum("cqn", s.CQN, s.Has(nldev.AttrResCQN)) {
			continue
		}
		qps, ok := r.srqQPs(s)
		if !ok {
			continue
		}
		o := r.out
		o.openObject()
		r.printDev(s.DevIndex, s.DevName)
		r.printU32("srqn", s.SRQN, true)
		o.str(anyOut, "type", "type "+t+" ", t)
		if len(qps) > 0 {
			o.openArray(anyOut, "lqpn")
			o.fp(" ")
			for j, qp := range qps {
				o.str(anyOut, "", qp, qp)
				if j+1 < len(qps) {
					o.fp(",")
				}
			}
			o.fp(" ")
			o.closeArray(jsonOut, "")
		}
		r.printU32("pdn", s.PDN, s.Has(nldev.AttrResPDN))
		r.printU32("cqn", s.CQN, s.Has(nldev.AttrResCQN))
		r.printU32("pid", s.PID, s.Has(nldev.AttrResPID))
		r.printComm(&s.Entry, cm)
		r.printDriver(&s.Entry)
		o.newline()
	}
	return nil
}

// srqQPs renders an SRQ's QPs after the lqpn filter, as get_srq_qps: single
// QPs as "N", unfiltered runs inside a range as "A-B"; ok is false when the
// SRQ is to be skipped (no QP table, or nothing left after filtering).
func (r *rd) srqQPs(s *nldev.SRQ) (out []string, ok bool) {
	if !s.Has(nldev.AttrResQP) {
		return nil, false
	}
	if len(s.QPs) == 0 {
		return nil, !r.hasFilter("lqpn")
	}
	run := func(lo, hi uint32) string {
		if hi == 0 {
			return strconv.Itoa(int(int32(lo)))
		}
		return fmt.Sprintf("%d-%d", int32(lo), int32(hi))
	}
	for _, q := range s.QPs {
		if !q.Range {
			if r.filteredNum("lqpn", q.Min, true) {
				continue
			}
			out = append(out, strconv.Itoa(int(int32(q.Min))))
			continue
		}
		// A zero start means "no run open", as in iproute2.
		var lo, hi uint32
		for n := q.Min; n <= q.Max; n++ {
			if r.filteredNum("lqpn", n, true) {
				if lo != 0 {
					out = append(out, run(lo, hi))
					lo, hi = 0, 0
				}
			} else if lo == 0 {
				lo = n
			} else {
				hi = n
			}
			if n == ^uint32(0) {
				break
			}
		}
		if lo != 0 {
			out = append(out, run(lo, hi))
		}
	}
	return out, len(out) > 0
}
