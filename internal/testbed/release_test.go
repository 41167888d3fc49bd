package testbed_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/diags"
	"github.com/rdmakit/rdmakit/internal/testbed"
)

var generatedOn = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

// TestReleasesIBNetDiscover is the helper's proof: one comparison, run
// against every release's peers. The release's own ibsim and OpenSM bring
// up a small fat tree; its ibnetdiscover (infiniband-diags 44, then 56, the
// latter from the trixie root) and ibtool, which reaches that simulator
// from outside through ibsim's abstract sockets, print the same topology.
// The ibhosts script of each release runs too, through its own
// ibnetdiscover.
func TestReleasesIBNetDiscover(t *testing.T) {
	f, topo := buildTopo(t, testbed.FatTree{Leaves: 2, Spines: 2, HCAsPerLeaf: 2, UplinkWidth: testbed.Width4x, UplinkSpeed: testbed.EDR}, nil)
	for _, rel := range testbed.Releases(t) {
		t.Run("diags"+rel.Diags, func(t *testing.T) {
			sim := rel.StartIBSim(t, topo)
			if sim.Release != rel {
				t.Fatalf("the simulator runs %v, want %v", sim.Release, rel)
			}
			testbed.StartOpenSM(t, sim, "H-1")

			// The C tool is the release's own.
			out, errOut, code := testbed.RunC(t, sim, "H-2", "ibnetdiscover", "-V")
			if v := "BUILD VERSION: " + rel.Diags + "."; !strings.Contains(out+errOut, v) {
				t.Fatalf("ibnetdiscover -V of %v: exit %d, no %q:\n%s%s", rel, code, v, out, errOut)
			}

			for _, args := range [][]string{{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibhosts"}} {
				cOut, cErr, cCode := testbed.RunC(t, sim, "H-2", args...)
				if cCode != 0 {
					t.Fatalf("%v of %s: exit %d\n%s", args, rel.Name, cCode, cErr)
				}
				var o, e bytes.Buffer
				argv := append([]string{"ibtool", "--fabric", "ibsim:H-2"}, args...)
				t.Setenv("IBSIM_SOCKNAME", sim.SockName)
				if code := diags.Main(context.Background(), argv, strings.NewReader(""), &o, &e); code != 0 {
					t.Fatalf("ibtool %v: exit %d: %s", args, code, e.String())
				}
				got := generatedOn.ReplaceAllString(o.String(), "")
				want := generatedOn.ReplaceAllString(cOut, "")
				if got != want {
					t.Errorf("ibtool %v differs from infiniband-diags %s:\n--- ibtool\n%s--- C\n%s", args, rel.Diags, got, want)
				}
				for _, n := range f.Nodes {
					if args[0] == "ibnetdiscover" && !strings.Contains(cOut, n.Name) {
						t.Errorf("%v of %s does not show %s", args, rel.Name, n.Name)
					}
				}
			}
		})
	}
}

// TestReleaseLookPath: a trixie program is the root's, not the machine's.
func TestReleaseLookPath(t *testing.T) {
	tr := testbed.Trixie(t)
	p, err := tr.LookPath("ibnetdiscover")
	if err != nil {
		t.Fatal(err)
	}
	host, err := testbed.Bookworm.LookPath("ibnetdiscover")
	if err == nil && p == host {
		t.Fatalf("trixie's ibnetdiscover is the machine's own %s", host)
	}
	if _, err := tr.LookPath("../ibnetdiscover"); err == nil {
		t.Error("a path with a slash was accepted as a program name")
	}
	if _, err := tr.LookPath("no-such-program"); err == nil {
		t.Error("a missing program was found")
	}
}
