package diags

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "check_lft_balance", aliases: []string{"check_lft_balance.pl"}, make: newCheckLFTBalance})
}

// check_lft_balance is infiniband-diags' Perl script of that name: from a
// dump_lfts output and an ibnetdiscover cache it counts, per switch, the
// LIDs routed out of each port and reports the switches whose ports carry
// unequal loads. The script asks iblinkinfo --load-cache for the state of
// every port; this reads the cache itself. Its quirks are kept (ports 1 to
// 36 only; Perl's numeric comparison of host names, which makes any two
// non-numeric names equal).

// LFTBalanceResult is check_lft_balance's verdict on every switch of the
// dump.
type LFTBalanceResult struct {
	Switches []LFTBalanceSwitch `json:"switches"`
}

// LFTBalanceSwitch is one switch: whether its port usage is unbalanced and
// the LIDs routed out of each port that counts.
type LFTBalanceSwitch struct {
	GUID       string         `json:"guid"`
	Name       string         `json:"name"`
	Unbalanced bool           `json:"unbalanced"`
	Ports      []LFTPortUsage `json:"ports"`
}

// LFTPortUsage is the number of LIDs a switch port forwards.
type LFTPortUsage struct {
	Port string `json:"port"` // as the dump prints it: "001"
	LIDs int    `json:"lids"`
}

type checkLFTFlags struct {
	lftFile, cacheFile string
	heuristic          bool
}

