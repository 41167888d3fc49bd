package ibsimserver

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// Real OpenSM brings generated fabrics up through libumad2sim: every
// linked port Active, every end port with a LID, and the C tools reach
// every CA by LID.
func TestOpenSMBringsUpGenerated(t *testing.T) {
	testbed.Require(t)
	for _, spec := range []string{
		"fattree:k=4,n=2",
		"leafspine:leaves=4,spines=2,hosts=6,uplinks=2,hcaports=2",
		"dragonfly:a=3,p=2,h=1",
		"random:switches=6,radix=8,hosts=12,extra=3,seed=5",
	} {
		t.Run(spec, func(t *testing.T) {
			gen, err := topo.Generate(spec)
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := topo.Write(&text, gen); err != nil {
				t.Fatal(err)
			}
			f, _, base := serveTopo(t, text.String(), false)
			ours := &testbed.IBSim{SockName: base}
			var cas []string
			for _, n := range gen.Nodes {
				if n.Type == iba.NodeTypeCA {
					cas = append(cas, n.ID)
				}
			}
			testbed.StartOpenSM(t, ours, cas[0])
			top := f.Topology()
			for i := range top.Nodes {
				n := &top.Nodes[i]
				for p := 0; p <= int(n.NumPorts); p++ {
					sw := n.Type == iba.NodeTypeSwitch
					if (sw && p == 0) || (p > 0 && top.Port(i, p).Peer >= 0) {
						st, _, l, _, err := f.PortState(n.ID, p)
						if err != nil {
							t.Fatal(err)
						}
						if st != iba.PortStateActive || (l == 0 && (!sw || p == 0)) {
							t.Fatalf("%s/%d after OpenSM: %v, LID %d", n.ID, p, st, l)
						}
					}
				}
			}
			last := cas[len(cas)-1]
			_, _, l, _, _ := f.PortState(last, 1)
			out, errs, code := testbed.RunC(t, ours, cas[0], "smpquery", "nodedesc", fmt.Sprint(l))
			if code != 0 || !strings.Contains(out, last) {
				t.Fatalf("smpquery nodedesc %d: exit %d\n%s%s", l, code, out, errs)
			}
			out, _, code = testbed.RunC(t, ours, cas[0], "ibhosts")
			if code != 0 || strings.Count(out, "\n") != len(cas) {
				t.Fatalf("ibhosts: exit %d, %d lines for %d CAs\n%s", code, strings.Count(out, "\n"), len(cas), out)
			}
			// Our client asks OpenSM's SA for a table: OpenSM under
			// libumad2sim sends its first 256 bytes, RMPP active but no
			// segment, which reaches us as ibsim passes it.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: base, Node: last})
			if err != nil {
				t.Fatal(err)
			}
			mc := mad.NewClient(tr)
			defer mc.Close()
			recs, err := sa.GetTable(ctx, sa.New(mc), &iba.NodeRecord{})
			if err != nil || len(recs) == 0 {
				t.Fatalf("our GetTable of NodeRecords from OpenSM's SA: %d records, %v", len(recs), err)
			}
		})
	}
}

// Without OpenSM, the built-in SM and SA answer the C tools: sminfo, and
// saquery's single-MAD answers (ibsim's protocol carries 256-byte MADs,
// so a table comes back as its first segment).
func TestCToolsWithBuiltInSA(t *testing.T) {
	testbed.Require(t)
	f, _, base := serveTopo(t, fabric, true)
	ours := &testbed.IBSim{SockName: base}
	_, _, l3, _, _ := f.PortState("hca3", 1)
	out, errs, code := testbed.RunC(t, ours, "hca2", "sminfo")
	if code != 0 || !strings.Contains(out, "SMINFO_MASTER") {
		t.Fatalf("sminfo: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = testbed.RunC(t, ours, "hca2", "saquery", fmt.Sprint(l3))
	if code != 0 || !strings.Contains(out, "NodeRecord dump") || !strings.Contains(out, "NodeDescription.........hca3") {
		t.Fatalf("saquery %d: exit %d\n%s%s", l3, code, out, errs)
	}
	_, _, l1, _, _ := f.PortState("hca1", 1)
	out, errs, code = testbed.RunC(t, ours, "hca2", "saquery", "-s")
	if sm, _, _ := strings.Cut(out, "IsSMdisabled"); code != 0 || !strings.Contains(sm, fmt.Sprintf("EndPortLid..............%d", l1)) {
		t.Fatalf("saquery -s (the SM is on LID %d): exit %d\n%s%s", l1, code, out, errs)
	}
	out, errs, code = testbed.RunC(t, ours, "hca2", "ibping", "-c", "2", fmt.Sprint(l3))
	if code != 0 || !strings.Contains(out, "Pong from hca3") {
		t.Fatalf("ibping: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = testbed.RunC(t, ours, "hca2", "ibsysstat", fmt.Sprint(l3), "host")
	if code != 0 || !strings.Contains(out, "hca3") {
		t.Fatalf("ibsysstat host: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = testbed.RunC(t, ours, "hca2", "ibccquery", "CongestionInfo", fmt.Sprint(l3))
	if code != 0 || !strings.Contains(out, "CongestionInfo") {
		t.Fatalf("ibccquery: exit %d\n%s%s", code, out, errs)
	}
}
