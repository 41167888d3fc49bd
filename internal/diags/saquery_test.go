package diags

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// TestSAQueryLive compares saquery with the C saquery through OpenSM on
// ibsim, for every query name, option and error the C tool has, with
// arguments that select one record: ibsim carries one 256-byte MAD, so a
// table of several records reaches either tool cut, and those are compared
// against TestSAQueryTables' SA instead.
func TestSAQueryLive(t *testing.T) { eachRelease(t, testSAQueryLive) }

func testSAQueryLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sw, sw2, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["S-spine-1"]), strconv.Itoa(l.lid["H-3"])
	leafGUID := fmt.Sprintf("0x%016x", uint64(l.f.Node("S-leaf-1").GUID))
	cases := [][]string{
		{"-c"}, {"CPI"}, {"ClassPortInfo"},
		{"NR", "S-leaf-1"}, {"-N", "S-leaf-1"}, {"nodeRecord", "0x" + strconv.FormatInt(int64(l.lid["H-3"]), 16)},
		{"PIR", ca + "/1"}, {"PIR", sw + "/0"}, {"PortInfoRecord", sw + "/5/0"},
		{"SL2VL", ca + "/0/1"}, {"SL2VL", sw + "/1/2"}, {"SL2VLTableRecord", sw2 + "/2/1"},
		{"VLAR", sw + "/1/1"}, {"VLAR", ca + "/1/2"},
		{"PKTR", ca + "/1/0"}, {"PKTR", sw + "/0/0"}, {"PKTR"},
		{"LR", sw + "/1"}, {"LR", sw + "/5", sw2 + "/1"}, {"-x", ca + "/1"}, {"LinkRecord", "/", ca + "/1"},
		{"LFTR", sw + "/0"}, {"LFTR", sw2 + "/0"}, {"MFTR", sw + "/0/0"}, {"MFTR", "0xc000"},
		{"GIR", ca + "/0"}, {"GIR", sw + "/0"},
		{"SWIR", sw}, {"SWIR", sw2},
		{"IIR"}, {"IIR", "fe80::1"}, {"-I"}, {"SR"}, {"-S"}, {"-K", "SR"},
		{"PR", "--slid", sw, "--dlid", ca}, {"-p", "--slid", ca, "--dlid", sw2},
		{"PR", "--slid", sw, "--dlid", ca, "-H", "5", "-F", "3", "-T", "1", "-Q", "1", "--sl", "0", "-M", "0x84",
			"-R", "3", "--pkt_lifetime", "0x12", "-n", "1", "-r", "1", "--pkey", "0xffff", "--service_id", "0"},
		{"PR", "--slid", sw, "--dlid", ca, "--sl", "3"}, {"PR", "--slid", sw, "--dlid", ca, "-M", "0x85"},
		{"--sgid-to-dgid", fmt.Sprintf("fe80::%x-fe80::%x", uint64(l.f.Node("S-leaf-1").GUID), uint64(l.f.Node("H-3").PortGUID(1)))},
		{"--src-to-dst", sw + ":" + ca}, {"--src-to-dst", "S-leaf-1:" + ca},
		{"-g"}, {"-m"}, {"-m", "0xc000"}, {"-m", "0xc001"}, {"MCMR", "--mlid", "0xc000"},
		{"MCMR", "--mgid", "ff12:401b:ffff::ffff:ffff", "--pkey", "0xffff", "-q", "0", "-J", "2", "--scope", "2", "-X", "0"},
		{"-s"},
		{"-L", "S-leaf-1"}, {"-l", "S-leaf-1"}, {"-G", "S-leaf-1"}, {"-O", sw}, {"-U", leafGUID},
		{"-N", "-s"}, {"-s", "-N", "S-leaf-1"}, {"-x", "-p", "--slid", sw, "--dlid", ca},
		{"--smkey", "1", "NR", ca}, {"-t", "200", "NR", "99"},
		// Bad input: exit statuses and the output before the failure.
		{"Bogus"}, {"NR", "0"}, {"NR", "70000"}, {"NR", "-3"}, {"IIR", "zz"}, {"LR", "NoSuchNode/1"},
		{"-L"}, {"-O"}, {"-U"}, {"-O", "0"}, {"--sgid", "zz"}, {"--src-to-dst", "nocolon"},
		{"--sgid-to-dgid", "fe80::1"}, {"--no-such-option"},
	}
	for _, n := range l.f.Nodes {
		cases = append(cases, []string{"NR", strconv.Itoa(l.lid[n.Name])})
	}
	l.compareAll(t, "saquery", cases)

	t.Run("SMInfoRecord", func(t *testing.T) {
		// OpenSM counts its sweeps in ActCount: the line is compared
		// for its form, the rest exactly.
		act := regexp.MustCompile(`(?m)^(\t\tActCount\.+)\d+$`)
		same := func(c, o string) bool { return act.ReplaceAllString(c, "$1N") == act.ReplaceAllString(o, "$1N") }
		for _, args := range [][]string{{"SMIR", strconv.Itoa(l.lid["H-1"])}, {"SMIR"}} {
			cOut, cErr, cCode := l.c(t, "saquery", args...)
			out, errOut, code := l.ours(t, "saquery", args...)
			l.check(t, "saquery", args, cOut, cErr, cCode, out, errOut, code, same)
			if !strings.Contains(out, "SMInfoRecord dump:") {
				t.Errorf("%v: no record:\n%s", args, out)
			}
		}
	})
	t.Run("node-name-map", func(t *testing.T) {
		m := filepath.Join(t.TempDir(), "names")
		text := fmt.Sprintf("0x%016x \"leaf one\"\n0x%016x host-three\n", uint64(l.f.Node("S-leaf-1").GUID), uint64(l.f.Node("H-3").GUID))
		if err := os.WriteFile(m, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var cases [][]string
		for _, a := range [][]string{{"NR", sw}, {"NR", ca}, {"-O", sw}, {"-N", "leaf one"}, {"-L", "leaf one"}, {"-m"}} {
			cases = append(cases, append([]string{"--node-name-map", m}, a...))
		}
		l.compareAll(t, "saquery", cases)
	})
	t.Run("json", func(t *testing.T) {
		out, errOut, code := l.ours(t, "saquery", "--json", "NR", ca)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var doc struct {
			Command string
			Result  struct {
				Query         string
				ComponentMask uint64
				Records       []struct {
					Attribute string
					NodeName  string
					Data      struct {
						LID             int
						NodeInfo        struct{ PortGUID string }
						NodeDescription struct{ NodeString string }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		r := doc.Result
		if doc.Command != "saquery" || r.Query != "NodeRecord" || r.ComponentMask != 1 || len(r.Records) != 1 {
			t.Fatalf("unexpected document:\n%s", out)
		}
		rec := r.Records[0]
		h3 := l.f.Node("H-3")
		if strconv.Itoa(rec.Data.LID) != ca || rec.NodeName != "H-3" || rec.Data.NodeDescription.NodeString != "H-3" ||
			(rec.Data.NodeInfo.PortGUID != fmt.Sprintf("0x%016x", uint64(h3.PortGUID(1))) && rec.Data.NodeInfo.PortGUID != fmt.Sprintf("0x%016x", uint64(h3.PortGUID(2)))) {
			t.Errorf("record does not describe H-3:\n%s", out)
		}
	})
}

// fakeSA is an SA served with mad.Client.Serve over an in-memory pipe (the
// SA of fabricsim until the simulator has one): GetTable of any record
// type, filtered by the request's component mask as IBA 15.2.1.1 says,
// answered with user-space RMPP, and Get of ClassPortInfo.
type fakeSA struct {
	recs     map[uint16][][]byte
	cpi      []byte
	lastMask atomic.Uint64
	requests atomic.Int64
}

func (f *fakeSA) handle(_ context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
	f.requests.Add(1)
	if req.AttrID == saAttrClassPortInfo {
		return &mad.ServerReply{Data: f.cpi}, nil
	}
	d, ok := iba.LookupAttr(iba.ClassSubnAdm, req.AttrID)
	if !ok || req.Method != iba.MethodGetTable {
		return nil, mad.ErrMethodAttrUnsupported
	}
	q := req.Data()
	if len(q) < d.Size {
		return nil, mad.ErrInvalidField
	}
	mask := req.CompMask()
	f.lastMask.Store(mask)
	stride := (d.Size + 7) / 8 * 8
	var out []byte
	for _, r := range f.recs[req.AttrID] {
		if matches(d, mask, q, r) {
			rec := make([]byte, stride)
			copy(rec, r)
			out = append(out, rec...)
		}
	}
	return &mad.ServerReply{Data: out, AttrOffset: stride}, nil
}

func matches(d *iba.Struct, mask uint64, q, r []byte) bool {
	for i, path := range d.CompMask {
		if i >= 64 || mask&(1<<i) == 0 {
			continue
		}
		ref, err := d.Lookup(path)
		if err != nil {
			return false
		}
		for b := ref.Off; b < ref.Off+ref.Bits(); b++ {
			if (q[b/8]>>(7-b%8))&1 != (r[b/8]>>(7-b%8))&1 {
				return false
			}
		}
	}
	return true
}

// dropper loses the first transmission of some RMPP DATA segments the SA
// sends, so that the transfer must resend them.
type dropper struct {
	mu    sync.Mutex
	every int
	seen  map[uint32]bool
}

func (d *dropper) drop(p *mad.Packet) bool {
	b := p.MAD
	if len(b) < 36 || b[25] != mad.RMPPTypeData {
		return false
	}
	seg := binary.BigEndian.Uint32(b[28:])
	d.mu.Lock()
	defer d.mu.Unlock()
	if seg%uint32(d.every) != 3 || d.seen[seg] {
		return false
	}
	d.seen[seg] = true
	return true
}

// serveSA runs a command on a fresh pipe to sa; dropEvery > 0 loses the
// first try of one DATA segment in dropEvery.
func serveSA(t *testing.T, sa *fakeSA, dropEvery int, mk func(*Env, func() (*session, error)) *cobra.Command, args ...string) (stdout, stderr string, code int, dropped int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var bOpts []madtest.Option
	if dropEvery > 0 {
		d := &dropper{every: dropEvery, seen: map[uint32]bool{}}
		bOpts = append(bOpts, madtest.WithDrop(d.drop))
	}
	a, b := madtest.Pipe(nil, bOpts)
	server := mad.NewClient(b, mad.WithTimeout(50*time.Millisecond), mad.WithRetries(5))
	defer server.Close()
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() {
		served <- server.Serve(sctx, iba.ClassSubnAdm, 2, []iba.Method{iba.MethodGet, iba.MethodGetTable}, sa.handle)
	}()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serving: %v", err)
		}
	}()
	stdout, stderr, code = runWith(ctx, mk, func(e *Env) (*session, error) {
		mc := mad.NewClient(a, mad.WithTimeout(100*time.Millisecond), mad.WithRetries(2))
		lp, err := mc.LocalPort(ctx)
		if err != nil {
			return nil, err
		}
		return testSession(e, mc, lp), nil
	}, args...)
	return stdout, stderr, code, b.Dropped()
}

// runWith runs a command built by make on the session open gives, as Main
// would (exit status included).
func runWith(ctx context.Context, mk func(*Env, func() (*session, error)) *cobra.Command, open func(*Env) (*session, error), args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	e := &Env{Ctx: ctx, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Retries: -1}
	if len(args) > 0 && args[0] == "--json" {
		e.JSON = true
		args = args[1:]
	}
	c := mk(e, func() (*session, error) { return open(e) })
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SilenceErrors, c.SilenceUsage = true, true
	err := c.Execute()
	var ec interface{ ExitCode() int }
	var ue *UsageError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &ue) || isFlagError(err):
		code = 2
	case errors.As(err, &ec):
		code = ec.ExitCode()
	default:
		code = 1
	}
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

// syntheticNodes makes n NodeRecords of CAs that no fabric has.
func syntheticNodes(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		var ni iba.NodeInfo
		ni.BaseVersion, ni.ClassVersion, ni.NodeType, ni.NumPorts = 1, 1, iba.NodeTypeCA, 1
		ni.NodeGUID = iba.GUID(0x0008f10400000000 + uint64(i))
		ni.SystemImageGUID, ni.PortGUID = ni.NodeGUID, ni.NodeGUID+1
		ni.LocalPortNum = 1
		nb := make([]byte, ni.Desc().Size)
		if err := ni.MarshalTo(nb); err != nil {
			panic(err)
		}
		rec := make([]byte, 108)
		binary.BigEndian.PutUint16(rec, uint16(0x1000+i))
		copy(rec[4:], nb)
		copy(rec[44:], fmt.Sprintf("synthetic-%d", i))
		out[i] = rec
	}
	return out
}

