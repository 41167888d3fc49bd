package diags

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIBHostsAWK feeds the scripts' awk rules lines of every shape: CA,
// router and switch headers (base, enhanced, a description holding
// "port 0"), error lines, and lines with no comment.
func TestIBHostsAWK(t *testing.T) {
	text := strings.Join([]string{
		"Ca\t2 \"H-0002c90300c00011\"\t\t# \"host one\"",
		"Rt\t1 \"R-0002c90300d00001\"\t\t# \"router\"",
		"Switch\t36 \"S-0002c90300a00001\"\t\t# \"leaf 1\" base port 0 lid 3 lmc 0",
		"Switch\t8 \"S-0002c90300a00002\"\t\t# \"leaf 2\" enhanced port 0 lid 4 lmc 1",
		"Switch\t8 \"S-0002c90300a00003\"\t\t# \"odd port 0 name\" base port 0 lid 5 lmc 0",
		"Ca\t1 \"H-0002c90300c00021\"",
		"ibwarn: something",
		"Ca\t1 \"H-0002c90300c00031\"\t\t# \"has ibwarn: inside\"",
		"[1](2c90300c00012) \t\"S-0002c90300a00001\"[1]\t\t# lid 1 lmc 0 \"leaf\" lid 3 4xQDR",
	}, "\n") + "\n"
	want := map[listKind]string{
		listCA: "Ca\t: 0x0002c90300c00011 ports 2 \"host one\"\n" +
			"Ca\t: 0x0002c90300c00021 ports 1 Ca\t1 \"H-0002c90300c00021\"\n" +
			"ibwarn: something\n" +
			"Ca\t: 0x0002c90300c00031 ports 1 \"has ibwarn: inside\"\n" +
			"Ca\t1 \"H-0002c90300c00031\"\t\t# \"has ibwarn: inside\"\n",
		listRouter: "Rt\t: 0x0002c90300d00001 ports 1 \"router\"\n" +
			"ibwarn: something\n" +
			"Ca\t1 \"H-0002c90300c00031\"\t\t# \"has ibwarn: inside\"\n",
		listSwitch: "Switch\t: 0x0002c90300a00001 ports 36 \"leaf 1\" base port 0 lid 3 lmc 0\n" +
			"Switch\t: 0x0002c90300a00002 ports 8 \"leaf 2\" enhanced port 0 lid 4 lmc 1\n" +
			"Switch\t: 0x0002c90300a00003 ports 8 \"odd port 0 name\" base port 0 lid 5 lmc 0\n" +
			"ibwarn: something\n" +
			"Ca\t1 \"H-0002c90300c00031\"\t\t# \"has ibwarn: inside\"\n",
	}
	for k, w := range want {
		var b bytes.Buffer
		bw := bufio.NewWriter(&b)
		if err := listNodeLines(bw, []byte(text), k); err != nil {
			t.Fatal(err)
		}
		bw.Flush()
		if b.String() != w {
			t.Errorf("kind %d:\n--- got\n%s--- want\n%s", k, b.String(), w)
		}
	}
}

