package rdmatool

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/nldev"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fakeKernel answers NLDEV requests for one soft-RoCE device rxe0 (one
// port on eth0) with a pingpong's resources, laid out as Linux 6.1 sends them.
func fakeKernel(t *testing.T) func() (*nldev.Conn, error) {
	h := fakeHandler(t)
	return func() (*nldev.Conn, error) { return nldev.NewConn(nltest.Dial(h)), nil }
}

// fakeHandler is fakeKernel's netlink side.
func fakeHandler(t *testing.T) nltest.Func {
	dev := nldev.Device{Index: 1, Name: "rxe0", NumPorts: 1, CapFlags: 0x2000000000031a4, NodeGUID: 0x505400fffe123456,
		SysImageGUID: 0x505400fffe123456, NodeType: 1, Protocol: "roce"}
	dev.Set(nldev.AttrDevDIM)
	port := nldev.Port{DevIndex: 1, DevName: "rxe0", Port: 1, CapFlags: 0x10000, SubnetPrefix: 0xfe80000000000000,
		State: 4, PhysState: 5, NdevIndex: 2, NdevName: "eth0"}
	port.Set(nldev.AttrLID)
	port.Set(nldev.AttrSMLID)
	port.Set(nldev.AttrLMC)
	pid := uint32(os.Getpid())
	qps := []nldev.QP{
		{Port: 1, LQPN: 1, Type: 1, State: 3, SQPSN: 0, Entry: nldev.Entry{KernName: "ib_core"}},
		{Port: 1, LQPN: 17, RQPN: 18, RQPSN: 0x9e0e5, SQPSN: 0x3c7a1, PathMigState: 0, Type: 2, State: 3, PDN: 2, Entry: nldev.Entry{PID: pid}},
	}
	for i := range qps {
		for _, a := range []nldev.Attr{nldev.AttrPortIndex, nldev.AttrResLQPN, nldev.AttrResSQPSN, nldev.AttrResType, nldev.AttrResState} {
			qps[i].Set(a)
		}
	}
	qps[1].Set(nldev.AttrResPathMigState)
	qps[1].Set(nldev.AttrResPDN)
	cm := nldev.CMID{Port: 1, Type: 2, State: 8, PS: 0x106, CMIDN: 3,
		SrcAddr: nldev.SockaddrStorage(netip.MustParseAddrPort("10.0.2.15:7174")), Entry: nldev.Entry{PID: pid}}
	cq := nldev.CQ{CQE: 127, Users: 2, CQN: 1, CTXN: 0, Entry: nldev.Entry{PID: pid}}
	cq.Set(nldev.AttrResCTXN)
	mr := nldev.MR{RKey: 0x13c, LKey: 0x13c, IOVA: 0x5637_2a40_1000, MRLen: 4096, PDN: 2, MRN: 1, Entry: nldev.Entry{PID: pid}}
	pd := nldev.PD{Users: 3, PDN: 2, CTXN: 0, Entry: nldev.Entry{PID: pid}}
	pd.Set(nldev.AttrResLocalDMALKey)
	pd.Set(nldev.AttrResCTXN)
	kpd := nldev.PD{Users: 6, PDN: 1, Entry: nldev.Entry{KernName: "ib_core"}}
	kpd.Set(nldev.AttrResLocalDMALKey)
	kpd.Set(nldev.AttrResPDN)
	ctx := nldev.Ctx{CTXN: 0, Entry: nldev.Entry{PID: pid}}
	ctx.Set(nldev.AttrResCTXN)
	srq := nldev.SRQ{SRQN: 0, Type: 0, PDN: 2, CQN: 1, QPs: []nldev.QPRange{{Min: 17, Max: 17}, {Min: 20, Max: 23, Range: true}}, Entry: nldev.Entry{PID: pid}}
	srq.Set(nldev.AttrResSRQN)
	summary := nldev.Summary{DevIndex: 1, DevName: "rxe0", Entries: []nldev.SummaryEntry{{Name: "pd", Curr: 2}, {Name: "cq", Curr: 2}, {Name: "qp", Curr: 2}, {Name: "cm_id", Curr: 1}, {Name: "mr", Curr: 1}, {Name: "ctx", Curr: 1}, {Name: "srq", Curr: 0}}}
	stats := nldev.PortStats{DevIndex: 1, DevName: "rxe0", Port: 1, HWCounters: []nldev.HWCounter{{Name: "sent_pkts", Value: 12}, {Name: "rcvd_pkts", Value: 10}}}
	mode := nldev.PortStats{DevIndex: 1, DevName: "rxe0", Port: 1, Mode: nldev.CounterModeAuto, AutoMask: nldev.CounterMaskQPType}
	mode.Set(nldev.AttrStatAutoModeMask)
	counter := nldev.Counter{Port: 1, ID: 2, Type: 2, QPs: []uint32{17}, HWCounters: []nldev.HWCounter{{Name: "sent_pkts", Value: 5}}, Entry: nldev.Entry{PID: pid}}
	sys := nldev.SysInfo{NetNSMode: 1, CopyOnFork: 1}
	sys.Set(nldev.AttrSysNetNSMode)

	table := func(tbl, ent nldev.Attr, items ...interface{ MarshalBinary() ([]byte, error) }) []byte {
		var ents []nldev.Attribute
		for _, it := range items {
			b, err := it.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			attrs, err := nldev.UnmarshalAttributes(b)
			if err != nil {
				t.Fatal(err)
			}
			ents = append(ents, nldev.Nest(ent, attrs...))
		}
		b, err := nldev.MarshalAttributes([]nldev.Attribute{nldev.U32(nldev.AttrDevIndex, 1), nldev.String(nldev.AttrDevName, "rxe0"), nldev.Nest(tbl, ents...)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	must := func(m interface{ MarshalBinary() ([]byte, error) }) []byte {
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withDev := func(m interface{ MarshalBinary() ([]byte, error) }) []byte {
		b := must(m)
		head, _ := nldev.MarshalAttributes([]nldev.Attribute{nldev.U32(nldev.AttrDevIndex, 1), nldev.String(nldev.AttrDevName, "rxe0")})
		return append(head, b...)
	}
	has := func(attrs []nldev.Attribute, a nldev.Attr) bool {
		for _, x := range attrs {
			if x.Type == a {
				return true
			}
		}
		return false
	}

	return func(req []netlink.Message) ([]netlink.Message, error) {
		if len(req) == 0 {
			return nil, nil
		}
		m := req[0]
		attrs, err := nldev.UnmarshalAttributes(m.Data)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		var replies [][]byte
		switch cmd := nldev.Command(uint16(m.Header.Type) & 0x3ff); cmd {
		case nldev.CmdGet:
			replies = [][]byte{must(&dev)}
		case nldev.CmdPortGet:
			replies = [][]byte{must(&port)}
		case nldev.CmdResGet:
			replies = [][]byte{must(&summary)}
		case nldev.CmdResQPGet:
			if has(attrs, nldev.AttrResLQPN) {
				for _, a := range attrs {
					if a.Type == nldev.AttrResLQPN && a.Uint == 17 {
						replies = [][]byte{withDev(&qps[1])}
					}
				}
				if replies == nil {
					return kernelError(int(unix.ENOENT), req)
				}
				break
			}
			replies = [][]byte{table(nldev.AttrResQP, nldev.AttrResQPEntry, &qps[0], &qps[1])}
		case nldev.CmdResQPGetRaw, nldev.CmdResCQGetRaw, nldev.CmdResMRGetRaw:
			return kernelError(int(unix.EOPNOTSUPP), req)
		case nldev.CmdResCMIDGet:
			replies = [][]byte{table(nldev.AttrResCMID, nldev.AttrResCMIDEntry, &cm)}
		case nldev.CmdResCQGet:
			replies = [][]byte{table(nldev.AttrResCQ, nldev.AttrResCQEntry, &cq)}
		case nldev.CmdResMRGet:
			replies = [][]byte{table(nldev.AttrResMR, nldev.AttrResMREntry, &mr)}
		case nldev.CmdResPDGet:
			replies = [][]byte{table(nldev.AttrResPD, nldev.AttrResPDEntry, &kpd, &pd)}
		case nldev.CmdResCtxGet:
			replies = [][]byte{table(nldev.AttrResCtx, nldev.AttrResCtxEntry, &ctx)}
		case nldev.CmdResSRQGet:
			replies = [][]byte{table(nldev.AttrResSRQ, nldev.AttrResSRQEntry, &srq)}
		case nldev.CmdStatGet:
			switch {
			case has(attrs, nldev.AttrStatMode):
				replies = [][]byte{must(&mode)}
			case has(attrs, nldev.AttrStatRes):
				replies = [][]byte{table(nldev.AttrStatCounter, nldev.AttrStatCounterEntry, &counter)}
			default:
				replies = [][]byte{must(&stats)}
			}
		case nldev.CmdSysGet:
			replies = [][]byte{must(&sys)}
		case nldev.CmdNewlink, nldev.CmdDellink, nldev.CmdSet, nldev.CmdSysSet, nldev.CmdStatSet:
			return kernelError(0, req)
		default:
			return kernelError(int(unix.EOPNOTSUPP), req)
		}
		var out []netlink.Message
		for _, p := range replies {
			out = append(out, netlink.Message{Header: netlink.Header{Type: m.Header.Type, Sequence: m.Header.Sequence, PID: m.Header.PID}, Data: p})
		}
		if m.Header.Flags&netlink.Dump != 0 {
			return dumpReply(out)
		}
		return out, nil
	}
}

// runFake runs one command line against the fake kernel; the process name
// in comm is this test binary's, replaced by a stable word.
func runFake(t *testing.T, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, fakeKernel(t))
	comm, _ := os.ReadFile(filepath.Join(procRoot, "self", "comm"))
	s := strings.ReplaceAll(out.String(), " "+strings.TrimSpace(string(comm))+" ", " TESTPROC ")
	s = strings.ReplaceAll(s, `"`+strings.TrimSpace(string(comm))+`"`, `"TESTPROC"`)
	s = strings.ReplaceAll(s, itoa(os.Getpid()), "PID")
	return s, errb.String(), code
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestGolden(t *testing.T) {
	cases := map[string][]string{
		"dev":                 {"dev"},
		"dev_details":         {"-d", "dev", "show", "rxe0"},
		"dev_json":            {"-j", "dev"},
		"dev_json_pretty":     {"-j", "-p", "-d", "dev"},
		"link":                {"link"},
		"link_port":           {"l", "s", "rxe0/1"},
		"link_details_json":   {"-jd", "link"},
		"link_pretty":         {"-pj", "link"},
		"res":                 {"res"},
		"res_dev":             {"resource", "show", "rxe0"},
		"res_json":            {"-j", "res"},
		"res_qp":              {"res", "show", "qp"},
		"res_qp_json":         {"-j", "res", "show", "qp"},
		"res_qp_filter":       {"r", "s", "q", "lqpn", "10-20", "type", "rc"},
		"res_qp_doit":         {"res", "show", "qp", "lqpn", "17"},
		"res_qp_doit_absent":  {"res", "show", "qp", "lqpn", "99"},
		"res_qp_link":         {"res", "show", "qp", "link", "rxe0/1"},
		"res_cm_id":           {"res", "show", "cm_id"},
		"res_cm_id_json":      {"-j", "res", "show", "cm_id"},
		"res_cq":              {"res", "show", "cq"},
		"res_mr":              {"res", "show", "mr"},
		"res_mr_json":         {"-j", "res", "show", "mr"},
		"res_pd":              {"res", "show", "pd"},
		"res_pd_kernel_only":  {"res", "show", "pd", "pid", "0"},
		"res_ctx":             {"res", "show", "ctx", "dev", "rxe0"},
		"res_srq":             {"res", "show", "srq"},
		"res_srq_filter":      {"-j", "res", "show", "srq", "lqpn", "21"},
		"sys":                 {"system"},
		"sys_json":            {"-j", "sys", "show"},
		"stat":                {"statistic"},
		"stat_json":           {"-j", "stat", "show", "link", "rxe0/1"},
		"stat_pretty_text":    {"-p", "stat"},
		"stat_qp":             {"stat", "qp", "show"},
		"stat_qp_oneline":     {"-o", "stat", "qp", "show"},
		"dev_details_oneline": {"-o", "-d", "dev"},
		"stat_qp_mode":        {"stat", "qp", "mode"},
		"stat_qp_mode_json":   {"-j", "stat", "qp", "mode"},
		"help":                {"help"},
		"version":             {"-V"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			out, errs, code := runFake(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, out)
		})
	}
}

func golden(t *testing.T, got string) {
	t.Helper()
	p := filepath.Join("testdata", strings.ReplaceAll(t.Name(), "/", string(filepath.Separator))+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\n--- got\n%s--- want\n%s", p, got, want)
	}
}

func TestFailures(t *testing.T) {
	for name, c := range map[string]struct {
		args   []string
		stderr string
	}{
		"unknown object":       {[]string{"bogus"}, "Unknown object 'bogus'."},
		"unknown device":       {[]string{"dev", "show", "mlx5_9"}, "Wrong device name - mlx5_9"},
		"unknown link":         {[]string{"link", "show", "mlx5_9/1"}, "Wrong device name"},
		"port out of range":    {[]string{"link", "show", "rxe0/2"}, "Wrong device name"},
		"filter without value": {[]string{"res", "show", "qp", "lqpn"}, "No filter data was supplied to filter option lqpn"},
		"bad filter":           {[]string{"res", "show", "qp", "color", "red"}, "Unsupported filter option: color"},
		"numeric filter":       {[]string{"res", "show", "qp", "lqpn", "x"}, `lqpn filter accepts "1234567890,-" characters only`},
		"raw unsupported":      {[]string{"-r", "res", "show", "qp"}, "error: Operation not supported"},
		"unknown option":       {[]string{"-z", "dev"}, "Unknown option."},
		"batch missing":        {[]string{"-b", "/nonexistent/batch"}, `Cannot open file "/nonexistent/batch" for reading: No such file or directory`},
	} {
		t.Run(name, func(t *testing.T) {
			_, errs, code := runFake(t, c.args...)
			if code == 0 || !strings.Contains(errs, c.stderr) {
				t.Fatalf("exit %d, stderr %q; want failure with %q", code, errs, c.stderr)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	f := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(f, []byte("# devices\ndev\n\nlink show \\\n rxe0/1\nbogus\nsys\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runFake(t, "-b", f)
	if code == 0 || !strings.Contains(errs, "Command failed "+f+":6") {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	if strings.Contains(out, "netns") {
		t.Fatal("batch went on after a failure without -f")
	}
	out, _, code = runFake(t, "--force", "-b", f)
	if code == 0 || !strings.Contains(out, "netns shared") || !strings.Contains(out, "link rxe0/1") {
		t.Fatalf("with -force: exit %d, out %q", code, out)
	}
	golden(t, out)
}

func TestNoRDMA(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"dev"}, &out, &errb, func() (*nldev.Conn, error) {
		return nil, &nldev.OpError{Op: "dial NETLINK_RDMA", Err: unix.EPROTONOSUPPORT}
	})
	if code == 0 || !strings.Contains(errb.String(), "this kernel has no RDMA netlink") || out.Len() != 0 {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
	if !errors.Is(&nldev.OpError{Err: unix.EPROTONOSUPPORT}, nldev.ErrNotSupported) {
		t.Fatal("EPROTONOSUPPORT must mean not supported")
	}
}

// TestKernelRefusal: a refusal from the kernel says what happened, with the
// kernel's extended-ack text and what it takes to be allowed, and fails.
func TestKernelRefusal(t *testing.T) {
	for _, c := range []struct {
		name   string
		errno  unix.Errno
		extack string
		args   []string
		want   string
	}{
		{"not root", unix.EPERM, "", []string{"link", "add", "rxe9", "type", "rxe", "netdev", "lo"},
			"error: Operation not permitted (RDMA_NLDEV_CMD_NEWLINK needs CAP_NET_ADMIN: run as root)\n"},
		{"not root with extack", unix.EPERM, "Not allowed in this namespace", []string{"dev", "set", "rxe0", "name", "x"},
			"error: Operation not permitted: Not allowed in this namespace (RDMA_NLDEV_CMD_SET needs CAP_NET_ADMIN: run as root)\n"},
		{"no such device", unix.ENODEV, "", []string{"link", "delete", "rxe0"}, "error: No such device\n"},
		{"old kernel", unix.EOPNOTSUPP, "", []string{"sys", "set", "privileged-qkey", "on"}, "error: Operation not supported\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := fakeHandler(t)
			dial := func() (*nldev.Conn, error) {
				return nldev.NewConn(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
					// Reads go to the fake kernel; changes are refused.
					if req[0].Header.Flags&netlink.Acknowledge == 0 {
						return fake(req)
					}
					return extAckError(c.errno, c.extack, req), nil
				})), nil
			}
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, &out, &errb, dial)
			if code == 0 || errb.String() != c.want || out.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want failure with %q", code, out.String(), errb.String(), c.want)
			}
		})
	}
}

// extAckError is an NLMSG_ERROR with NLM_F_ACK_TLVS, as the kernel sends it
// for a refused request: the errno, the echoed request header and, when
// given, NLMSGERR_ATTR_MSG.
func extAckError(errno unix.Errno, msg string, req []netlink.Message) []netlink.Message {
	data := binary.NativeEndian.AppendUint32(nil, uint32(-int32(errno)))
	hdr := make([]byte, 16)
	binary.NativeEndian.PutUint32(hdr, 16)
	binary.NativeEndian.PutUint16(hdr[4:], uint16(req[0].Header.Type))
	data = append(data, hdr...)
	flags := netlink.Capped
	if msg != "" {
		ae := netlink.NewAttributeEncoder()
		ae.String(unix.NLMSGERR_ATTR_MSG, msg)
		tlv, _ := ae.Encode()
		data = append(data, tlv...)
		flags |= netlink.AcknowledgeTLVs
	}
	return []netlink.Message{{Header: netlink.Header{Type: netlink.Error, Flags: flags, Sequence: req[0].Header.Sequence, PID: req[0].Header.PID}, Data: data}}
}

func TestPortArg(t *testing.T) {
	for _, c := range []struct {
		in           string
		strict       bool
		port         uint32
		all, wantErr bool
	}{
		{"mlx5_1", false, 0, true, false},
		{"mlx5_1/", false, 0, true, false},
		{"mlx5_1/0", false, 0, false, true}, // the C comment says valid; its code refuses
		{"mlx5_1/1", false, 1, false, false},
		{"mlx5_1/-", false, 0, false, false},
		{"mlx5_1/-", true, 0, false, true},
		{"mlx5_1", true, 0, false, true},
		{"mlx5_1/x", false, 0, true, true},
		{"mlx5_1/2", true, 2, false, false},
	} {
		p, all, err := portArg(c.in, c.strict)
		if p != c.port || all != c.all || (err != nil) != c.wantErr {
			t.Errorf("portArg(%q, %v) = %d %v %v", c.in, c.strict, p, all, err)
		}
	}
}

// kernelError is an NLMSG_ERROR as the kernel sends it: nltest.Error keeps
// the request's flags, which on an error message would claim ext-ack TLVs.
func kernelError(errno int, req []netlink.Message) ([]netlink.Message, error) {
	msgs, err := nltest.Error(errno, req)
	for i := range msgs {
		msgs[i].Header.Flags = 0
	}
	return msgs, err
}

// dumpReply ends a dump with NLMSG_DONE, as the kernel does.
func dumpReply(out []netlink.Message) ([]netlink.Message, error) {
	h := out[0].Header
	h.Type, h.Flags = netlink.Done, netlink.Multi
	return nltest.Multipart(append(out, netlink.Message{Header: h, Data: make([]byte, 4)}))
}
