package diags

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// cDiags are the programs infiniband-diags installs: its C tools, shell
// scripts and Perl scripts.
var cDiags = []string{
	"check_lft_balance", "dump_fts", "dump_lfts", "dump_mfts", "ibaddr", "ibcacheedit",
	"ibccconfig", "ibccquery", "ibfindnodesusing", "ibhosts", "ibidsverify", "iblinkinfo",
	"ibnetdiscover", "ibnodes", "ibping", "ibportstate", "ibqueryerrors", "ibroute",
	"ibrouters", "ibstat", "ibstatus", "ibswitches", "ibsysstat", "ibtracert", "perfquery",
	"saquery", "sminfo", "smpdump", "smpquery", "vendstat",
}

// cOption is one option a C diag's usage lists.
type cOption struct {
	long  string // "" for the scripts' single-letter options
	short byte   // 0 when the option has no letter
	arg   bool   // takes an argument
	// arityKnown says whether arg is what the usage says (the C tools'
	// option tables) or a guess (the scripts' usage lines).
	arityKnown bool
}

func (o cOption) String() string {
	var s []string
	if o.long != "" {
		s = append(s, "--"+o.long)
	}
	if o.short != 0 {
		s = append(s, "-"+string(o.short))
	}
	return strings.Join(s, "/")
}

var (
	// "  --config, -z <config>   use config file": ibdiag_show_usage's
	// layout; the argument follows one space, the description two.
	cOptLine = regexp.MustCompile(`^\s+--([A-Za-z0-9_-]+)(?:, -([A-Za-z0-9]))?(?: ([^ ]\S*))?(?:\s|$)`)
	// A script's letter option, a word of its usage: "-C", "-R".
	scriptOpt = regexp.MustCompile(`^-[A-Za-z]$`)
)

// parseCUsage reads the options out of a diag's usage text: the C tools'
// option table, or the letters of a script's usage lines.
func parseCUsage(text string) []cOption {
	var opts []cOption
	seen := map[string]bool{}
	add := func(o cOption) {
		if !seen[o.String()] {
			seen[o.String()] = true
			opts = append(opts, o)
		}
	}
	table := false
	for _, line := range strings.Split(text, "\n") {
		if m := cOptLine.FindStringSubmatch(line); m != nil {
			table = true
			o := cOption{long: m[1], arg: m[3] != "", arityKnown: true}
			if m[2] != "" {
				o.short = m[2][0]
			}
			add(o)
		}
	}
	if table {
		return opts
	}
	for _, line := range strings.Split(text, "\n") {
		usage := strings.Contains(line, "Usage:")
		r := strings.NewReplacer("[", " [ ", "]", " ] ", "|", " | ")
		tok := strings.Fields(r.Replace(line))
		for i, w := range tok {
			if !scriptOpt.MatchString(w) {
				continue
			}
			o := cOption{short: w[1]}
			// On a usage line a word after the letter is its argument; in
			// a description ("-e turn on ...") only a <placeholder> is.
			if i+1 < len(tok) {
				next := tok[i+1]
				if !strings.ContainsAny(next[:1], "[]|-") && (usage || strings.HasPrefix(next, "<")) {
					o.arg = true
				}
			}
			add(o)
		}
	}
	return opts
}