// TestSAQueryTables checks the multi-record tables ibsim cannot carry: an
// SA served over an in-memory pipe with user-space RMPP holds the NodeRecords
// and LFT blocks of the live fabric as our SMPs read them, and thousands of
// synthetic NodeRecords; saquery's whole-table output must be the C
// saquery's one-record outputs for the same nodes (read through OpenSM),
// one after the other, also when segments are lost and resent.
func TestSAQueryTables(t *testing.T) { eachRelease(t, testSAQueryTables) }

func testSAQueryTables(t *testing.T, p peers) {
	l := startLive(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: l.sim.SockName, Node: liveHost})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(2*time.Second))
	t.Cleanup(func() { mc.Close() })

	fsa := &fakeSA{recs: map[uint16][][]byte{}}
	var wantNR, wantLFT strings.Builder
	var cases [][]string
	for _, n := range l.f.Nodes {
		lid := uint16(l.lid[n.Name])
		to := ibpath.NewLID(lid)
		var ni iba.NodeInfo
		var nd iba.NodeDescription
		if err := mc.SubnGet(ctx, to, &ni, 0); err != nil {
			t.Fatal(err)
		}
		if err := mc.SubnGet(ctx, to, &nd, 0); err != nil {
			t.Fatal(err)
		}
		nb, _ := marshal(&ni)
		db, _ := marshal(&nd)
		rec := make([]byte, 108)
		binary.BigEndian.PutUint16(rec, lid)
		copy(rec[4:], nb)
		copy(rec[44:], db)
		fsa.recs[saAttrNode] = append(fsa.recs[saAttrNode], rec)
		cases = append(cases, []string{"NR", strconv.Itoa(int(lid))})
		if n.Type == testbed.Switch {
			var lft iba.LinearForwardingTable
			if err := mc.SubnGet(ctx, to, &lft, 0); err != nil {
				t.Fatal(err)
			}
			lb, _ := marshal(&lft)
			rec := make([]byte, 72)
			binary.BigEndian.PutUint16(rec, lid)
			copy(rec[8:], lb)
			fsa.recs[saAttrLFT] = append(fsa.recs[saAttrLFT], rec)
			cases = append(cases, []string{"LFTR", fmt.Sprintf("%d/0", lid)})
		}
	}
	// The C tool's one-record answers, through OpenSM.
	for _, args := range cases {
		out, errOut, code := l.c(t, "saquery", args...)
		if code != 0 {
			t.Fatalf("C saquery %v: exit %d: %s", args, code, errOut)
		}
		if args[0] == "NR" {
			wantNR.WriteString(out)
		} else {
			wantLFT.WriteString(out)
		}
	}
	real := len(fsa.recs[saAttrNode])
	const synthetic = 5000
	fsa.recs[saAttrNode] = append(fsa.recs[saAttrNode], syntheticNodes(synthetic)...)
	var synth bytes.Buffer
	for _, r := range fsa.recs[saAttrNode][real:] {
		if err := ibaprint.SANodeRecord(&synth, r); err != nil {
			t.Fatal(err)
		}
	}
	cpi := &iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x2602, RespTimeValue: 16}
	fsa.cpi, _ = marshal(cpi)

	t.Run("NodeRecord", func(t *testing.T) {
		start := time.Now()
		out, errOut, code, dropped := serveSA(t, fsa, 97, newSAQueryWith, "NR")
		took := time.Since(start)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if dropped == 0 {
			t.Error("no segment was lost: the test does not test resending")
		}
		if out != wantNR.String()+synth.String() {
			if !strings.HasPrefix(out, wantNR.String()) {
				t.Errorf("the real nodes differ from the C saquery's:\n--- C\n%s--- ours\n%s", wantNR.String(), out[:min(len(out), 4000)])
			}
			t.Errorf("%d NodeRecords printed, want %d", strings.Count(out, "NodeRecord dump:"), real+synthetic)
		}
		t.Logf("%d NodeRecords (%d bytes of RMPP data) in %v, %d segments lost and resent", real+synthetic, (real+synthetic)*112, took, dropped)
	})
	t.Run("LFTRecord", func(t *testing.T) {
		out, errOut, code, _ := serveSA(t, fsa, 0, newSAQueryWith, "LFTR")
		if code != 0 || out != wantLFT.String() {
			t.Errorf("exit %d (%s)\n--- C\n%s--- ours\n%s", code, errOut, wantLFT.String(), out)
		}
	})
	t.Run("names", func(t *testing.T) {
		// H-3's record is of the port the live fabric's LID names.
		var h3Port uint64
		for _, r := range fsa.recs[saAttrNode][:real] {
			if string(bytes.TrimRight(r[44:], "\x00")) == "H-3" {
				h3Port = binary.BigEndian.Uint64(r[24:])
			}
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"-L", "H-3"}, fmt.Sprintf("%d\n", l.lid["H-3"])},
			{[]string{"-l", "synthetic-4321"}, fmt.Sprintf("%d\n", 0x1000+4321)},
			{[]string{"-G", "H-3"}, fmt.Sprintf("0x%016x\n", h3Port)},
			{[]string{"-O", strconv.Itoa(l.lid["H-3"])}, "H-3\n"},
			{[]string{"-U", fmt.Sprintf("0x%x", h3Port)}, "H-3\n"},
			{[]string{"-N", "synthetic-17"}, ""},
		} {
			out, errOut, code, _ := serveSA(t, fsa, 0, newSAQueryWith, tc.args...)
			if tc.want == "" {
				tc.want = renderTo(t, ibaprint.SANodeRecord, fsa.recs[saAttrNode][real+17])
			}
			if code != 0 || out != tc.want {
				t.Errorf("%v: exit %d (%s), got %q, want %q", tc.args, code, errOut, out, tc.want)
			}
		}
		out, _, code, _ := serveSA(t, fsa, 0, newSAQueryWith, "-D")
		if n := strings.Count(out, "\n"); code != 0 || n != 2+4+synthetic || !strings.Contains(out, fmt.Sprintf("%6d  \"H-3\"\n", l.lid["H-3"])) {
			t.Errorf("-D: exit %d, %d lines", code, n)
		}
		// The C tool resolves names with the same table.
		out, errOut, code, _ := serveSA(t, fsa, 0, newSAQueryWith, "NR", "synthetic-9")
		if code != 0 || out != renderTo(t, ibaprint.SANodeRecord, fsa.recs[saAttrNode][real+9]) || fsa.lastMask.Load() != 1 {
			t.Errorf("NR synthetic-9: exit %d (%s) mask %d:\n%s", code, errOut, fsa.lastMask.Load(), out)
		}
	})
	t.Run("json", func(t *testing.T) {
		out, errOut, code, _ := serveSA(t, fsa, 0, newSAQueryWith, "--json", "NR")
		var doc struct {
			Result struct{ Records []json.RawMessage }
		}
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Result.Records) != real+synthetic {
			t.Fatalf("exit %d (%s), %d records", code, errOut, len(doc.Result.Records))
		}
		small := &fakeSA{recs: map[uint16][][]byte{saAttrNode: syntheticNodes(2)}, cpi: fsa.cpi}
		out, _, _, _ = serveSA(t, small, 0, newSAQueryWith, "--json", "-N")
		golden(t, "nodes", out)
		out, _, _, _ = serveSA(t, small, 0, newSAQueryWith, "--json", "-c")
		golden(t, "classportinfo", out)
	})
}

