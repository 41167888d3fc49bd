package diags

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// saModeFabric is built anew by every run (--fabric sim:), the same each
// time: LIDs 1-8 are the switches (2 a second-level one), 9 the local HCA
// where the SM and its SA run, 21-24 the HCAs of leaf switch 8.
const saModeFabric = "sim:fattree:k=4,n=2"

// saModeMask hides what differs between two runs for reasons other than
// --sa: the time ibnetdiscover prints, and data counters, which count the
// runs' own MADs (an SA query crosses other links than an SMP).
var saModeMask = regexp.MustCompile(`(?m)^# Topology file: generated on .*$|^((?:Port)?(?:Xmit|Rcv)(?:Data|Pkts)):?\.+\d+$`)

func maskSAMode(s string) string { return saModeMask.ReplaceAllString(s, "$1:N") }

// TestSAModeMatchesSMP runs every command that reads SMP attributes once
// with SMPs and once with --sa (python-rdma's SATransactor: the reads
// become SA record queries, discovery reads the SA's tables) and wants the
// same output and exit status; the -d trace shows that the SMP run read
// SMP attributes and the --sa run none (but those without an SA record).
func TestSAModeMatchesSMP(t *testing.T) {
	cases := []struct {
		args []string
		// smps: the reads have no SA record and stay SMPs.
		smps bool
		// noTrace: the command's -d/--debug is its own.
		noTrace bool
	}{
		{args: []string{"smpquery", "nodeinfo", "2"}},
		{args: []string{"smpquery", "nodeinfo", "21"}},
		{args: []string{"smpquery", "-G", "nodeinfo", "0x0002c90300000019"}},
		{args: []string{"smpquery", "nodedesc", "2"}},
		{args: []string{"smpquery", "nodedesc", "23"}},
		{args: []string{"smpquery", "portinfo", "2"}},
		{args: []string{"smpquery", "portinfo", "2", "3"}},
		{args: []string{"smpquery", "portinfo", "21"}},
		{args: []string{"smpquery", "portinfo", "21", "1"}},
		{args: []string{"smpquery", "switchinfo", "2"}},
		{args: []string{"smpquery", "pkeys", "2", "3"}},
		{args: []string{"smpquery", "pkeys", "21"}},
		{args: []string{"smpquery", "sl2vl", "2", "3"}},
		{args: []string{"smpquery", "sl2vl", "21"}},
		{args: []string{"smpquery", "sl2vl", "21", "1"}},
		{args: []string{"smpquery", "vlarb", "21"}},
		{args: []string{"smpquery", "-D", "nodeinfo", "0,1"}},
		{args: []string{"smpquery", "vlarb", "2", "3"}},
		{args: []string{"smpquery", "vlarb", "21", "1"}},
		{args: []string{"smpquery", "gi", "21"}},
		{args: []string{"smpquery", "switchinfo", "21"}}, // not a switch: the same failure
		{args: []string{"smpquery", "mepi", "2", "1"}, smps: true},
		{args: []string{"ibroute", "2"}},
		{args: []string{"ibroute", "-a", "8"}},
		{args: []string{"ibroute", "-M", "2"}},
		{args: []string{"ibroute", "0,1"}},
		{args: []string{"ibroute", "21"}}, // not a switch
		{args: []string{"dump_fts"}},
		{args: []string{"dump_fts", "-M"}},
		{args: []string{"dump_lfts"}},
		{args: []string{"dump_mfts"}},
		{args: []string{"ibtracert", "21", "24"}},
		{args: []string{"ibtracert", "22", "2"}},
		{args: []string{"ibtracert", "-m", "0xc000", "21", "24"}},
		{args: []string{"ibaddr"}},
		{args: []string{"ibaddr", "21"}},
		{args: []string{"ibaddr", "2"}},
		{args: []string{"ibaddr", "-G", "0x0002c9030000001b"}},
		{args: []string{"sminfo"}},
		{args: []string{"sminfo", "9"}},
		{args: []string{"ibportstate", "2", "0"}},
		{args: []string{"ibportstate", "21", "1"}},
		{args: []string{"ibportstate", "2", "1"}},
		{args: []string{"iblinkinfo"}, noTrace: true},
		{args: []string{"iblinkinfo", "-S", "0x0008f10500000003"}, noTrace: true},
		{args: []string{"ibqueryerrors"}},
		{args: []string{"ibnetdiscover"}},
		{args: []string{"ibnetdiscover", "-p"}},
		{args: []string{"ibnetdiscover", "-G", "0x0008f10500000003", "-n", "1"}},
		{args: []string{"ibhosts"}},
		{args: []string{"ibswitches"}},
		{args: []string{"ibnodes"}},
		{args: []string{"ibprintca", "-l"}},
		{args: []string{"ibprintswitch", "0x0008f10500000003"}},
		{args: []string{"ibprintca", "0x0002c90300000018"}},
		{args: []string{"ibchecknode", "21"}},
		{args: []string{"ibchecknode", "2"}},
		{args: []string{"ibcheckport", "21", "1"}},
		{args: []string{"ibcheckport", "2", "3"}},
		{args: []string{"ibcheckportstate", "2", "3"}},
		{args: []string{"ibcheckportwidth", "21", "1"}},
		{args: []string{"ibcheckerrs", "21", "1"}},
		{args: []string{"ibcheckerrs", "2"}},
		{args: []string{"ibcheckstate"}},
		{args: []string{"ibcheckwidth"}},
		{args: []string{"ibchecknet"}},
		{args: []string{"ibcheckerrors"}},
		{args: []string{"ibclearerrors"}},
		{args: []string{"perfquery", "-a", "-l", "2"}},
		{args: []string{"perfquery", "0,1", "1"}}, // the directed route to a LID by LinkRecords
		{args: []string{"ibtracert", "0,1", "21"}},
		{args: []string{"ibswportwatch", "-n", "1", "2", "1"}},
		{args: []string{"ibidsverify"}},
		{args: []string{"ibccquery", "SwitchPortCongestionSetting", "2"}},
		{args: []string{"query", "SubnGet", "NodeInfo", "2"}},
		{args: []string{"query", "SubnGet", "PortInfo", "21"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			argv := func(sa bool) []string {
				a := []string{"ibtool", "--fabric", saModeFabric}
				if sa {
					a = append(a, "--sa")
				}
				if !c.noTrace {
					a = append(a, "--debug")
				}
				return append(a, c.args...)
			}
			want, wantErr, wantCode := run(t, "", argv(false)...)
			got, gotErr, code := run(t, "", argv(true)...)
			if code != wantCode {
				t.Fatalf("--sa: exit %d, with SMPs %d\n--sa stderr:\n%s\nSMP stderr:\n%s", code, wantCode, gotErr, wantErr)
			}
			if g, w := maskSAMode(got), maskSAMode(want); g != w {
				t.Errorf("--sa output differs from the SMP output:\n%s--- --sa\n%s--- SMPs\n%s", firstLines(g, w), g, w)
			}
			if wantCode == 0 {
				if g, w := untraced(gotErr), untraced(wantErr); g != w {
					t.Errorf("--sa stderr differs:\n--- --sa\n%s--- SMPs\n%s", g, w)
				}
			}
			if c.noTrace {
				return
			}
			if !strings.Contains(wantErr, "send SubnGet ") {
				t.Errorf("the SMP run read no SMP attribute:\n%s", wantErr)
			}
			if !strings.Contains(gotErr, "send SubnAdm") && !c.smps {
				t.Errorf("the --sa run asked the SA nothing:\n%s", gotErr)
			}
			if smps := strings.Count(gotErr, "send SubnGet "); smps > 0 && !c.smps {
				t.Errorf("the --sa run sent %d SubnGet SMPs:\n%s", smps, gotErr)
			}
		})
	}
}

