package diags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsAfter parses argv (a command and its flags) as ibtool does and
// runs setup, returning the Env it leaves.
func settingsAfter(t *testing.T, argv ...string) (*Env, error) {
	t.Helper()
	var out, errb strings.Builder
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Retries: -1, MlxEPI: true}
	root := newRoot(e)
	c, rest, err := root.Find(argv)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	return e, e.setup(c)
}

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSiteConfigPrecedence: a flag wins over the file, the file over the
// built-in default; CA and Port apply to the umad fabric only.
func TestSiteConfigPrecedence(t *testing.T) {
	t.Setenv("RDMAKIT_FABRIC", "")
	conf := writeConf(t, "CA=mlx5_1\nPort=2\ntimeout=70\nMLX_EPI=false\nm_key=0x10\nsa_key=0x20\nnd_format=x\n")
	e, err := settingsAfter(t, "perfquery", "-z", conf)
	if err != nil {
		t.Fatal(err)
	}
	if e.CA != "mlx5_1" || e.Port != "2" || e.Timeout != 70 || e.MlxEPI || e.MKey != 0x10 || e.SMKey != 0x20 {
		t.Errorf("from the file: CA %q Port %q timeout %d MLX_EPI %v m_key %#x sa_key %#x", e.CA, e.Port, e.Timeout, e.MlxEPI, e.MKey, e.SMKey)
	}
	e, err = settingsAfter(t, "perfquery", "-z", conf, "-C", "mlx4_0", "-P", "1", "-t", "5", "-y", "0x11", "--smkey", "0x21")
	if err != nil {
		t.Fatal(err)
	}
	if e.CA != "mlx4_0" || e.Port != "1" || e.Timeout != 5 || e.MKey != 0x11 || e.SMKey != 0x21 {
		t.Errorf("flags over the file: CA %q Port %q timeout %d m_key %#x sa_key %#x", e.CA, e.Port, e.Timeout, e.MKey, e.SMKey)
	}
	e, err = settingsAfter(t, "perfquery", "--fabric", "sim:fattree:k=2,n=1", "-z", conf)
	if err != nil {
		t.Fatal(err)
	}
	if e.CA != "" || e.Port != "" || e.Timeout != 70 {
		t.Errorf("a sim fabric: CA %q Port %q (want none from the file), timeout %d", e.CA, e.Port, e.Timeout)
	}
	old := defaultSiteConfig
	t.Cleanup(func() { defaultSiteConfig = old })
	defaultSiteConfig = filepath.Join(t.TempDir(), "absent.conf")
	e, err = settingsAfter(t, "perfquery")
	if err != nil || e.Timeout != 0 || e.MKey != 0 || !e.MlxEPI {
		t.Errorf("no default file: %v, timeout %d m_key %#x MLX_EPI %v", err, e.Timeout, e.MKey, e.MlxEPI)
	}
	defaultSiteConfig = conf
	if e, err = settingsAfter(t, "perfquery"); err != nil || e.Timeout != 70 {
		t.Errorf("the default file: %v, timeout %d", err, e.Timeout)
	}
}

// TestSiteConfigErrors: a malformed file stops every command with the
// file and line; a file named with -z must exist; a key the diags do not
// read is a warning.
func TestSiteConfigErrors(t *testing.T) {
	bad := writeConf(t, "# ok\nCA=mlx5_0\ntimeout=fifty\n")
	for _, args := range [][]string{{"perfquery"}, {"ibnetdiscover"}, {"ibstat"}} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "sim:fattree:k=2,n=1", "-z", bad}, args...)...)
		if code != 1 || !strings.Contains(errOut, bad+", line 3") || !strings.Contains(errOut, "timeout") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 naming %s, line 3", args, code, errOut, bad)
		}
	}
	_, errOut, code := run(t, "", "ibtool", "--fabric", "sim:fattree:k=2,n=1", "-z", "/no/such/ibdiag.conf", "perfquery")
	if code == 0 || !strings.Contains(errOut, "/no/such/ibdiag.conf") {
		t.Errorf("missing -z file: exit %d, stderr %q", code, errOut)
	}
	odd := writeConf(t, "colour=blue\n")
	out, errOut, code := run(t, "", "ibtool", "--fabric", "sim:fattree:k=2,n=1", "-z", odd, "perfquery")
	if code != 0 || !strings.Contains(errOut, `line 1: infiniband-diags reads no key "colour"`) || !strings.Contains(out, "PortXmitData") {
		t.Errorf("unknown key: exit %d, stderr %q", code, errOut)
	}
}