func newCheckLFTBalance(e *Env) *cobra.Command {
	var f checkLFTFlags
	c := &cobra.Command{
		Use:   "check_lft_balance -l lft-output -i ibnetdiscover-cache [-e] [-v]",
		Short: "report switches whose ports carry unbalanced routes (infiniband-diags check_lft_balance)",
		Long: `check_lft_balance reads the forwarding tables that dump_lfts printed and the
subnet that ibnetdiscover --cache saved, and reports every switch whose
ports forward unequal numbers of LIDs, as infiniband-diags'
check_lft_balance does.

  Generate lft-output via "dump_lfts > lft-output"
  Generate ibnetdiscover-cache via "ibnetdiscover --cache ibnetdiscover-cache"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheckLFTBalance(e, &f)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.lftFile, "lft-output", "l", "", "dump_lfts output")
	fl.StringVarP(&f.cacheFile, "cache", "i", "", "ibnetdiscover cache")
	fl.BoolVarP(&f.heuristic, "heuristic", "e", false, "turn on heuristic(s) to look at switch balances deeper")
	return c
}

// checkLFTUsage is the script's usage text, which it prints on stdout.
const checkLFTUsage = `Usage: check_lft_balance -l lft-output -i ibnetdiscover-cache [-e] [-v]
  Generate lft-output via "dump_lfts.sh > lft-output"
  Generate ibnetdiscover-cache via "ibnetdiscover --cache ibnetdiscover-cache"
  -e turn on heuristic(s) to look at switch balances deeper
  -v verbose output, output all switches
`

// checkLFTFailed is the script's exit 2 after its usage text.
type checkLFTFailed struct{ msg string }

func (e *checkLFTFailed) Error() string { return e.msg }
func (e *checkLFTFailed) ExitCode() int { return 2 }

func runCheckLFTBalance(e *Env, f *checkLFTFlags) error {
	for _, m := range []struct{ v, msg string }{{f.lftFile, "Must specify dump lfts file"}, {f.cacheFile, "Must specify ibnetdiscover cache"}} {
		if m.v == "" {
			if !e.JSON {
				fmt.Fprint(e.Stdout, checkLFTUsage)
			}
			return &checkLFTFailed{m.msg}
		}
	}
	// The script's -v (output all switches) is ibtool's global -v.
	b := &lftBalance{verbose: e.Verbose > 0, heuristic: f.heuristic}
	// Where the script's iblinkinfo --load-cache shows no ports of a cache
	// it cannot load, and the script reads no lines of a dump it cannot
	// open, both are errors: the verdict would be drawn from nothing.
	sn, _, err := subnet.ReadFile(f.cacheFile)
	if err != nil {
		return fmt.Errorf("ibnetdiscover cache: %w", err)
	}
	b.sn = sn
	fh, err := os.Open(f.lftFile)
	if err != nil {
		return fmt.Errorf("Couldn't open dump lfts file: %s: %v", f.lftFile, unwrapPathError(err))
	}
	defer fh.Close()
	if err := b.read(fh, f.lftFile); err != nil {
		return err
	}
	if e.JSON {
		if b.res.Switches == nil {
			b.res.Switches = []LFTBalanceSwitch{}
		}
		return e.writeJSON("check_lft_balance", &b.res)
	}
	_, err = io.WriteString(e.Stdout, b.out.String())
	return err
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

var (
	lftSwitchDR   = regexp.MustCompile(`Unicast lids .+ of switch DR path slid .+ guid (.+) \((.+)\)`)
	lftSwitchLID  = regexp.MustCompile(`Unicast lids .+ of switch Lid .+ guid (.+) \((.+)\)`)
	lftHostLine   = regexp.MustCompile(`.+ (.+) : \(.+ portguid .+: '(.+)'\)`)
	lftPathLine   = regexp.MustCompile(`.+ (.+) : \(path #. out of .: portguid .+\)`)
	perlNumPrefix = regexp.MustCompile(`^\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)`)
)

// lftBalance is the script's state as it reads the dump line by line.
type lftBalance struct {
	sn                 *subnet.Subnet
	verbose, heuristic bool
	res                LFTBalanceResult
	out                strings.Builder

	haveSwitch         bool
	guid, name         string
	count              map[string]int
	maybeHosts         []string
	host               string
	hostPorts          []string
	lidsPerPort        int
	lidsPerPortCounted int
	// Perl's $1 and $2 keep the last successful match.
	m1, m2 string
}

// maxLFTLine bounds one line of a dump: a table line is under 200 bytes,
// even with a 64-byte description or a long name from a node name map.
const maxLFTLine = 64 << 10

// The lines of dump_lfts output (ibroute's unicast tables, then
// dump_lfts.sh's notice): check_lft_balance reads nothing else.
var (
	lftHeader   = regexp.MustCompile(`^Unicast lids \[0x[0-9a-fA-F]+-0x[0-9a-fA-F]+\] of switch `)
	lftEntry    = regexp.MustCompile(`^0x[0-9a-fA-F]{4} [0-9]{3} (: \(.*\))?$`)
	lftCount    = regexp.MustCompile(`^[0-9]+ (valid )?lids dumped $`)
	lftHeadings = map[string]bool{"  Lid  Out   Destination": true, "       Port     Info ": true}
	lftNotice   = "*** WARNING ***: this command has been replaced by dump_fts"
)

// lftLineError is a line of the dump that is not dump_lfts output.
type lftLineError struct {
	file string
	line int
	text string
	msg  string
}

func (e *lftLineError) Error() string {
	if e.text == "" {
		return fmt.Sprintf("dump lfts file %s: line %d: %s", e.file, e.line, e.msg)
	}
	if len(e.text) > 80 {
		e.text = e.text[:80] + "..."
	}
	return fmt.Sprintf("dump lfts file %s: line %d: %s: %q", e.file, e.line, e.msg, e.text)
}

// checkLFTLine says why a line is not one of dump_lfts output, "" when it
// is; tables tells whether a table header came before.
func checkLFTLine(line string, tables bool) string {
	switch {
	case strings.TrimSpace(line) == "", lftHeadings[line], lftCount.MatchString(line), line == lftNotice:
		return ""
	case strings.HasPrefix(line, "Unicast lids "):
		if !lftHeader.MatchString(line) || (!lftSwitchDR.MatchString(line) && !lftSwitchLID.MatchString(line)) {
			return "a table header that names no switch (\"Unicast lids [...] of switch ... guid ... (...):\")"
		}
		return ""
	case strings.HasPrefix(line, "Multicast mlids "):
		return "a multicast table: check_lft_balance reads the unicast tables of dump_lfts, not dump_mfts"
	case lftEntry.MatchString(line):
		if !tables {
			return "a table entry before the first \"Unicast lids\" header"
		}
		return ""
	}
	return "not a line of dump_lfts output"
}

// read streams the dump through the script's loop, line by line, each
// checked first: a line that dump_lfts does not print, one longer than
// maxLFTLine or a dump with no table is an error with its line number.
func (b *lftBalance) read(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLFTLine)
	n, tables := 0, false
	b.count = map[string]int{}
	for sc.Scan() {
		n++
		line := sc.Text()
		if msg := checkLFTLine(line, tables); msg != "" {
			return &lftLineError{file: name, line: n, text: line, msg: msg}
		}
		tables = tables || strings.HasPrefix(line, "Unicast lids ")
		b.line(line)
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return &lftLineError{file: name, line: n + 1, msg: fmt.Sprintf("longer than %d bytes: not dump_lfts output", maxLFTLine)}
	case err != nil:
		return fmt.Errorf("dump lfts file %s: after line %d: %w", name, n, err)
	case !tables:
		return &lftLineError{file: name, line: n, msg: "no \"Unicast lids\" table: not dump_lfts output"}
	}
	b.finish()
	return nil
}

// line is one turn of the script's loop over the dump.
func (b *lftBalance) line(line string) {
	switch {
	case strings.Contains(line, "Unicast"):
		if len(b.hostPorts) > 0 {
			b.processHostPorts()
		}
		if b.haveSwitch {
			b.outputSwitch()
		}
		for _, re := range []*regexp.Regexp{lftSwitchDR, lftSwitchLID} {
			if m := re.FindStringSubmatch(line); m != nil {
				b.guid, b.name, b.haveSwitch = m[1], m[2], true
				b.m1, b.m2 = m[1], m[2]
			}
		}
		b.maybeHosts, b.hostPorts = nil, nil
		b.count = map[string]int{}
		b.lidsPerPort, b.lidsPerPortCounted = 0, 0
	case strings.Contains(line, "Channel") || strings.Contains(line, "Router"):
		if m := lftHostLine.FindStringSubmatch(line); m != nil {
			b.m1, b.m2 = m[1], m[2]
		}
		b.host = b.m2
		b.count[b.m1]++
		if len(b.hostPorts) > 0 {
			b.processHostPorts()
		}
		b.hostPorts = []string{b.m1}
		if b.lidsPerPort == 0 {
			b.lidsPerPort++
		} else {
			b.lidsPerPortCounted++
		}
	case strings.Contains(line, "path"):
		if m := lftPathLine.FindStringSubmatch(line); m != nil {
			b.m1 = m[1]
		}
		b.count[b.m1]++
		if b.lidsPerPortCounted == 0 {
			b.lidsPerPort++
		}
		b.hostPorts = append(b.hostPorts, b.m1)
	default:
		if b.lidsPerPort != 0 {
			b.lidsPerPortCounted++
		}
	}
}

// finish is what the script does after its loop.
func (b *lftBalance) finish() {
	if len(b.hostPorts) > 0 {
		b.processHostPorts()
	}
	b.outputSwitch()
}

// processHostPorts: a host whose LIDs all leave by one port may hang off
// this switch directly.
func (b *lftBalance) processHostPorts() {
	if len(b.hostPorts) != b.lidsPerPort {
		return
	}
	for _, p := range b.hostPorts {
		if perlNum(p) != perlNum(b.hostPorts[0]) {
			return
		}
	}
	b.maybeHosts = append(b.maybeHosts, b.host)
}

// perlNum is Perl's numeric value of a string: its leading number, else 0.
func perlNum(s string) float64 {
	m := perlNumPrefix.FindString(s)
	v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(m, "+")), 64)
	return v
}

