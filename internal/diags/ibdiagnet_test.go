package diags

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestIBDiagnetClean(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := run(t, "", "ibtool", "--fabric", "sim:leafspine:leaves=4,spines=2,hosts=2,uplinks=2", "ibdiagnet", "-o", dir, "--interval", "50ms")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"Fabric: 14 nodes (6 switches, 8 CAs, 0 routers)", "Findings: 0 errors, 0 warnings, 0 info", "by hops: 2:8 4:48", "Report files in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, ext := range []string{"lst", "fdbs", "mcfdbs", "sm", "pm", "pkey", "db_csv"} {
		if st, err := os.Stat(filepath.Join(dir, "ibdiagnet."+ext)); err != nil || st.Size() == 0 {
			t.Errorf("ibdiagnet.%s: %v", ext, err)
		}
	}
}

// An expected width the links do not have: warnings, exit 8, and the
// JSON document lists them.
func TestIBDiagnetWarningsJSON(t *testing.T) {
	out, errs, code := run(t, "", "ibtool", "--fabric", "sim:leafspine:leaves=2,spines=1,hosts=1,uplinks=1", "--json",
		"ibdiagnet", "--no-files", "--lw", "12x", "--checks", "link-width,routing")
	if code != 8 {
		t.Fatalf("exit %d, want 8\n%s%s", code, out, errs)
	}
	var doc struct {
		Command string
		Result  struct {
			Findings []struct {
				Check, Severity, Message string
			}
			Counts  map[string]int
			Routing struct{ Pairs int }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Command != "ibdiagnet" || doc.Result.Counts["warning"] != 4 || len(doc.Result.Findings) != 4 || doc.Result.Routing.Pairs != 2 {
		t.Fatalf("document %+v", doc)
	}
	if f := doc.Result.Findings[0]; f.Check != "link-width" || f.Severity != "warning" || !strings.Contains(f.Message, "12x expected") {
		t.Fatalf("finding %+v", f)
	}
}

// A ring of switches routed minimum hop has credit loops: errors, exit 9.
func TestIBDiagnetCreditLoopExit(t *testing.T) {
	topo := filepath.Join(t.TempDir(), "ring.topo")
	var b strings.Builder
	// Five switches: the far ones are two hops away one way round and
	// three the other, so every route is unique and the turns close.
	for i := 1; i <= 5; i++ {
		next, prev := i%5+1, (i+3)%5+1
		b.WriteString("Switch 3 \"sw" + itoa(i) + "\"\n[1] \"h" + itoa(i) + "\"[1]\n[2] \"sw" + itoa(next) + "\"[3]\n[3] \"sw" + itoa(prev) + "\"[2]\n\n")
	}
	for i := 1; i <= 5; i++ {
		b.WriteString("Hca 1 \"h" + itoa(i) + "\"\n[1] \"sw" + itoa(i) + "\"[1]\n\n")
	}
	if err := os.WriteFile(topo, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, "", "ibtool", "--fabric", "sim:"+topo, "ibdiagnet", "--no-files", "--checks", "credit-loops")
	if code != 9 || !strings.Contains(out, "-E- credit-loops: credit loop of 5 channels") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestIBDiagnetUsage(t *testing.T) {
	for _, args := range [][]string{
		{"ibdiagnet", "--checks", "nonesuch"},
		{"ibdiagnet", "--lw", "3x"},
		{"ibdiagnet", "--ls", "7"},
		{"ibdiagnet", "--pm-limit", "bogus"},
		{"ibdiagnet", "-c", "0"},
		{"ibdiagnet", "--sl", "16"},
		{"ibdiagpath"},
		{"ibdiagpath", "0xc000"},
		{"ibdiagpath", "-D", "0,x"},
	} {
		_, errs, code := run(t, "", append([]string{"ibtool", "--fabric", "sim:fattree:k=2,n=1"}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errs)
		}
	}
}

func TestIBDiagnetList(t *testing.T) {
	out, _, code := run(t, "", "ibtool", "ibdiagnet", "--list")
	if code != 0 || !strings.Contains(out, "credit-loops           error") || !strings.Contains(out, "path                   error    (not by default)") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestIBDiagPath(t *testing.T) {
	out, errs, code := run(t, "", "ibtool", "--fabric", "sim:leafspine:leaves=2,spines=1,hosts=2,uplinks=1", "ibdiagpath", "--interval", "20ms", "7")
	if code != 0 || !strings.Contains(out, "Reached LID 7 in 4 hops") || !strings.Contains(out, "Findings: 0 errors") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	// A LID nobody has: the route stops short.
	out, errs, code = run(t, "", "ibtool", "--fabric", "sim:leafspine:leaves=2,spines=1,hosts=2,uplinks=1", "ibdiagpath", "--interval", "20ms", "200")
	if code != 9 || !strings.Contains(out, "-E- path: the route to LID 200 stops at") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}
