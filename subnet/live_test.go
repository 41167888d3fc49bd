package subnet

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/testbed"
)

var update = flag.Bool("update", false, "rewrite golden files (the live test stores the C tool's output as goldens)")

// generatedOn matches the one line ibnetdiscover's output differs in
// from run to run.
var generatedOn = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

func stripTime(s string) string {
	return generatedOn.ReplaceAllString(s, "# Topology file: generated on <time>")
}

// liveFabrics are the generated topologies of the live comparison: dual-port
// HCAs, a missing link, and links of every width and most speeds.
func liveFabrics(t *testing.T) map[string]*testbed.Fabric {
	t.Helper()
	ft := testbed.FatTree{Leaves: 3, Spines: 2, HCAsPerLeaf: 2, DualPortHCAs: true, UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}
	a, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	l := a.LinkAt("H-1", 1)
	l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = testbed.Width1x, testbed.SDR, testbed.Width1x, testbed.SDR
	if !a.Unlink("S-leaf-3", ft.UplinkPort(2)) {
		t.Fatal("no uplink to unlink")
	}
	if !a.Unlink("H-6", 2) {
		t.Fatal("no H-6 port 2 link")
	}

	b, err := testbed.FatTree{Leaves: 2, Spines: 2, HCAsPerLeaf: 4, HostSpeed: testbed.FDR10, UplinkWidth: testbed.Width8x, UplinkSpeed: testbed.HDR}.Build()
	if err != nil {
		t.Fatal(err)
	}
	rates := []struct {
		w testbed.Width
		s testbed.Speed
	}{{testbed.Width2x, testbed.NDR}, {testbed.Width4x, testbed.DDR}, {testbed.Width12x, testbed.FDR}, {testbed.Width1x, testbed.QDR}}
	for i, r := range rates {
		l := b.LinkAt(testbed.HCAName(i+1), 1)
		l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = r.w, r.s, r.w, r.s
	}
	c, err := testbed.FatTree{Leaves: 3, Spines: 2, HCAsPerLeaf: 1}.Build()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*testbed.Fabric{"dualport": a, "mixedrates": b, "chassis": c}
}

// chassisEdit gives the spines one system image GUID and two of the
// leaves another (ibsim's sysimgguid= applies to the next node), so that
// ibnetdiscover -g groups them into two chassis.
func chassisEdit(topo string) string {
	r := strings.NewReplacer(
		"switchguid=0x0002c90300b00001", "sysimgguid=0x2c9030000beef\nswitchguid=0x0002c90300b00001",
		"switchguid=0x0002c90300b00002", "sysimgguid=0x2c9030000beef\nswitchguid=0x0002c90300b00002",
		"switchguid=0x0002c90300a00001", "sysimgguid=0x2c9030000cafe\nswitchguid=0x0002c90300a00001",
		"switchguid=0x0002c90300a00003", "sysimgguid=0x2c9030000cafe\nswitchguid=0x0002c90300a00003",
	)
	return r.Replace(topo)
}

