package diags

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// TestQueryLive issues SMP, PerfMgt and SA RPCs on the ibsim fabric: the
// values must be what the C smpquery reads for the same nodes, and the
// attributes may be named as python-rdma or as the IBA does, in any case.
// The C tool is only the source of the GUIDs, and the golden files hold
// what Debian 12's ibsim answers: the machine's peers alone.
func TestQueryLive(t *testing.T) {
	l := startLive(t, machinePeers)
	guidLine := regexp.MustCompile(`(?m)^(Guid|PortGuid|NumPorts):\.+(\S+)$`)
	for _, n := range l.f.Nodes {
		lid := strconv.Itoa(l.lid[n.Name])
		cOut, _, code := l.c(t, "smpquery", "nodeinfo", lid)
		if code != 0 {
			t.Fatalf("C smpquery nodeinfo %s: exit %d", lid, code)
		}
		out, errOut, code := l.ours(t, "query", "SubnGet", "SMPNodeInfo", lid)
		if code != 0 {
			t.Fatalf("query SubnGet SMPNodeInfo %s: exit %d: %s", lid, code, errOut)
		}
		for _, m := range guidLine.FindAllStringSubmatch(cOut, -1) {
			ours := map[string]string{"Guid": "NodeGUID", "PortGuid": "PortGUID", "NumPorts": "NumPorts"}[m[1]]
			want := fmt.Sprintf("%s%s%s\n", ours, strings.Repeat(".", 33-len(ours)), m[2])
			if !strings.Contains(out, want) {
				t.Errorf("%s: ours lacks %q (C: %s)\n%s", n.Name, want, m[0], out)
			}
		}
	}
	sw, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["H-3"])
	leaf := fmt.Sprintf("0x%016x", uint64(l.f.Node("S-leaf-1").GUID))

	// By directed route, no LID the SM chose appears: kept as golden files.
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"nodeinfo-dr", []string{"subnget", "nodeinfo", "0,1"}},
		{"nodedesc-dr", []string{"SubnGet", "NodeDescription", "0,1"}},
		{"switchinfo-json", []string{"--json", "SubnGet", "SMPSwitchInfo", "0,1"}},
		{"pkeys-dump", []string{"--dump", "SubnGet", "PKeyTable", "0,1", "-a", "0"}},
	} {
		out, errOut, code := l.ours(t, "query", tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		golden(t, tc.name, out)
	}

	out, errOut, code := l.ours(t, "query", "PerformanceGet", "PMPortCounters", sw, "-f", "portSelect=1")
	if code != 0 || !strings.Contains(out, "PortSelect.......................1\n") || !regexp.MustCompile(`(?m)^PortXmitPkts\.+[1-9]\d*$`).MatchString(out) {
		t.Errorf("PerformanceGet PMPortCounters: exit %d (%s)\n%s", code, errOut, out)
	}
	out, _, code = l.ours(t, "query", "performanceget", "portcounters", sw, "-f", "PortSelect=3")
	if code != 0 || !strings.Contains(out, "PortSelect.......................3\n") {
		t.Errorf("PerformanceGet PortCounters: exit %d\n%s", code, out)
	}

	out, errOut, code = l.ours(t, "query", "--json", "SubnAdmGetTable", "SANodeRecord", "-f", "nodeInfo.nodeGUID="+leaf)
	var doc struct {
		Result QueryResult
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Result.ComponentMask == nil || *doc.Result.ComponentMask != 1<<7 ||
		len(doc.Result.Replies) != 1 || !strings.Contains(string(doc.Result.Replies[0]), `"nodeString": "S-leaf-1"`) {
		t.Errorf("SubnAdmGetTable SANodeRecord by node GUID: exit %d (%s)\n%s", code, errOut, out)
	}
	out, _, code = l.ours(t, "query", "SubnAdmGetTable", "nodeRecord", "-f", "lid="+ca)
	if code != 0 || !strings.HasPrefix(out, "Reply structure #0\n\t\tLID..............................") ||
		!strings.Contains(out, "\t\tnodeDescription.NodeString.......\"H-3\"\n") {
		t.Errorf("SubnAdmGetTable nodeRecord by LID: exit %d\n%s", code, out)
	}
	out, _, code = l.ours(t, "query", "SubnAdmGet", "MADClassPortInfo")
	if code != 0 || !strings.Contains(out, "ClassVersion.....................2\n") {
		t.Errorf("SubnAdmGet MADClassPortInfo: exit %d\n%s", code, out)
	}
	out, errOut, code = l.ours(t, "query", "-t", "100", "SubnGet", "NodeInfo", "200")
	if code != 1 || !noAnswer(errOut) || out != "" {
		t.Errorf("unreachable LID: exit %d: %s", code, errOut)
	}
}

// TestQueryTable asks an SA served over a pipe (with lost segments) for a
// table of thousands of records, and checks the component mask python-rdma's
// manual shows for nodeInfo.systemImageGUID and LID (65: bits 6 and 0).
func TestQueryTable(t *testing.T) {
	nodes := syntheticNodes(3000)
	fsa := &fakeSA{recs: map[uint16][][]byte{saAttrNode: nodes}}
	out, errOut, code, dropped := serveSA(t, fsa, 61, newQueryWith, "SubnAdmGetTable", "NodeRecord")
	if code != 0 || strings.Count(out, "Reply structure #") != len(nodes) || !strings.Contains(out, "Reply structure #2999\n") || dropped == 0 {
		t.Fatalf("exit %d (%s), %d replies, %d segments lost", code, errOut, strings.Count(out, "Reply structure #"), dropped)
	}
	sys := binary.BigEndian.Uint64(nodes[42][8:])
	out, errOut, code, _ = serveSA(t, fsa, 0, newQueryWith, "SubnAdmGetTable", "SANodeRecord",
		"-f", fmt.Sprintf("nodeInfo.systemImageGUID=0x%x", sys), "-f", fmt.Sprintf("LID=%d", 0x1000+42))
	if code != 0 || fsa.lastMask.Load() != 65 || strings.Count(out, "Reply structure #") != 1 || !strings.Contains(out, "\"synthetic-42\"") {
		t.Errorf("exit %d (%s), mask %d:\n%s", code, errOut, fsa.lastMask.Load(), out)
	}
	golden(t, "one-record", out)
}

func TestQueryBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msgs []string
	}{
		{[]string{"Frobnicate", "NodeInfo"}, []string{`unknown RPC "Frobnicate"`, "SubnAdmGetTable", "PerformanceGet"}},
		{[]string{"SubnGet", "NodeInfoo", "1"}, []string{`unknown attribute "NodeInfoo"`, "NodeInfo (SMPNodeInfo)", "PortInfo (SMPPortInfo)"}},
		{[]string{"SubnGet", "PortCounters", "1"}, []string{"SubnGet does not carry PortCounters", "PerformanceGet"}},
		{[]string{"SubnGet", "NodeInfo", "1", "-f", "nodeGUIDD=1"}, []string{"no such field", "nodeGUID", "systemImageGUID"}},
		{[]string{"SubnAdmGet", "PathRecord", "-f", "SLID=zz"}, []string{`"zz" is not a decimal or 0x-hex integer`}},
		{[]string{"SubnAdmGet", "PathRecord", "-f", "SLID=70000"}, []string{"does not fit in 16 bits"}},
		{[]string{"SubnAdmGet", "PathRecord", "-f", "DGID=fe80::zz"}, []string{"DGID", "not an IPv6 address"}},
		{[]string{"SubnAdmGet", "PathRecord", "-f", "SLID"}, []string{"exactly one '='"}},
		{[]string{"SubnGet", "NodeInfo", "1", "-a", "zz"}, []string{`-a "zz"`}},
		{[]string{"SubnGet"}, []string{"want RPC ATTRIBUTE [TARGET]"}},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:nowhere", "query"}, tc.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", tc.args, code, errOut)
		}
		for _, m := range tc.msgs {
			if !strings.Contains(errOut, m) {
				t.Errorf("%v: %q does not say %q", tc.args, errOut, m)
			}
		}
	}
	out, _, _ := run(t, "", "ibtool", "query", "--help")
	for _, want := range []string{"Valid RPC:\n  SubnGet\n", "  SubnAdmGetTable\n", "  NodeRecord (SANodeRecord): SubnAdmGet SubnAdmGetTable\n",
		"  PortCounters (PMPortCounters): PerformanceGet PerformanceSet\n", "  NodeInfo (SMPNodeInfo): SubnGet\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	// No answer: a clear timeout, not a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	silent := func(e *Env) (*session, error) {
		mc := mad.NewClient(madtest.New(func(*mad.Packet) []*mad.Packet { return nil }), mad.WithTimeout(50*time.Millisecond), mad.WithRetries(1))
		lp, _ := mc.LocalPort(ctx)
		return testSession(e, mc, lp), nil
	}
	_, errOut, code := runWith(ctx, newQueryWith, silent, "SubnAdmGetTable", "NodeRecord")
	if code != 1 || !strings.Contains(errOut, "SubnAdmGetTable NodeRecord") || !noAnswer(errOut) {
		t.Errorf("silent SA: exit %d: %s", code, errOut)
	}
}