// switchPort is what iblinkinfo --load-cache -S shows of a switch port.
type switchPort struct {
	exists, down, active bool
	remoteDesc           string
	hasRemote            bool
}

func (b *lftBalance) port(num int) switchPort {
	if b.sn == nil || !b.haveSwitch {
		return switchPort{}
	}
	g, err := iba.ParseGUID(b.guid)
	if err != nil {
		return switchPort{}
	}
	n := b.sn.Node(g)
	if n == nil || n.Type != iba.NodeTypeSwitch {
		return switchPort{}
	}
	p := n.Port(num)
	if p == nil || num < 1 {
		return switchPort{}
	}
	st := p.PortInfo().PortState
	sp := switchPort{exists: true, down: st == iba.PortStateDown, active: st == iba.PortStateActive}
	if p.Remote != nil {
		sp.hasRemote, sp.remoteDesc = true, p.Remote.Node.Description()
	}
	return sp
}

func (b *lftBalance) directlyConnected(port string, num int) bool {
	if b.count[port] != b.lidsPerPort || len(b.maybeHosts) == 0 {
		return false
	}
	sp := b.port(num)
	if !sp.exists || !sp.active {
		return false
	}
	// Without a peer the script's pattern fails and $1 is still the port
	// number it matched last.
	name := strconv.Itoa(num)
	if sp.hasRemote {
		name = sp.remoteDesc
	}
	for _, h := range b.maybeHosts {
		if perlNum(name) == perlNum(h) {
			return true
		}
	}
	return false
}

