package subnet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// liveDiscover runs our discovery against sim from node host.
func liveDiscover(t *testing.T, sim *testbed.IBSim, host string, opt DiscoverOptions) (*Subnet, *DiscoverReport) {
	t.Helper()
	return liveDiscoverVia(t, sim, host, opt, false)
}

// doOnly hides a client's Start: the discovery then waits for each SMP
// on a goroutine of its own.
type doOnly struct{ MADDoer }

// liveDiscoverVia is liveDiscover, through Do alone when waitEach is set.
func liveDiscoverVia(t *testing.T, sim *testbed.IBSim, host string, opt DiscoverOptions, waitEach bool) (*Subnet, *DiscoverReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sim.SockName, Node: host})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(200*time.Millisecond), mad.WithRetries(2))
	defer mc.Close()
	if opt.Method == ByLID {
		lp, err := mc.LocalPort(ctx)
		if err != nil {
			t.Fatal(err)
		}
		opt.LocalLID = lp.LID
	}
	var m MADDoer = mc
	if waitEach {
		m = doOnly{mc}
	}
	s, rep, err := Discover(ctx, m, opt)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return s, rep
}

func render(t *testing.T, s *Subnet, flag string) string {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch flag {
	case "", "-s":
		err = s.WriteTopology(&b, TopologyOptions{})
	case "-p":
		err = s.WritePortsReport(&b, TopologyOptions{})
	case "-l":
		err = s.WriteNodeList(&b, TopologyOptions{}, iba.NodeTypeCA, iba.NodeTypeSwitch, iba.NodeTypeRouter)
	case "-H":
		err = s.WriteNodeList(&b, TopologyOptions{}, iba.NodeTypeCA)
	case "-S":
		err = s.WriteNodeList(&b, TopologyOptions{}, iba.NodeTypeSwitch)
	case "-g":
		err = s.WriteTopology(&b, TopologyOptions{Group: true})
	case "-m":
		err = s.WriteTopology(&b, TopologyOptions{ReportHops: true})
	default:
		t.Fatalf("no renderer for %s", flag)
	}
	if err != nil {
		t.Fatal(err)
	}
	return stripTime(b.String())
}

// TestDiscoverLive discovers generated ibsim fabrics (dual-port HCAs,
// missing links, mixed widths and speeds, chassis) with our engine and
// compares every output variant and the cache bytes with the C
// ibnetdiscover's on the same fabric, from a CA and from a switch, by
// directed route and LID routed.
func TestDiscoverLive(t *testing.T) {
	testbed.Require(t)
	for name, f := range liveFabrics(t) {
		t.Run(name, func(t *testing.T) {
			topo, err := f.Topology()
			if err != nil {
				t.Fatal(err)
			}
			if name == "chassis" {
				topo = chassisEdit(topo)
			}
			sim := testbed.StartIBSim(t, topo)
			testbed.StartOpenSM(t, sim, "H-2")
			dir := t.TempDir()
			for _, host := range []string{"H-3", testbed.LeafName(2)} {
				cCache := filepath.Join(dir, host+".cache")
				cOut, cErr, code := testbed.RunC(t, sim, host, "ibnetdiscover", "-s", "--cache", cCache)
				if code != 0 {
					t.Fatalf("ibnetdiscover: exit %d\n%s", code, cErr)
				}
				var shown []string
				s, rep := liveDiscover(t, sim, host, DiscoverOptions{ShowNode: func(l string) { shown = append(shown, l) }})
				ours := strings.Join(shown, "\n") + "\n" + render(t, s, "")
				if got, want := ours, stripTime(cOut); got != want {
					t.Errorf("from %s: ibnetdiscover -s differs:\n%s", host, lineDiff(got, want))
				}
				data, err := os.ReadFile(cCache)
				if err != nil {
					t.Fatal(err)
				}
				var cache bytes.Buffer
				if err := s.WriteIBNDCache(&cache); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(cache.Bytes(), data) {
					t.Errorf("from %s: cache differs from the C one: %d bytes, C %d, first difference at %d", host, cache.Len(), len(data), firstDiff(cache.Bytes(), data))
				}
				if len(rep.Failures) != 0 {
					t.Errorf("from %s: failures on a healthy fabric: %v", host, rep.Failures)
				}
				t.Logf("from %s: %d nodes, %d queries (C: the same), %d sent, %d from known links, peak %d in flight, %v", host, s.Len(), rep.Queries, rep.Sent, rep.FromLinks, rep.PeakInFlight, rep.Elapsed)
				for _, flag := range []string{"-p", "-l", "-g", "-H", "-S", "-m"} {
					cOut, cErr, code := testbed.RunC(t, sim, host, "ibnetdiscover", flag)
					if code != 0 {
						t.Fatalf("ibnetdiscover %s: exit %d\n%s", flag, code, cErr)
					}
					if got, want := render(t, s, flag), stripTime(cOut); got != want {
						t.Errorf("from %s: ibnetdiscover %s differs:\n%s", host, flag, lineDiff(got, want))
					}
				}
				lid, _ := liveDiscover(t, sim, host, DiscoverOptions{Method: ByLID})
				if got, want := render(t, lid, ""), render(t, s, ""); got != want {
					t.Errorf("from %s: LID-routed discovery differs from directed route:\n%s", host, lineDiff(got, want))
				}
				for _, m := range []Method{ByDirectRoute, ByLID} {
					waited, _ := liveDiscoverVia(t, sim, host, DiscoverOptions{Method: m}, true)
					if got, want := render(t, waited, ""), render(t, s, ""); got != want {
						t.Errorf("from %s: discovery through Do alone (method %v) differs from Start's:\n%s", host, m, lineDiff(got, want))
					}
				}
			}
		})
	}
}