func renderTo(t *testing.T, f func(w io.Writer, b []byte) error, b []byte) string {
	t.Helper()
	var sb strings.Builder
	if err := f(&sb, b); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// TestSAQueryMulticast serves MCMemberRecords of two groups, one of whose
// members is a known node, for -g, -m and -m MLID.
func TestSAQueryMulticast(t *testing.T) {
	nodes := syntheticNodes(3)
	mk := func(mlid uint16, port iba.GUID) []byte {
		r := &iba.MCMemberRecord{MLID: mlid, PKey: 0xffff, QKey: 0x0b1b, MTUSelector: 2, MTU: 4, RateSelector: 2, Rate: 3,
			Scope: 2, JoinState: 1, SL: 0, HopLimit: 0}
		r.MGID, _ = iba.ParseGID(fmt.Sprintf("ff12:401b:ffff::%x", mlid))
		r.PortGID = iba.MakeGID(0xfe80<<48, port)
		b, _ := marshal(r)
		return b
	}
	fsa := &fakeSA{recs: map[uint16][][]byte{
		saAttrNode:     nodes,
		saAttrMCMember: {mk(0xc000, iba.GUID(0x0008f10400000001)+1), mk(0xc000, 0x1234), mk(0xc001, iba.GUID(0x0008f10400000002)+1)},
	}}
	for _, tc := range []struct {
		name string
		args []string
	}{{"groups", []string{"-g"}}, {"members", []string{"-m"}}, {"members-c000", []string{"-m", "0xc000"}}, {"mcmr", []string{"MCMR", "--mlid", "0xc001"}}} {
		out, errOut, code, _ := serveSA(t, fsa, 0, newSAQueryWith, tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		golden(t, tc.name, out)
	}
	if !strings.Contains(func() string { o, _, _, _ := serveSA(t, fsa, 0, newSAQueryWith, "-m"); return o }(), "NodeDescription.........synthetic-1\n") {
		t.Error("-m does not name the member's node")
	}
}

// TestSAQueryNoSA: no SM LID, an SA that never answers, and an SA that
// answers with an error status.
func TestSAQueryNoSA(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	silent := func(lp mad.LocalPort) func(*Env) (*session, error) {
		return func(e *Env) (*session, error) {
			mc := mad.NewClient(madtest.New(func(*mad.Packet) []*mad.Packet { return nil }, madtest.WithPort(lp)),
				mad.WithTimeout(50*time.Millisecond), mad.WithRetries(2))
			return testSession(e, mc, lp), nil
		}
	}
	start := time.Now()
	_, errOut, code := runWith(ctx, newSAQueryWith, silent(mad.LocalPort{Name: "x/1", LID: 1, SMLID: 1}), "NR")
	if code != errnoETIMEDOUT || !strings.Contains(errOut, "Query SA failed: Connection timed out") || time.Since(start) > 5*time.Second {
		t.Errorf("silent SA: exit %d after %v: %s", code, time.Since(start), errOut)
	}
	_, errOut, code = runWith(ctx, newSAQueryWith, silent(mad.LocalPort{Name: "x/1", LID: 1}), "-s")
	if code != 255 || !strings.Contains(errOut, "Failed to bind to the SA") || !strings.Contains(errOut, "no SM LID") {
		t.Errorf("no SM: exit %d: %s", code, errOut)
	}
	// An SA that refuses: sa_report_err's words and EIO.
	refuse := func(e *Env) (*session, error) {
		mc := mad.NewClient(madtest.New(func(req *mad.Packet) []*mad.Packet {
			return []*mad.Packet{madtest.Reply(req, mad.SAStatus(3), nil)}
		}), mad.WithTimeout(50*time.Millisecond))
		lp, _ := mc.LocalPort(ctx)
		return testSession(e, mc, lp), nil
	}
	_, errOut, code = runWith(ctx, newSAQueryWith, refuse, "PIR")
	if code != errnoEIO || !strings.Contains(errOut, "ERROR: Query result returned 0x0300,  SA(SA_ERR_NO_RECORDS)") {
		t.Errorf("refusing SA: exit %d: %s", code, errOut)
	}
	_, errOut, code = runWith(ctx, newSAQueryWith, refuse, "-c")
	if code != errnoEIO || !strings.Contains(errOut, "Failed to query SA:ClassPortInfo") {
		t.Errorf("refusing SA, -c: exit %d: %s", code, errOut)
	}
}

// TestSAQueryRequests checks the records and component masks the options
// build, against saquery.c's CHECK_AND_SET macros and libibmad's mask bit
// numbers (what OpenSM reads).
func TestSAQueryRequests(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	var mask uint64
	capture := func(e *Env) (*session, error) {
		mc := mad.NewClient(madtest.New(func(req *mad.Packet) []*mad.Packet {
			mu.Lock()
			got = append([]byte(nil), madtest.Data(req)...)
			mask = binary.BigEndian.Uint64(req.MAD[48:])
			mu.Unlock()
			return []*mad.Packet{madtest.Reply(req, 0, nil)}
		}), mad.WithTimeout(100*time.Millisecond))
		lp, _ := mc.LocalPort(context.Background())
		return testSession(e, mc, lp), nil
	}
	for _, tc := range []struct {
		args []string
		mask uint64
		data string // hex of the leading bytes of the record
	}{
		{[]string{"NR", "5"}, 1 << 0, "0005"},
		{[]string{"PIR", "5/2/1"}, 7, "00050201"},
		{[]string{"SL2VL", "5//3"}, 1<<0 | 1<<2, "00050003"},
		{[]string{"PKTR", "5/2/1"}, 7, "0005000102"},
		{[]string{"VLAR", "5/2/1"}, 7, "00050201"},
		{[]string{"LR", "5/1", "7/2"}, 15, "0005010200070000"},
		{[]string{"LFTR", "5/3"}, 3, "00050003"},
		{[]string{"MFTR", "5/2/3"}, 1<<0 | 1<<1 | 1<<3, "00052003"},
		{[]string{"GIR", "5/1"}, 3, "000501"},
		{[]string{"SWIR", "5"}, 1, "0005"},
		{[]string{"SMIR", "5"}, 1, "0005"},
		{[]string{"IIR", "fe80::1"}, 1, "fe800000000000000000000000000001"},
		// python-rdma's MEMBER=VALUE, alone and after an ARG.
		{[]string{"NR", "nodeInfo.nodeType=2"}, 1 << 4, "00000000" + "0000" + "02"},
		{[]string{"NR", "5", "nodeInfo.nodeType=1", "nodeDescription.nodeString=sw1"}, 1<<0 | 1<<4 | 1<<14, "0005" + "0000" + "0000" + "01"},
		{[]string{"RFTRecord", "LID=5", "blockNum=2"}, 3, "00050002"},
		{[]string{"ServiceAssociationRecord", "serviceName=abc"}, 1 << 1, strings.Repeat("00", 16) + "616263"},
		// The hop limit fills the 32-bit word it ends, the flow label
		// keeps its low 8 bits, the SL is written as the QoS class word.
		{[]string{"PR", "--slid", "2", "--dlid", "3", "-H", "0x105", "-F", "0x1234", "--sl", "0x25", "-Q", "3", "-r", "1", "-n", "2", "--pkey", "0x8001", "-M", "0x84", "-T", "7"},
			1<<4 | 1<<5 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17,
			"0000000000000000" + strings.Repeat("00", 32) + "0003" + "0002" + "00003505" + "07" + "82" + "8001" + "0035" + "84"},
		{[]string{"--sgid-to-dgid", "fe80::1-fe80::2"}, 1<<2 | 1<<3 | 1<<12, "0000000000000000fe800000000000000000000000000002fe800000000000000000000000000001"},
		{[]string{"MCMR", "--mlid", "0xc001", "--sl", "2", "-F", "0x1ff", "-H", "3", "--scope", "2", "-J", "1", "-X", "1"},
			1<<3 | 1<<12 | 1<<13 | 1<<14 | 1<<15 | 1<<16 | 1<<17,
			strings.Repeat("00", 32) + "00000000" + "c001" + "0000" + "0000" + "0000" + "2000ff03" + "21" + "01"},
	} {
		_, errOut, code := runWith(context.Background(), newSAQueryWith, capture, tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
			continue
		}
		mu.Lock()
		h := fmt.Sprintf("%x", got)
		if mask != tc.mask || !strings.HasPrefix(h, tc.data) {
			t.Errorf("%v: mask %#x, want %#x; record\n%s\nwant prefix\n%s", tc.args, mask, tc.mask, h, tc.data)
		}
		mu.Unlock()
	}
}

// TestSAQueryPythonForms: --get sends SubnAdmGet, --int-names prints
// python-rdma's dotted records, a MEMBER that is no component is a usage
// error.
func TestSAQueryPythonForms(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	out, errOut, code := run(t, "", "ibtool", "--fabric", fab, "-d", "saquery", "--get", "NR", "LID=9")
	if code != 0 || !strings.Contains(errOut, "send SubnAdmGet NodeRecord") || strings.Count(out, "NodeRecord dump:") != 1 {
		t.Errorf("--get: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = run(t, "", "ibtool", "--fabric", fab, "saquery", "--int-names", "NR", "9")
	if code != 0 || !strings.HasPrefix(out, "NodeRecord dump:\n\t\tLID..............................9\n\t\tnodeInfo.BaseVersion.............1\n") {
		t.Errorf("--int-names: exit %d\n%s%s", code, out, errOut)
	}
	want, _, _ := run(t, "", "ibtool", "--fabric", fab, "saquery", "NR", "9")
	if got, _, code := run(t, "", "ibtool", "--fabric", fab, "saquery", "--no-defaults", "NR", "LID=9"); code != 0 || got != want {
		t.Errorf("NR LID=9 --no-defaults: exit %d\n%s--- NR 9\n%s", code, got, want)
	}
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "saquery", "NR", "colour=blue"); code != 2 || !strings.Contains(errOut, "colour") {
		t.Errorf("unknown member: exit %d: %s", code, errOut)
	}
}

func TestSAQueryUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"saquery", "-L"}, 2, "name not specified"},
		{[]string{"saquery", "-O", "0"}, 2, "lid invalid"},
		{[]string{"saquery", "--sgid", "zz"}, 2, "not an IPv6 address"},
		{[]string{"saquery", "--src-to-dst", "x"}, 2, "<src:dst>"},
		{[]string{"saquery", "--bogus"}, 2, "unknown flag"},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:nowhere"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, want %d; %q does not say %q", tc.args, code, tc.code, errOut, tc.msg)
		}
	}
	out, _, _ := run(t, "", "ibtool", "saquery", "--help")
	for _, q := range saQueryNames {
		if !strings.Contains(out, fmt.Sprintf("  %s (%s) %s\n", q.name, q.alias, q.usage)) {
			t.Errorf("--help does not list %s", q.name)
		}
	}
}

