package diags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mustRun(t *testing.T, argv ...string) string {
	t.Helper()
	out, errOut, code := run(t, "", argv...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", argv, code, errOut)
	}
	return out
}

// TestDiscoveryCache is python-rdma's --cache: the manual's example
// (ibnetdiscover writes the cache, ibcheckerrors reads it and sends no
// SMP), a cache written by the first command that needs one and read by
// the next, --refresh-cache, the file name templates, and the -d lines
// that say which happened.
func TestDiscoveryCache(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	dir := t.TempDir()
	disc := filepath.Join(dir, "disc")
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibnetdiscover", "--cache", disc, "--refresh-cache"); code != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d: %s", code, errOut)
	}
	fresh, _, freshCode := run(t, "", "ibtool", "--fabric", fab, "ibcheckerrors", "--nocolor")
	out, errOut, code := run(t, "", "ibtool", "--fabric", fab, "-d", "ibcheckerrors", "--nocolor", "--cache", disc)
	if code != freshCode || out != fresh || strings.Contains(errOut, "SubnGet") || !strings.Contains(errOut, `D: Loading discovery cache from "`+disc+`"`) {
		t.Errorf("ibcheckerrors --cache: exit %d (discovering: %d), SMPs sent: %v\n%s--- discovering\n%s", code, freshCode, strings.Contains(errOut, "SubnGet"), out, fresh)
	}

	// The first command that needs the subnet writes the cache, through
	// a template; the next reads it.
	tmpl := filepath.Join(dir, "c-$A.cache")
	name := filepath.Join(dir, "c-sim_hca1-1.cache")
	want, _, _ := run(t, "", "ibtool", "--fabric", fab, "ibswitches")
	_, errOut, code = run(t, "", "ibtool", "--fabric", fab, "-d", "ibswitches", "--cache", tmpl)
	if code != 0 || !strings.Contains(errOut, "D: Performing discovery using mode 'DR'") || !strings.Contains(errOut, `D: Saving discovery cache to "`+name+`"`) {
		t.Fatalf("first run: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(name); err != nil {
		t.Fatal(err)
	}
	got, errOut, code := run(t, "", "ibtool", "--fabric", fab, "-d", "ibswitches", "--cache", tmpl)
	if code != 0 || got != want || strings.Contains(errOut, "Performing discovery") || !strings.Contains(errOut, "D: Loading discovery cache") {
		t.Errorf("second run: exit %d\n%s%s", code, got, errOut)
	}
	_, errOut, _ = run(t, "", "ibtool", "--fabric", fab, "-d", "ibswitches", "--cache", tmpl, "--refresh-cache")
	if !strings.Contains(errOut, "Performing discovery") || !strings.Contains(errOut, "D: Saving discovery cache") {
		t.Errorf("--refresh-cache did not discover and write:\n%s", errOut)
	}
	// Other commands read the same cache: names and targets resolve in it.
	for _, args := range [][]string{
		{"ibprintswitch", "ft-l0-0"}, {"ibfindnodesusing", "ft-l0-0", "1"},
		{"ibhosts"}, {"ibidsverify"}, {"ibqueryerrors"}, {"ibtracert", "ft-l0-0", "20"}, {"ibroute", "1"},
		{"dump_lfts"}, {"set_port_state", "ft-l0-3@2"},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", fab, "-d"}, append(args, "--cache", tmpl)...)...)
		if code != 0 || !strings.Contains(errOut, "D: Loading discovery cache") || strings.Contains(errOut, "Performing discovery") {
			t.Errorf("%v --cache: exit %d\n%s", args, code, errOut)
		}
	}
	// iblinkinfo's -d is --down: the same output as discovering, then.
	if got, _, code := run(t, "", "ibtool", "--fabric", fab, "iblinkinfo", "--cache", tmpl); code != 0 || got != mustRun(t, "ibtool", "--fabric", fab, "iblinkinfo") {
		t.Errorf("iblinkinfo --cache: exit %d\n%s", code, got)
	}
	// A file that is no cache is an error that names it.
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("not a cache\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibswitches", "--cache", bad); code == 0 || !strings.Contains(errOut, bad) {
		t.Errorf("a bad cache: exit %d: %s", code, errOut)
	}
}
