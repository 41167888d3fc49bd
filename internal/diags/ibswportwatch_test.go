package diags

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/sim"
)

// rates are masked in the golden files: they depend on the time between
// reads.
var watchRate = regexp.MustCompile(`\(\+ [0-9.]+/s\)`)

// TestIBSwPortWatch reads a port three times while errors are injected
// between reads (the MADs themselves are the traffic): the delta display, the threshold display (only
// counters rising faster than their threshold), the extended counters and
// the JSON samples.
func TestIBSwPortWatch(t *testing.T) {
	f := checkFabric(t, true)
	mk := func(e *Env, open func() (*session, error)) *cobra.Command { return newIBSwPortWatchWith(e, open) }
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"delta", []string{"-n", "3", "-p", "0.05", "4", "1"}},
		{"threshold", []string{"--threshold", "-n", "3", "-p", "0.05", "4", "1"}},
		{"extended", []string{"-x", "-n", "2", "-p", "0.05", "2", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					_ = f.InjectErrors("ca-2", 1, sim.PortErrors{SymbolErrors: 100, LinkDowned: 1})
					time.Sleep(10 * time.Millisecond)
				}
			}()
			out, errOut, code := runOnFabric(t, f, mk, tc.args...)
			cancel()
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if tc.name == "delta" && strings.Count(out, "# Port counters: Lid 4 port 1") != 3 {
				t.Errorf("want 3 reads:\n%s", out)
			}
			if tc.name == "threshold" && !strings.Contains(out, "SymbolErrorCounter") {
				t.Errorf("SymbolErrorCounter rises by ~10000/s, beyond its 10/s:\n%s", out)
			}
			// Keep the shape: names, which lines show a rate; not the numbers.
			masked := regexp.MustCompile(`(\.+)\d+ +`).ReplaceAllString(watchRate.ReplaceAllString(out, "(+ R/s)"), "${1}V ")
			masked = regexp.MustCompile(`(\.+)\d+\n`).ReplaceAllString(masked, "${1}V\n")
			golden(t, tc.name, masked)
		})
	}
	out, errOut, code := runOnFabric(t, f, mk, "--json", "-n", "2", "-p", "0.01", "4", "1")
	var doc struct {
		Result WatchResult `json:"result"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Result.Samples) != 2 || doc.Result.Attribute != "PortCounters" {
		t.Errorf("--json: exit %d\n%s%s", code, out, errOut)
	}
}

// TestIBSwPortWatchFlags runs every command of this family's files through
// ibtool's root, whose global flags (-t, -v, -C, -P, -d) theirs must not
// shadow.
func TestIBSwPortWatchFlags(t *testing.T) {
	for _, name := range []string{"ibccquery", "ibccconfig", "ibchecknode", "ibcheckport", "ibcheckportstate",
		"ibcheckportwidth", "ibcheckerrs", "ibdatacounts", "ibcheckstate", "ibcheckwidth", "ibchecknet",
		"ibcheckerrors", "ibclearcounters", "ibclearerrors", "ibdatacounters", "ibprintca", "ibprintswitch",
		"ibprintrt", "ibswportwatch"} {
		out, errOut, code := run(t, "", "ibtool", name, "--help")
		if code != 0 || !strings.Contains(out, name) {
			t.Errorf("ibtool %s --help: exit %d\n%s%s", name, code, out, errOut)
		}
	}
}