func (b *lftBalance) outputSwitch() {
	minU, maxU := 999999, 0
	var outPorts []string
	onSwitch := 0
	for num := 1; num <= 36; num++ {
		port := fmt.Sprintf("%03d", num)
		c := b.count[port]
		if c == 0 {
			if sp := b.port(num); !sp.exists || sp.down {
				continue
			}
		}
		onSwitch++
		if b.directlyConnected(port, num) {
			continue
		}
		outPorts = append(outPorts, port)
		minU, maxU = min(minU, c), max(maxU, c)
	}
	unbalanced := maxU > minU+1
	if b.heuristic && unbalanced && onSwitch > 12 {
		// A line board: about half the ports balanced is balanced.
		var check []string
		for _, p := range outPorts {
			if c := b.count[p]; c != maxU && c != maxU-1 && c != 0 {
				check = append(check, p)
			}
		}
		if h := onSwitch / 2; len(check) == h || len(check) == h+1 || len(check) == h-1 {
			min2, max2 := 999999, 0
			for _, p := range check {
				min2, max2 = min(min2, b.count[p]), max(max2, b.count[p])
			}
			if !(max2 > min2+1) {
				unbalanced = false
			}
		}
	}
	if b.heuristic && unbalanced && onSwitch > 12 {
		// A switch not fully populated: the other ports all unused.
		allZero := true
		for _, p := range outPorts {
			if c := b.count[p]; c != maxU && c != maxU-1 && c != 0 {
				allZero = false
				break
			}
		}
		if allZero {
			unbalanced = false
		}
	}
	sw := LFTBalanceSwitch{GUID: b.guid, Name: b.name, Unbalanced: unbalanced, Ports: []LFTPortUsage{}}
	for _, p := range outPorts {
		sw.Ports = append(sw.Ports, LFTPortUsage{Port: p, LIDs: b.count[p]})
	}
	b.res.Switches = append(b.res.Switches, sw)
	if !b.verbose && !unbalanced {
		return
	}
	if unbalanced {
		fmt.Fprintf(&b.out, "Unbalanced Switch Port Usage: %s, %s\n", b.name, b.guid)
	} else {
		fmt.Fprintf(&b.out, "Switch Port Usage: %s, %s\n", b.name, b.guid)
	}
	for _, p := range sw.Ports {
		fmt.Fprintf(&b.out, "Port %s: %d\n", p.Port, p.LIDs)
	}
}