func TestParseCUsage(t *testing.T) {
	c := `
Usage: /usr/sbin/perfquery [options]  [<lid|guid> [[port(s)] [reset_mask]]]

Options:
  --extended, -x          show extended port counters
  --oprcvcounters         show Rcv Counters per Op code
  --reset_after_read, -r  reset counters after read
  --config, -z <config>   use config file, default: /etc/infiniband-diags/ibdiag.conf
  --node-name-map <file>  node name map file
  --outstanding_smps, -o <val>  specify the number of outstanding SMP's 
  --switchguid BEFOREGUID:AFTERGUID  Specify before and after switchguid 
`
	got := fmt.Sprint(parseCUsage(c))
	want := fmt.Sprint([]cOption{
		{"extended", 'x', false, true}, {"oprcvcounters", 0, false, true}, {"reset_after_read", 'r', false, true},
		{"config", 'z', true, true}, {"node-name-map", 0, true, true}, {"outstanding_smps", 'o', true, true},
		{"switchguid", 0, true, true},
	})
	if got != want {
		t.Errorf("C table: got %s, want %s", got, want)
	}
	sh := `Usage: ibhosts [-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]`
	if got, want := fmt.Sprintf("%+v", parseCUsage(sh)), fmt.Sprintf("%+v", []cOption{{short: 'h'}, {short: 'y', arg: true}, {short: 'C', arg: true}, {short: 'P', arg: true}, {short: 't', arg: true}}); got != want {
		t.Errorf("sh usage: got %s, want %s", got, want)
	}
	pl := `Usage: check_lft_balance -l lft-output -i ibnetdiscover-cache [-e] [-v]
  Generate lft-output via "dump_lfts.sh > lft-output"
  -e turn on heuristic(s) to look at switch balances deeper
   -C <ca_name> use selected Channel Adaptor name for queries`
	if got, want := fmt.Sprintf("%+v", parseCUsage(pl)), fmt.Sprintf("%+v", []cOption{{short: 'l', arg: true}, {short: 'i', arg: true}, {short: 'e'}, {short: 'v'}, {short: 'C', arg: true}}); got != want {
		t.Errorf("perl usage: got %s, want %s", got, want)
	}
}

// cUsage runs a diag with -h (every one of them, C or script, prints its
// usage for it) and returns what it printed.
func cUsage(t *testing.T, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-h")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = t.TempDir()
	cmd.WaitDelay = 2 * time.Second
	_ = cmd.Run() // usage exits 2 (C), 0 or 255 (scripts)
	if ctx.Err() != nil {
		t.Fatalf("%s -h did not finish: %v", path, ctx.Err())
	}
	return out.String()
}

// unknownOptions lists the options of a C diag that our command of the same
// name does not take, or takes with another arity.
func unknownOptions(c *cobra.Command, opts []cOption) []string {
	c.InitDefaultHelpFlag()
	fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
	fs.AddFlagSet(c.Flags())
	fs.AddFlagSet(c.InheritedFlags())
	takesArg := func(f *pflag.Flag) bool { return f.NoOptDefVal == "" }
	var bad []string
	for _, o := range opts {
		if o.long != "" {
			f := fs.Lookup(o.long)
			switch {
			case f == nil:
				bad = append(bad, "--"+o.long+" unknown")
			case takesArg(f) != o.arg:
				bad = append(bad, fmt.Sprintf("--%s takes an argument: C %v, ours %v", o.long, o.arg, takesArg(f)))
			}
		}
		if o.short != 0 {
			f := fs.ShorthandLookup(string(o.short))
			switch {
			case f == nil:
				bad = append(bad, "-"+string(o.short)+" unknown")
			case o.arityKnown && takesArg(f) != o.arg:
				bad = append(bad, fmt.Sprintf("-%c takes an argument: C %v, ours %v", o.short, o.arg, takesArg(f)))
			case !o.arityKnown && o.arg && !takesArg(f):
				bad = append(bad, fmt.Sprintf("-%c takes an argument in the script's usage, ours takes none", o.short))
			}
		}
	}
	return bad
}

// TestCDiagOptionsKnown walks the usage of every installed C diag, of every
// Debian release the test bed has, and fails naming, per release and
// program, each option ours does not know: a new option in a newer diags
// release is caught here.
func TestCDiagOptionsKnown(t *testing.T) {
	releases := []struct {
		name string
		get  func(t *testing.T) *testbed.Release
	}{
		{"bookworm", func(t *testing.T) *testbed.Release { testbed.Bookworm.Require(t); return testbed.Bookworm }},
		{"trixie", func(t *testing.T) *testbed.Release { return testbed.Trixie(t) }},
	}
	for _, r := range releases {
		t.Run(r.name, func(t *testing.T) {
			rel := r.get(t)
			root := newRoot(&Env{Retries: -1})
			var missing []string
			found := 0
			for _, name := range cDiags {
				path, err := rel.LookPath(name)
				if err != nil {
					t.Logf("%s: not installed in %s", name, rel)
					continue
				}
				found++
				opts := parseCUsage(cUsage(t, path))
				if len(opts) == 0 {
					t.Errorf("%s of %s: no option found in its usage", name, rel)
					continue
				}
				c, _, err := root.Find([]string{name})
				if err != nil || c == root {
					missing = append(missing, fmt.Sprintf("%s: no such ibtool command", name))
					continue
				}
				for _, b := range unknownOptions(c, opts) {
					missing = append(missing, name+": "+b)
				}
			}
			if found == 0 {
				t.Fatalf("no infiniband-diags program of %s found", rel)
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("infiniband-diags %s options ibtool does not take (%d):\n  %s", rel.Diags, len(missing), strings.Join(missing, "\n  "))
			}
		})
	}
}