// TestIBHostsFile runs the commands on a topology file, as the scripts
// take one, and checks them against the C tool's -H and -S lists of the
// same fabric (same nodes, the scripts' spelling).
func TestIBHostsFile(t *testing.T) {
	dir := filepath.Join("testdata", "TestIBNetDiscoverOffline")
	topo := filepath.Join(dir, "dualport.topo")
	out, errOut, code := run(t, "", "ibtool", "ibhosts", topo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	h := readFile(t, filepath.Join(dir, "dualport-H.golden"))
	if n, m := strings.Count(out, "\n"), strings.Count(h, "\n"); n != m || n == 0 {
		t.Errorf("ibhosts lists %d CAs, ibnetdiscover -H %d", n, m)
	}
	for _, l := range strings.Split(strings.TrimSpace(h), "\n") {
		guid := strings.Fields(l)[2]
		if !strings.Contains(out, guid) {
			t.Errorf("ibhosts lacks %s:\n%s", guid, out)
		}
	}
	sw, _, _ := run(t, "", "ibtool", "ibswitches", topo)
	nodes, _, _ := run(t, "", "ibtool", "ibnodes", topo)
	if nodes != out+sw || !strings.Contains(sw, "base port 0 lid") {
		t.Errorf("ibnodes is not ibhosts then ibswitches:\n%s", nodes)
	}
	js, _, code := run(t, "", "ibtool", "--json", "ibswitches", topo)
	var doc struct {
		Result []NodeLineJSON `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 || len(doc.Result) != strings.Count(sw, "\n") {
		t.Errorf("ibswitches --json (exit %d, %v):\n%s", code, err, js)
	}
	// A cache lists the same nodes as the topology the C tool printed
	// from it.
	cache := filepath.Join(dir, "dualport.cache")
	for _, cmd := range []string{"ibhosts", "ibnodes"} {
		want, _, _ := run(t, "", "ibtool", cmd, topo)
		if got, errOut, code := run(t, "", "ibtool", cmd, cache); code != 0 || got != want {
			t.Errorf("%s on the cache: exit %d, %s\n%s", cmd, code, errOut, firstLines(got, want))
		}
	}
	// A file that is not a subnet is an error naming the file and the
	// line (the scripts print nothing and exit 0).
	notTopo := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(notTopo, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, msg string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{notTopo, notTopo + ": topology line 1: unknown line"},
		{filepath.Join(dir, "dualport-H.golden"), "topology line 1"},
		{"/dev/zero", "/dev/zero: topology line 1: binary data"},
	} {
		for _, cmd := range []string{"ibhosts", "ibswitches"} {
			out, errOut, code := run(t, "", "ibtool", cmd, c.file)
			if code != 1 || out != "" || !strings.Contains(errOut, c.msg) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit 1 and %q", cmd, c.file, code, out, errOut, c.msg)
			}
		}
	}
}

// TestIBNetDiscoverOffline renders a C cache as --json and --dot (golden),
// and the topology from the cache equals the topology file the C tool
// printed.
func TestIBNetDiscoverOffline(t *testing.T) {
	dir := filepath.Join("testdata", "TestIBNetDiscoverOffline")
	cache := filepath.Join(dir, "dualport.cache")
	out, errOut, code := run(t, "", "ibtool", "ibnetdiscover", "--load-cache", cache)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := stripGenerated(out), stripGenerated(readFile(t, filepath.Join(dir, "dualport.topo"))); got != want {
		t.Errorf("topology from the C cache differs:\n%s", firstLines(got, want))
	}
	js, _, code := run(t, "", "ibtool", "--json", "ibnetdiscover", "--load-cache", cache)
	if code != 0 || !json.Valid([]byte(js)) {
		t.Fatalf("--json: exit %d", code)
	}
	golden(t, "dualport.json", js)
	dot, _, code := run(t, "", "ibtool", "ibnetdiscover", "--dot", "--load-cache", cache)
	if code != 0 || !strings.HasPrefix(dot, "graph subnet {") {
		t.Fatalf("--dot: exit %d", code)
	}
	golden(t, "dualport.dot", dot)
	// Our own cache format round trip.
	own := filepath.Join(t.TempDir(), "own.cache")
	if _, e, code := run(t, "", "ibtool", "ibnetdiscover", "--load-cache", cache, "--cache", own, "--cache-format", "rdmakit"); code != 0 {
		t.Fatalf("--cache-format rdmakit: %s", e)
	}
	again, _, _ := run(t, "", "ibtool", "ibnetdiscover", "--load-cache", own)
	if stripGenerated(again) != stripGenerated(out) {
		t.Errorf("topology from our cache differs")
	}
	for _, args := range [][]string{
		{"ibnetdiscover", "--diffcheck", "bogus", "--load-cache", cache},
		{"ibnetdiscover", "--cache-format", "xml", "--load-cache", cache},
		{"ibnetdiscover", "--discovery", "XX"},
		{"ibnetdiscover", "--load-cache", filepath.Join(dir, "dualport-H.golden")},
	} {
		if _, _, code := run(t, "", append([]string{"ibtool"}, args...)...); code == 0 {
			t.Errorf("%q succeeded", args)
		}
	}
}

// TestSubnetDiffFiles compares a C cache with the topology text of the
// same fabric (no differences), and a subnet with one link taken out.
func TestSubnetDiffFiles(t *testing.T) {
	dir := filepath.Join("testdata", "TestIBNetDiscoverOffline")
	cache, topo := filepath.Join(dir, "dualport.cache"), filepath.Join(dir, "dualport.topo")
	out, errOut, code := run(t, "", "ibtool", "subnet_diff", cache, topo)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "same", out)
	// Drop H-1's port 1 link from the text: both port lines go.
	text := readFile(t, topo)
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "\"H-0002c90300c00010\"[1]") || strings.HasPrefix(l, "[1](2c90300c00011)") {
			continue
		}
		kept = append(kept, l)
	}
	cut := filepath.Join(t.TempDir(), "cut.topo")
	if err := os.WriteFile(cut, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, "", "ibtool", "subnet_diff", topo, cut)
	if code != 1 || !strings.Contains(errOut, "the subnets differ") {
		t.Fatalf("exit %d (want 1: the subnets differ): %s", code, errOut)
	}
	golden(t, "cut", out)
	if !strings.Contains(out, "Reference subnet has 1 more links than the current subnet:") {
		t.Errorf("the missing link is not reported:\n%s", out)
	}
}