// untraced drops the -d trace lines.
func untraced(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, "D: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// TestSAModeDiscoveryFlags checks python-rdma's rules: --sa discovers by
// SA and cannot be combined with --discovery DR or LID; --discovery=SA
// alone reads the SA's tables and sends no SMP.
func TestSAModeDiscoveryFlags(t *testing.T) {
	for _, m := range []string{"DR", "LID", "lid"} {
		for _, cmd := range []string{"ibnetdiscover", "ibcheckstate", "ibprintca", "iblinkinfo"} {
			args := []string{"ibtool", "--fabric", saModeFabric, "--sa", cmd, "--discovery", m}
			if cmd == "ibprintca" {
				args = append(args, "-l")
			}
			_, errOut, code := run(t, "", args...)
			if code != 2 || !strings.Contains(errOut, "--sa cannot be combined with --discovery="+m) {
				t.Errorf("%s --sa --discovery %s: exit %d, want 2 and the conflict named:\n%s", cmd, m, code, errOut)
			}
		}
	}
	want, _, wantCode := run(t, "", "ibtool", "--fabric", saModeFabric, "ibnetdiscover")
	for _, argv := range [][]string{
		{"--debug", "ibnetdiscover", "--discovery", "SA"},
		{"--sa", "--debug", "ibnetdiscover", "--discovery=SA"},
	} {
		got, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", saModeFabric}, argv...)...)
		if code != wantCode || maskSAMode(got) != maskSAMode(want) {
			t.Errorf("%q: exit %d (want %d), output differs from the DR discovery:\n%s", argv, code, wantCode, firstLines(maskSAMode(got), maskSAMode(want)))
		}
		if strings.Contains(errOut, "send SubnGet ") || !strings.Contains(errOut, "send SubnAdmGetTable") {
			t.Errorf("%q: want SA tables and no SMP:\n%s", argv, errOut)
		}
	}
}

// saTableBed is a fabric large enough for SA tables of thousands of
// records (k=8, n=3: 192 switches, 512 HCAs, 3776 PortInfoRecords, 2304
// LFT blocks), its SM's SA served to ibtool through ibsimserver, and an
// in-process SMP client on the same fabric.
type saTableBed struct {
	node string
	mc   *mad.Client
}

func newSATableBed(t *testing.T, spec string) *saTableBed {
	t.Helper()
	tp, err := topo.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	node := ""
	for _, n := range tp.Nodes {
		if n.Type == iba.NodeTypeCA {
			node = n.ID
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{Node: node, Port: 1}); err != nil {
		t.Fatal(err)
	}
	serveIBSim(t, f, "rksa")
	tr, err := f.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(time.Second))
	t.Cleanup(func() { mc.Close() })
	return &saTableBed{node: node, mc: mc}
}

// saqueryRecords runs ibtool saquery --json QUERY against the bed and
// returns each record's data object.
func (b *saTableBed) saqueryRecords(t *testing.T, query string) []map[string]json.RawMessage {
	t.Helper()
	out, errOut, code := run(t, "", "ibtool", "--fabric", "ibsim:"+b.node, "saquery", "--json", query)
	if code != 0 {
		t.Fatalf("saquery %s: exit %d: %s", query, code, errOut)
	}
	var doc struct {
		Result struct {
			Records []struct {
				Data map[string]json.RawMessage `json:"data"`
			} `json:"records"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("saquery %s --json: %v", query, err)
	}
	recs := make([]map[string]json.RawMessage, len(doc.Result.Records))
	for i, r := range doc.Result.Records {
		recs[i] = r.Data
	}
	return recs
}

// smpJSON reads attr of LID lid by SMP and renders it as saquery renders
// the same structure inside a record.
func (b *saTableBed) smpJSON(t *testing.T, lid uint16, attr iba.Attribute, mod uint32) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.mc.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: lid}}, attr, mod); err != nil {
		t.Fatalf("SubnGet %s of LID %d mod %d: %v", attr.Desc().Name, lid, mod, err)
	}
	raw, err := marshal(attr)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, jsonOf(attr.Desc(), raw))
}

func decodeJSON(t *testing.T, b json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

func recordUint(t *testing.T, rec map[string]json.RawMessage, key string) uint32 {
	t.Helper()
	var v uint32
	if err := json.Unmarshal(rec[key], &v); err != nil {
		t.Fatalf("record field %s: %v in %v", key, err, rec)
	}
	return v
}

// TestSAModeTablesMatchSMP reads whole SA tables of thousands of records
// (RMPP, many segments) with ibtool saquery from the simulator's SA and
// compares every record with the same attribute read from the node by
// SMP: NodeRecords with NodeInfo and NodeDescription, PortInfoRecords with
// PortInfo of every port, LFT records with every LFT block.
func TestSAModeTablesMatchSMP(t *testing.T) {
	if testing.Short() {
		t.Skip("reads thousands of records from a 704-node fabric")
	}
	b := newSATableBed(t, "fattree:k=8,n=3")
	const nodes, ports, lftBlocks = 704, 192*17 + 512, 192 * 12

	nrs := b.saqueryRecords(t, "NR")
	if len(nrs) != nodes {
		t.Errorf("%d NodeRecords, want one per node (%d)", len(nrs), nodes)
	}
	seen := map[uint32]bool{}
	for _, r := range nrs {
		lid := recordUint(t, r, "LID")
		seen[lid] = true
		var ni iba.NodeInfo
		var nd iba.NodeDescription
		if got, want := decodeJSON(t, r["nodeInfo"]), b.smpJSON(t, uint16(lid), &ni, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("NodeRecord of LID %d: NodeInfo\n%v\nby SMP\n%v", lid, got, want)
		}
		if got, want := decodeJSON(t, r["nodeDescription"]), b.smpJSON(t, uint16(lid), &nd, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("NodeRecord of LID %d: NodeDescription %v, by SMP %v", lid, got, want)
		}
	}
	if len(seen) != len(nrs) {
		t.Errorf("%d NodeRecords name only %d LIDs", len(nrs), len(seen))
	}

	pirs := b.saqueryRecords(t, "PIR")
	if len(pirs) != ports {
		t.Errorf("%d PortInfoRecords, want %d (every switch port and port 0, every HCA port)", len(pirs), ports)
	}
	for _, r := range pirs {
		lid, port := recordUint(t, r, "endportLID"), recordUint(t, r, "portNum")
		var pi iba.PortInfo
		if got, want := decodeJSON(t, r["portInfo"]), b.smpJSON(t, uint16(lid), &pi, port); !reflect.DeepEqual(got, want) {
			t.Fatalf("PortInfoRecord of LID %d port %d:\n%v\nby SMP\n%v", lid, port, got, want)
		}
	}

	lfts := b.saqueryRecords(t, "LFTR")
	if len(lfts) != lftBlocks {
		t.Errorf("%d LFT records, want %d (12 blocks of 704 LIDs per switch)", len(lfts), lftBlocks)
	}
	for _, r := range lfts {
		lid, block := recordUint(t, r, "LID"), recordUint(t, r, "blockNum")
		var lft iba.LinearForwardingTable
		if got, want := decodeJSON(t, r["linearForwardingTable"]), b.smpJSON(t, uint16(lid), &lft, block); !reflect.DeepEqual(got, want) {
			t.Fatalf("LFT record of LID %d block %d:\n%v\nby SMP\n%v", lid, block, got, want)
		}
	}
}
