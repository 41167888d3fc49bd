package diags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckLFTBalanceLive compares check_lft_balance with the C Perl
// script on files the C tools wrote from the fat tree: dump_lfts output and
// an ibnetdiscover cache, as they are and with routes moved so that
// switches are unbalanced.
func TestCheckLFTBalanceLive(t *testing.T) { eachRelease(t, testCheckLFTBalanceLive) }

func testCheckLFTBalanceLive(t *testing.T, p peers) {
	l := startLive(t, p)
	dir := t.TempDir()
	cache := filepath.Join(dir, "fabric.cache")
	if out, errOut, code := l.c(t, "ibnetdiscover", "--cache", cache); code != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d\n%s%s", code, out, errOut)
	}
	lfts, errOut, code := l.c(t, "dump_lfts")
	if code != 0 {
		t.Fatalf("dump_lfts: exit %d\n%s", code, errOut)
	}
	files := map[string]string{"lfts": lfts}
	// Every LID the spine sends down port 1 goes down port 2 instead, and
	// leaf 1 sends its uplink traffic out of a host port.
	var moved []string
	sw := ""
	for _, line := range strings.Split(lfts, "\n") {
		if strings.HasPrefix(line, "Unicast") {
			sw = line
		}
		if strings.Contains(sw, "S-spine-1") && strings.HasPrefix(line, "0x") {
			line = strings.Replace(line, " 001 : ", " 002 : ", 1)
		}
		if strings.Contains(sw, "S-leaf-1") && strings.HasPrefix(line, "0x") {
			line = strings.Replace(line, " 005 : (Channel", " 002 : (Channel", 1)
		}
		moved = append(moved, line)
	}
	files["moved"] = strings.Join(moved, "\n")
	files["lid-form"] = strings.ReplaceAll(lfts, "DR path slid 0; dlid 0; 0,1", "Lid 2")
	var cases [][]string
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, flags := range [][]string{{}, {"-v"}, {"-e", "-v"}} {
			cases = append(cases, append([]string{"-l", p, "-i", cache}, flags...))
		}
	}
	cases = append(cases,
		[]string{"-l", filepath.Join(dir, "lfts"), "-i", filepath.Join(dir, "none"), "-v"}, // no cache: no port is up
		[]string{"-l", filepath.Join(dir, "none"), "-i", cache, "-v"},                      // no dump
		[]string{"-i", cache},                      // usage
		[]string{"-l", filepath.Join(dir, "lfts")}, // usage
	)
	l.compareAll(t, "check_lft_balance", cases)
	out, _, _ := l.ours(t, "check_lft_balance", "-l", filepath.Join(dir, "moved"), "-i", cache)
	if !strings.Contains(out, "Unbalanced Switch Port Usage: S-spine-1, 0x") {
		t.Errorf("the moved routes must unbalance the spine:\n%s", out)
	}
	out, _, _ = l.ours(t, "check_lft_balance", "--json", "-l", filepath.Join(dir, "lfts"), "-i", cache)
	if !strings.Contains(out, `"unbalanced": false`) || strings.Contains(out, `"unbalanced": true`) {
		t.Errorf("OpenSM's routes are balanced:\n%s", out)
	}
}

func TestCheckLFTBalancePerlNum(t *testing.T) {
	for in, want := range map[string]float64{"001": 1, "H-1": 0, " 12abc": 12, "-3.5e1x": -35, "": 0, ".5": 0.5} {
		if got := perlNum(in); got != want {
			t.Errorf("perlNum(%q) = %v, want %v", in, got, want)
		}
	}
}