// TestKeyPrompts: -y and --smkey values that are not numbers are asked
// for on stdin, as the C tools ask on the terminal; a bad M_Key stops.
func TestKeyPrompts(t *testing.T) {
	var out, errb strings.Builder
	e := &Env{Stdin: strings.NewReader("0x55\n0x66\n"), Stdout: &out, Stderr: &errb, Retries: -1}
	root := newRoot(e)
	c, rest, _ := root.Find([]string{"saquery", "-y", "ask", "--smkey", "x"})
	if err := c.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	if err := e.readKeys(c); err != nil || e.MKey != 0x55 || e.SMKey != 0x66 || !strings.Contains(errb.String(), "M_Key: SM_Key: ") {
		t.Errorf("prompts: %v, m_key %#x sa_key %#x, stderr %q", err, e.MKey, e.SMKey, errb.String())
	}
	_, errOut, code := run(t, "nonsense\n", "ibtool", "--fabric", "sim:fattree:k=2,n=1", "-y", "ask", "smpquery", "NI", "1")
	if code != 255 || !strings.Contains(errOut, "Bad M_Key") {
		t.Errorf("bad M_Key: exit %d, stderr %q", code, errOut)
	}
}

// TestVersion: -V prints the C tools' line, then ibtool's, on stderr, and
// runs nothing (no arguments needed).
func TestVersion(t *testing.T) {
	for _, argv := range [][]string{{"ibtool", "perfquery", "-V"}, {"ibtool", "smpquery", "--version"}, {"perfquery", "-V"}} {
		out, errOut, code := run(t, "", argv...)
		name := argv[len(argv)-2]
		if argv[0] == "perfquery" {
			name = "perfquery"
		}
		if code != 0 || out != "" || !strings.HasPrefix(errOut, name+" BUILD VERSION: "+DiagsVersion+"\nibtool (rdmakit) ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", argv, code, out, errOut)
		}
	}
	_, errOut, code := run(t, "", "ibtool", "-V")
	if code != 0 || !strings.HasPrefix(errOut, "ibtool (rdmakit) ") {
		t.Errorf("ibtool -V: exit %d, stderr %q", code, errOut)
	}
}

// TestErrorsOption: -e prints a line per MAD that fails (a reply with an
// error status here), before or after the command's name; a command whose
// -e means something else keeps --errors.
func TestErrorsOption(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	for _, argv := range [][]string{
		{"ibtool", "--fabric", fab, "smpquery", "-e", "switchinfo", "9"},
		{"ibtool", "-e", "--fabric", fab, "smpquery", "switchinfo", "9"},
		{"ibtool", "--fabric", fab, "smpquery", "--errors", "switchinfo", "9"},
	} {
		_, errOut, code := run(t, "", argv...)
		if code != 255 || !strings.Contains(errOut, "E: reply SubnGet SwitchInfo to IBPath(DLID=9) try 1 after ") || !strings.Contains(errOut, ": status 0x000c\n") {
			t.Errorf("%v: exit %d\n%s", argv, code, errOut)
		}
	}
	_, errOut, code := run(t, "", "ibtool", "--fabric", fab, "smpquery", "nodeinfo", "9")
	if code != 0 || strings.Contains(errOut, "E: ") {
		t.Errorf("without -e: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := run(t, "", "ibtool", "check_lft_balance", "--errors", "-e"); code != 2 || strings.Contains(errOut, "unknown") {
		t.Errorf("check_lft_balance --errors -e: exit %d: %s", code, errOut)
	}
}

// TestSMKeyEverywhere: --smkey, and the site configuration's sa_key, go
// into every SA query, saquery's and the PathRecord query that resolves a
// GMP target alike.
func TestSMKeyEverywhere(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	conf := writeConf(t, "sa_key=0x66\n")
	for _, tc := range []struct {
		args []string
		key  string
	}{
		{[]string{"--smkey", "0x55", "saquery", "NR", "9"}, "0x0000000000000055"},
		{[]string{"--smkey", "0x55", "perfquery", "20", "1"}, "0x0000000000000055"},
		{[]string{"-z", conf, "saquery", "NR", "9"}, "0x0000000000000066"},
		{[]string{"-z", conf, "--smkey", "0x55", "perfquery", "20", "1"}, "0x0000000000000055"},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", fab, "-dd"}, tc.args...)...)
		// The request carries the key; the SA's reply clears it.
		if code != 0 || !strings.Contains(errOut, "SMKey="+tc.key) {
			t.Errorf("%v: exit %d, no SMKey=%s in the trace", tc.args, code, tc.key)
		}
	}
}
