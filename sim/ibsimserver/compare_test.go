package ibsimserver

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// The same topology file in ibsim and in this server, each brought up by
// a real OpenSM attached to the same node: the C tools print the same.
func TestMatchesIBSim(t *testing.T) {
	testbed.Require(t)
	ft, err := topo.FatTree(topo.FatTreeConfig{K: 2, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	var gen bytes.Buffer
	if err := topo.Write(&gen, ft); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, text, sm, probe, peer, sw string }{
		{"hand-written", fabric, "hca1", "hca3", "hca2", "sw1"},
		{"generated 2-ary 3-tree", gen.String(), "hca1", "hca8", "hca5", "ft-l1-2"},
	} {
		t.Run(c.name, func(t *testing.T) { compare(t, c.text, c.sm, c.probe, c.peer, c.sw) })
	}
}

func compare(t *testing.T, text, smNode, probe, peer, sw string) {
	ref := testbed.StartIBSim(t, text)
	refSM := testbed.StartOpenSM(t, ref, smNode)
	// OpenSM sweeps lightly every 10 s, and each sweep moves the port
	// counters: pause each one once it has brought its fabric up, so that
	// both fabrics have seen the same MADs when perfquery reads them.
	pause(t, refSM)
	f, _, base := serveTopo(t, text, false)
	ours := &testbed.IBSim{SockName: base}
	ourSM := testbed.StartOpenSM(t, ours, smNode)
	pause(t, ourSM)
	_, _, l2, _, _ := f.PortState(peer, 1)
	_, _, ls, _, _ := f.PortState(sw, 0)
	cmds := [][]string{
		{"smpquery", "nodeinfo", fmt.Sprint(l2)},
		{"smpquery", "nodedesc", fmt.Sprint(l2)},
		{"smpquery", "portinfo", fmt.Sprint(l2)},
		{"smpquery", "nodeinfo", fmt.Sprint(ls)},
		{"smpquery", "portinfo", fmt.Sprint(ls), "0"},
		{"smpquery", "portinfo", fmt.Sprint(ls), "3"},
		{"smpquery", "portinfo", fmt.Sprint(ls), "4"},
		{"smpquery", "switchinfo", fmt.Sprint(ls)},
		{"smpquery", "pkeys", fmt.Sprint(l2)},
		{"smpquery", "sl2vl", fmt.Sprint(l2)},
		{"smpquery", "vlarb", fmt.Sprint(l2)},
		{"smpquery", "guids", fmt.Sprint(l2)},
		{"smpquery", "-D", "nodeinfo", "0,1,3"},
		{"smpquery", "-D", "portinfo", "0,1", "4"},
		{"smpquery", "mepi", fmt.Sprint(l2)},
		{"smpquery", "pkeys", fmt.Sprint(ls), "1"},
		{"smpquery", "sl2vl", fmt.Sprint(ls), "1"},
		{"smpquery", "vlarb", fmt.Sprint(ls), "1"},
		{"smpquery", "guids", fmt.Sprint(ls)},
		{"smpquery", "switchinfo", "-D", "0,1"},
		{"perfquery", fmt.Sprint(l2), "1"},
		{"perfquery", "-x", fmt.Sprint(l2), "1"},
		{"perfquery", fmt.Sprint(ls), "3"},
		{"perfquery", "-a", fmt.Sprint(ls)},
		{"perfquery", "-x", "-a", fmt.Sprint(ls)},
		// Not --rcvsl: ibsim does not answer PortRcvDataSL, fabricsim does.
		{"ibroute", "-a", fmt.Sprint(ls)},
		{"ibtracert", fmt.Sprint(l2), "1"},
		{"ibroute", fmt.Sprint(ls)},
		{"ibtracert", "1", fmt.Sprint(l2)},
		{"ibaddr", fmt.Sprint(l2)},
		{"iblinkinfo"},
		{"ibnetdiscover"},
		{"ibnetdiscover", "-p"},
		{"dump_fts"},
		{"ibswitches"},
		{"ibhosts"},
	}
	for i, c := range append(cmds, []string{"sminfo"}) {
		if i == len(cmds) {
			// sminfo asks the SM itself.
			resume(refSM)
			resume(ourSM)
		}
		want, _, wcode := testbed.RunC(t, ref, probe, c...)
		got, _, gcode := testbed.RunC(t, ours, probe, c...)
		want, got = volatile(dropDate(want)), volatile(dropDate(got))
		if got != want || gcode != wcode {
			t.Errorf("%q differs (exit %d, ibsim %d):\n%s", c, gcode, wcode, diff(want, got))
		}
	}
}

func diff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "- %s\n+ %s\n", x, y)
		}
	}
	return out.String()
}

// dropDate removes ibnetdiscover's "generated on <date>" line.
// trafficField matches what depends on how much OpenSM did before it was
// paused (its sweeps are timed, so two SMs never send the same number of
// MADs): the data and packet counters perfquery prints, and the SM's
// activity count. The servers must agree on the rest.
var trafficField = regexp.MustCompile(`(?m)^((?:Port(?:Xmit|Rcv)(?:Data|Pkts)|Port(?:Unicast|Multicast)(?:Xmit|Rcv)Pkts):\.*)\d+$|(activity count )\d+`)

func volatile(s string) string { return trafficField.ReplaceAllString(s, "${1}${2}N") }

func dropDate(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "# Topology file: generated on") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func pause(t *testing.T, sm *testbed.OpenSM) {
	if err := sm.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resume(sm) }) // before StartOpenSM's cleanup stops it
}

func resume(sm *testbed.OpenSM) { _ = sm.Cmd.Process.Signal(syscall.SIGCONT) }