// TestLiveAgainstC compares with the C tools on ibsim fabrics: a cache
// written by ibnetdiscover --cache reads back and writes out byte for byte;
// our topology text and -p, -l, -g, -f, -m variants equal the C tool's;
// and a cache we write from a database read from the text loads in the C
// ibnetdiscover with the same output.
func TestLiveAgainstC(t *testing.T) {
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
			cCache := filepath.Join(dir, "c.cache")
			out, errOut, code := testbed.RunC(t, sim, "H-3", "ibnetdiscover", "--cache", cCache)
			if code != 0 {
				t.Fatalf("ibnetdiscover: exit %d\n%s", code, errOut)
			}
			data, err := os.ReadFile(cCache)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseIBNDCache(data)
			if err != nil {
				t.Fatalf("reading the C cache: %v", err)
			}
			var back bytes.Buffer
			if err := s.WriteIBNDCache(&back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Bytes(), data) {
				t.Errorf("cache written back differs: %d bytes, C wrote %d; first difference at %d", back.Len(), len(data), firstDiff(back.Bytes(), data))
			}
			var ours bytes.Buffer
			if err := s.WriteTopology(&ours, TopologyOptions{}); err != nil {
				t.Fatal(err)
			}
			if got, want := stripTime(ours.String()), stripTime(out); got != want {
				t.Errorf("topology differs from ibnetdiscover's:\n%s", lineDiff(got, want))
			}
			if *update {
				writeGolden(t, "TestGolden", name+".cache", data)
				writeGolden(t, "TestGolden", name+".topo", []byte(stripTime(out)))
			}

			variants := []struct {
				flag string
				opt  TopologyOptions
				list []iba.NodeType
			}{
				{"-p", TopologyOptions{}, nil},
				{"-l", TopologyOptions{}, []iba.NodeType{iba.NodeTypeCA, iba.NodeTypeSwitch, iba.NodeTypeRouter}},
				{"-H", TopologyOptions{}, []iba.NodeType{iba.NodeTypeCA}},
				{"-S", TopologyOptions{}, []iba.NodeType{iba.NodeTypeSwitch}},
				{"-R", TopologyOptions{}, []iba.NodeType{iba.NodeTypeRouter}},
				{"-g", TopologyOptions{Group: true}, nil},
				{"-f", TopologyOptions{Full: true}, nil},
				{"-m", TopologyOptions{ReportHops: true}, nil},
			}
			for _, v := range variants {
				cOut, cErr, code := testbed.RunC(t, sim, "H-3", "ibnetdiscover", "--load-cache", cCache, v.flag)
				if code != 0 {
					t.Fatalf("ibnetdiscover %s: exit %d\n%s", v.flag, code, cErr)
				}
				var b bytes.Buffer
				switch {
				case v.flag == "-p":
					err = s.WritePortsReport(&b, v.opt)
				case v.list != nil:
					err = s.WriteNodeList(&b, v.opt, v.list...)
				default:
					err = s.WriteTopology(&b, v.opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got, want := stripTime(b.String()), stripTime(cOut); got != want {
					t.Errorf("ibnetdiscover %s differs:\n%s", v.flag, lineDiff(got, want))
				}
				if *update {
					writeGolden(t, "TestGolden", name+v.flag+".golden", []byte(stripTime(cOut)))
				}
			}

			// The text read back prints the same, and the cache we write
			// from that database loads in the C tool with the same output.
			fromText, err := ReadTopology(strings.NewReader(out))
			if err != nil {
				t.Fatalf("reading ibnetdiscover's text: %v", err)
			}
			var again bytes.Buffer
			if err := fromText.WriteTopology(&again, TopologyOptions{}); err != nil {
				t.Fatal(err)
			}
			if got, want := stripTime(again.String()), stripTime(out); got != want {
				t.Errorf("topology text read and written differs:\n%s", lineDiff(got, want))
			}
			ourCache := filepath.Join(dir, "ours.cache")
			var oc bytes.Buffer
			if err := fromText.WriteIBNDCache(&oc); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ourCache, oc.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			cOut, cErr, code := testbed.RunC(t, sim, "H-3", "ibnetdiscover", "--load-cache", ourCache)
			if code != 0 {
				t.Fatalf("ibnetdiscover --load-cache of our cache: exit %d\n%s", code, cErr)
			}
			if got, want := stripTime(cOut), stripTime(out); got != want {
				t.Errorf("C output from our cache differs:\n%s", lineDiff(got, want))
			}

			// ibsim's own topology file reads too, with every link.
			fromSim, err := ReadTopology(strings.NewReader(topo))
			if err != nil {
				t.Fatalf("reading the ibsim topology: %v", err)
			}
			if got, want := countLinks(fromSim), len(f.Links); got != want {
				t.Errorf("ibsim topology: %d links, want %d", got, want)
			}
		})
	}
}

func countLinks(s *Subnet) int {
	n := 0
	for _, node := range s.Nodes() {
		for _, p := range node.Ports {
			if p != nil && p.Remote != nil {
				n++
			}
		}
	}
	return n / 2
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// lineDiff shows the first lines that differ, enough to see why.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(g), len(w)) && shown < 8; i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			shown++
			b.WriteString("line " + itoa(i+1) + ":\n  got:  " + strings.ReplaceAll(gl, "\t", "\\t") + "\n  want: " + strings.ReplaceAll(wl, "\t", "\\t") + "\n")
		}
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func writeGolden(t *testing.T, test, name string, data []byte) {
	t.Helper()
	dir := filepath.Join("testdata", test)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
