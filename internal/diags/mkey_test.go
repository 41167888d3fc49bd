package diags

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
)

// mkeyTestKey protects the switch of TestMKeyProtection.
const mkeyTestKey = 0x00000000C0DEF00D

// protect sets the M_Key and protection level of the port 0 of the switch
// at DR path 0,1 from the bed's node, with the current key.
func protect(t *testing.T, mc *mad.Client, level uint8) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sw := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1}}, MKey: mkeyTestKey}
	var pi iba.PortInfo
	if err := mc.SubnGet(ctx, sw, &pi, 0); err != nil {
		t.Fatal(err)
	}
	pi.MKey, pi.MKeyProtectBits = mkeyTestKey, level
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
	if err := mc.SubnSet(ctx, sw, &pi, 0); err != nil {
		t.Fatal(err)
	}
}

// TestMKeyProtection protects a leaf switch with an M_Key at levels 1, 2
// and 3 (IBA 14.2.4.1) on the simulator, served by ibsimserver, and runs
// the commands that send SMPs to it: without the key every Set fails, and
// at levels 2 and 3 every Get too (level 1 answers Gets, hiding the key),
// each failure saying the M_Key is the likely cause; with the key, from
// -y or from the site configuration's m_key, all succeed; a wrong -y wins
// over the file's right key.
func TestMKeyProtection(t *testing.T) {
	b := newSATableBed(t, "fattree:k=4,n=2")
	conf := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("# site\nm_key=%#x\n", uint64(mkeyTestKey))), 0o644); err != nil {
		t.Fatal(err)
	}
	gets := [][]string{
		{"smpquery", "-D", "nodeinfo", "0,1"},
		{"smpquery", "-D", "portinfo", "0,1", "1"},
		{"smpdump", "-D", "0,1", "0x11"},
		{"ibaddr", "-D", "0,1"},
		{"ibroute", "-D", "0,1"},
		{"ibportstate", "-D", "0,1", "1"},
		{"query", "SubnGet", "NodeInfo", "0,1"},
		{"perfquery", "0,1", "1"}, // the DR path goes to a LID by SMPs
	}
	sets := [][]string{
		{"ibportstate", "-D", "0,1", "2", "enable"},
		{"query", "SubnSet", "PortInfo", "0,1", "-a", "2", "-f", "portPhysicalState=2"},
		{"set_port_state", "--enable", "0,1@2"},
	}
	ibtool := func(extra []string, args []string) (string, string, int) {
		argv := append([]string{"ibtool", "--fabric", "ibsim:" + b.node, "-t", "50", "--retries", "0"}, extra...)
		return run(t, "", append(argv, args...)...)
	}
	for level := uint8(1); level <= 3; level++ {
		protect(t, b.mc, level)
		t.Run(fmt.Sprintf("level%d", level), func(t *testing.T) {
			for _, args := range append(append([][]string{}, gets...), sets...) {
				isSet := false
				for _, s := range sets {
					isSet = isSet || strings.Join(s, " ") == strings.Join(args, " ")
				}
				_, errOut, code := ibtool(nil, args)
				// smpdump, as the C one, exits 0 when no reply comes.
				failed := code != 0 || args[0] == "smpdump"
				if fails := isSet || level >= 2; fails {
					if !failed || !strings.Contains(errOut, "M_Key") {
						t.Errorf("%q without the key: exit %d, stderr %q; want a failure naming the M_Key", args, code, errOut)
					}
				} else if code != 0 {
					t.Errorf("%q without the key at level 1: exit %d: %s", args, code, errOut)
				}
				for _, with := range [][]string{{"-y", fmt.Sprintf("%#x", uint64(mkeyTestKey))}, {"-z", conf}} {
					if _, errOut, code := ibtool(with, args); code != 0 {
						t.Errorf("%q with %q: exit %d: %s", args, with, code, errOut)
					}
				}
				if isSet {
					if _, errOut, code := ibtool([]string{"-z", conf, "-y", "0x1"}, args); code == 0 || !strings.Contains(errOut, "M_Key") {
						t.Errorf("%q with a wrong -y over the file's key: exit %d, stderr %q; want the flag to win and fail", args, code, errOut)
					}
				}
			}
		})
	}
}

// TestMKeyMatchesC compares ours with the C tools given the M_Key, on a
// switch protected at level 3, through ibsimserver: the C tools' -y and
// ours, the same output. (smpdump is left out: the C one takes -y and
// sends no M_Key; ours sends it.) A Set changes the fabric, so each side
// of it gets a fabric of its own.
func TestMKeyMatchesC(t *testing.T) { testbed.EachRelease(t, testMKeyMatchesC) }

func testMKeyMatchesC(t *testing.T, rel *testbed.Release) {
	key := fmt.Sprintf("%#x", uint64(mkeyTestKey))
	bed := func() (*saTableBed, *testbed.IBSim) {
		b := newSATableBed(t, "fattree:k=4,n=2")
		protect(t, b.mc, 3)
		return b, &testbed.IBSim{SockName: os.Getenv("IBSIM_SOCKNAME")}
	}
	ours := func(b *saTableBed, args []string) (string, string, int) {
		return run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.node}, args...)...)
	}
	compare := func(args []string, out, errOut string, code int, cOut, cErr string, cCode int) {
		t.Helper()
		if cCode != 0 {
			t.Errorf("C %q: exit %d: %s", args, cCode, cErr)
			return
		}
		if code != 0 || out != cOut {
			t.Errorf("%q: exit %d (%s)\n--- ours\n%s--- C\n%s", args, code, errOut, out, cOut)
		}
	}
	b, sim := bed()
	for _, args := range [][]string{
		{"smpquery", "-y", key, "-D", "nodeinfo", "0,1"},
		{"smpquery", "--m_key", key, "-D", "portinfo", "0,1", "3"},
		{"ibaddr", "-y", key, "-D", "0,1"},
		{"ibroute", "-y", key, "-D", "0,1"},
		{"ibportstate", "-y", key, "-D", "0,1", "3"},
	} {
		if why := rel.Broken(args); why != "" {
			continue
		}
		cOut, cErr, cCode := rel.RunC(t, sim, b.node, args...)
		out, errOut, code := ours(b, args)
		compare(args, out, errOut, code, rel.Normalise(args, cOut), cErr, cCode)
	}
	for _, args := range [][]string{
		{"ibportstate", "-y", key, "-D", "0,1", "3", "disable"},
	} {
		b, _ := bed()
		out, errOut, code := ours(b, args)
		b, sim := bed()
		cOut, cErr, cCode := rel.RunC(t, sim, b.node, args...)
		compare(args, out, errOut, code, rel.Normalise(args, cOut), cErr, cCode)
	}
}