// TestCommonOptionsLive compares the common options ibtool took from the C
// tools with the C tools on the ibsim floor: -z (a site configuration),
// -s (the SM's LID for the SA query that finds a -G port), -e (errors on
// stderr, which differ in wording: stdout and the exit status must match)
// and -V (the C tools' line, program name aside). -y is compared in
// TestMKeyMatchesC.
func TestCommonOptionsLive(t *testing.T) { eachRelease(t, testCommonOptionsLive) }

func testCommonOptionsLive(t *testing.T, p peers) {
	l := startLive(t, p)
	lid := func(n string) string { return strconv.Itoa(l.lid[n]) }
	h3, leaf, sm := lid("H-3"), lid("S-leaf-1"), lid(testbed.HCAName(1))
	guid := fmt.Sprintf("0x%016x", uint64(l.f.Node("H-3").PortGUID(1)))
	conf := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(conf, []byte("# a site\ntimeout=800\nm_key=0\nsa_key=0\nMLX_EPI=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.compareAll(t, "smpquery", [][]string{
		{"-z", conf, "nodeinfo", h3},
		{"--config", conf, "-e", "portinfo", h3, "1"},
		{"-e", "-t", "100", "nodeinfo", "200"}, // no such LID: the same failure
		{"-s", sm, "-G", "nodeinfo", guid},
		{"--sm_port", sm, "-G", "nodedesc", guid},
	})
	l.compareAll(t, "perfquery", [][]string{{"-s", sm, "-G", "-E", guid, "1"}, {"-z", conf, "-e", "-E", h3, "1"}})
	l.compareAll(t, "ibaddr", [][]string{{"-z", conf, h3}, {"-s", sm, "-G", guid}, {"-e", "-y", "0", h3}})
	l.compareAll(t, "ibroute", [][]string{{"-z", conf, "-e", leaf}})
	// The SM's activity count moves between the two runs.
	act := regexp.MustCompile(`activity count \d+`)
	cOut, cErr, cCode := l.c(t, "sminfo", "-z", conf, "-e")
	out, errOut, code := l.ours(t, "sminfo", "-z", conf, "-e")
	l.check(t, "sminfo", []string{"-z", conf, "-e"}, cOut, cErr, cCode, out, errOut, code, func(c, o string) bool {
		return act.ReplaceAllString(c, "") == act.ReplaceAllString(o, "")
	})
	l.compareAll(t, "saquery", [][]string{{"-z", conf, "-e", "NR", h3}})
	l.compareAll(t, "ibportstate", [][]string{{"-z", conf, "-e", "-s", sm, leaf, "1"}})
	for _, tool := range []string{"perfquery", "smpquery", "saquery", "ibnetdiscover", "ibstat", "ibcacheedit"} {
		_, cErr, cCode := l.c(t, tool, "-V")
		out, errOut, code := l.ours(t, tool, "-V")
		cLine, _, _ := strings.Cut(cErr, "\n")
		line, _, _ := strings.Cut(errOut, "\n")
		// The C tools print argv[0], the path they were run by.
		cLine = cLine[strings.LastIndexByte(cLine[:strings.Index(cLine, " BUILD")], '/')+1:]
		// The release number is the one difference: ours is 56's.
		cLine = diagsRelease.ReplaceAllString(cLine, "VERSION: N")
		line = diagsRelease.ReplaceAllString(line, "VERSION: N")
		if code != cCode || out != "" || line != cLine {
			t.Errorf("%s -V: exit %d (C %d), %q (C %q)", tool, code, cCode, line, cLine)
		}
	}
}

// diagsRelease is the release number in a -V line.
var diagsRelease = regexp.MustCompile(`VERSION: [0-9.]+`)
