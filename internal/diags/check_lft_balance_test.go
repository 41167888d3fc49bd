package diags

import (
	"errors"
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
		[]string{"-i", cache},                      // usage
		[]string{"-l", filepath.Join(dir, "lfts")}, // usage
	)
	l.compareAll(t, "check_lft_balance", cases)
	// Where the script goes on without the cache (no port is up) or the
	// dump (no switch), ours stops (docs/ibtool.md).
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-l", filepath.Join(dir, "lfts"), "-i", filepath.Join(dir, "none"), "-v"}, "ibnetdiscover cache\n  + loading " + filepath.Join(dir, "none")}, // -v: the error chain
		{[]string{"-l", filepath.Join(dir, "none"), "-i", cache, "-v"}, "Couldn't open dump lfts file: " + filepath.Join(dir, "none") + ": no such file"},
	} {
		_, cErr, cCode := l.c(t, "check_lft_balance", c.args...)
		out, errOut, code := l.ours(t, "check_lft_balance", c.args...)
		if cCode != 0 || code != 1 || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%q: exit %d (C %d), stdout %q, stderr %q; want 1 and %q (C: %s)", c.args, code, cCode, out, errOut, c.msg, cErr)
		}
	}
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

// TestCheckLFTBalanceInput: the dump is read strictly, line by line, and
// the cache through subnet.ReadFile; whatever is not what the C tools
// write stops the command with the file and the line, without reading a
// device such as /dev/zero to its end.
func TestCheckLFTBalanceInput(t *testing.T) {
	dir := t.TempDir()
	const fab = "sim:fattree:k=2,n=2"
	cache := filepath.Join(dir, "fabric.cache")
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibnetdiscover", "--cache", cache); code != 0 {
		t.Fatalf("ibnetdiscover --cache: %s", errOut)
	}
	lfts, errOut, code := run(t, "", "ibtool", "--fabric", fab, "dump_lfts")
	if code != 0 || !strings.Contains(lfts, "Unicast lids") {
		t.Fatalf("dump_lfts: exit %d: %s", code, errOut)
	}
	mfts, _, _ := run(t, "", "ibtool", "--fabric", fab, "dump_mfts")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("lfts", lfts)
	if out, errOut, code := run(t, "", "ibtool", "check_lft_balance", "-v", "-l", good, "-i", cache); code != 0 || !strings.Contains(out, "Switch Port Usage: ft-l0-0, 0x") {
		t.Fatalf("a good dump: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(lfts, "\n")
	long := append(append(append([]string{}, lines[:5]...), strings.Repeat("x", 70000)), lines[5:]...)
	for _, c := range []struct {
		name, text, cache, msg string
	}{
		{"passwd", "root:x:0:0:root:/root:/bin/bash\n", cache, "line 1: not a line of dump_lfts output: \"root:x:0:0:root:/root:/bin/bash\""},
		{"entry-first", lines[3] + "\n" + lfts, cache, "line 1: a table entry before the first \"Unicast lids\" header"},
		{"long", strings.Join(long, "\n"), cache, "line 6: longer than 65536 bytes"},
		{"garbled", strings.Replace(lfts, " : (Channel", " ; (Channel", 1), cache, ": not a line of dump_lfts output: \"0x"},
		{"no-switch", strings.Replace(lfts, " guid 0x", " guide 0x", 1), cache, "line 1: a table header that names no switch"},
		{"multicast", mfts, cache, "line 1: a multicast table"},
		{"empty", "", cache, "line 0: no \"Unicast lids\" table"},
		{"zero-dump", "", cache, "/dev/zero: line 1: longer than 65536 bytes"},
		{"zero-cache", lfts, "/dev/zero", "ibnetdiscover cache: loading /dev/zero"},
		{"text-cache", lfts, good, "ibnetdiscover cache: loading " + good + ": topology line 1"},
	} {
		p := write(c.name, c.text)
		if c.name == "zero-dump" {
			p = "/dev/zero"
		}
		out, errOut, code := run(t, "", "ibtool", "check_lft_balance", "-l", p, "-i", c.cache)
		if code != 1 || out != "" || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.name, code, out, errOut, c.msg)
		}
	}
}

// FuzzCheckLFTBalanceInput: no dump makes the reader panic, and a dump it
// accepts gives a verdict on at least one switch.
func FuzzCheckLFTBalanceInput(f *testing.F) {
	f.Add("Unicast lids [0x0-0x3] of switch DR path slid 0; dlid 0; 0 guid 0x0008f10500000000 (ft-l0-0):\n" +
		"  Lid  Out   Destination\n       Port     Info \n" +
		"0x0001 000 : (Switch portguid 0x0008f10500000000: 'ft-l0-0')\n" +
		"0x0002 001 : (Channel Adapter portguid 0x0002c90300000001: 'hca1 HCA-1')\n" +
		"0x0003 001 : (path #2 out of 2: portguid 0x0002c90300000001)\n" +
		"3 valid lids dumped \n\n*** WARNING ***: this command has been replaced by dump_fts\n")
	f.Add("Unicast lids [0x0-0x1] of switch Lid 2 guid 0x1 (x):\n0x0001 255 \n1 lids dumped \n")
	f.Add("0x0001 001 : (Router portguid 0x1: 'r')\n")
	f.Add("Multicast mlids [0xc000-0xc000] of switch Lid 2 guid 0x1 (x):\n")
	f.Fuzz(func(t *testing.T, dump string) {
		b := &lftBalance{verbose: true, heuristic: true}
		if err := b.read(strings.NewReader(dump), "dump"); err != nil {
			var le *lftLineError
			if !errors.As(err, &le) || le.line < 0 {
				t.Fatalf("not a line error: %v", err)
			}
			return
		}
		if len(b.res.Switches) == 0 {
			t.Fatalf("accepted with no switch:\n%s", dump)
		}
	})
}