func TestSAQueryReportErr(t *testing.T) {
	for st, want := range map[uint16]string{
		0x0300: "ERROR: Query result returned 0x0300,  SA(SA_ERR_NO_RECORDS)",
		0x0200: "ERROR: Query result returned 0x0200,  SA(SA_ERR_REQ_INVALID)",
		0x000c: "ERROR: Query result returned 0x000c,  (; ; MAD Method/Attribute combination is not supported)",
		0x0001: "ERROR: Query result returned 0x0001,  (BUSY; ; MAD No invalid fields)",
		0xff3c: "ERROR: Query result returned 0xff3c,  (; ; MAD UNKNOWN ERROR) SA(SA_ERR_UNKNOWN)",
	} {
		if got := saReportErr(st); got != want {
			t.Errorf("%#04x: %q, want %q", st, got, want)
		}
	}
}

// TestSAQueryKeyPrompt: a key read from standard input (getpass) is one
// line of at most maxPromptLine bytes; an endless line is not buffered.
func TestSAQueryKeyPrompt(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"0x12\nrest", "0x12", ""},
		{"0x12", "0x12", ""},
		{"", "", "cannot get SM_Key"},
		{strings.Repeat("1", maxPromptLine) + "\n", strings.Repeat("1", maxPromptLine), ""},
		{strings.Repeat("1", 10*maxPromptLine), "", "a line longer than 4096 bytes"},
	} {
		e := &Env{Stdin: strings.NewReader(c.in), Stderr: io.Discard}
		got, err := e.promptIfNotHex("x", "SM_Key: ")
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%.20q: %.20q, %v; want %.20q, %q", c.in, got, err, c.want, c.err)
		}
	}
}

// FuzzSAQueryArgs runs saquery with the fuzzer's words as its arguments
// on an in-process fabric and its SA: no command line makes it panic, hang
// or end with a status it does not document.
func FuzzSAQueryArgs(f *testing.F) {
	for _, s := range []string{
		"", "NR", "NR 1", "NR 0x0002c90300000001", "NR hca1", "PR 1 2", "-p --slid 1 --dlid 2", "--src-to-dst 1:2",
		"--src-to-dst hca1:hca2", "--sgid-to-dgid fe80::2:c903:0:1-fe80::2:c903:0:3", "LR 1 1", "-x", "PIR 2 1", "SL2VL 2 1 0",
		"VLA 2 1 0", "PKTR 2 1 0", "SWIR 2", "LFTR 2 0", "MFTR 2 0 0", "GIR 2 0", "SMIR", "IIR", "-s", "-g", "-m", "-m 0xc000",
		"MCMR --mlid 0xc000", "-L hca1", "-l hca1", "-G hca1", "-O 1", "-U 0x0002c90300000001", "-D", "-c", "-S", "-I",
		"--smkey 0x1 NR", "--pkey 0xffff PR 1 2", "--qkey 0x80010000 MCMR", "-n 99 -r 1 PR 1 2", "--sgid ::1 PR", "PR 1:2 x",
		"-K -m", "--mgid ff12:401b:ffff::1 MCMR", "ClassPortInfo", "NR -- -1", "LR 0x10000 300",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzCommand(t, append([]string{"saquery"}, fuzzWords(s, 8)...)...)
	})
}
