package testbed

import (
	"regexp"
	"strings"
)

// What infiniband-diags 56 prints differently from 44 for the same
// command on the same fabric: the table "infiniband-diags 44 and 56" of
// docs/ibtool.md, of which this file is the tests' copy. ibtool prints
// what 56, the newest release, prints; a comparison with 44 passes the C
// tool's output through Normalise first, which forgives these differences
// and nothing else. What 56.1 gets wrong, ibtool does as 44 does, and
// Broken names those command lines so that a comparison with 56 leaves
// them out.

// Normalise turns what a C tool of release r printed on stdout for argv
// into what infiniband-diags 56 prints for the same run. For 56 it changes nothing;
// a nil Release is Bookworm, as everywhere in this package.
//
//   - PortInfo as smpquery portinfo and saquery's PortInfoRecord print it
//     (ibdiag_common.c dump_portinfo) gains three lines in 56, the XDR
//     fields LinkSpeedExtActive2, LinkSpeedExtSupported2 and
//     LinkSpeedExtEnabled2, after LinkSpeedExtEnabled. 44 does not read
//     them; Normalise adds them as 56 prints them when they are zero, as
//     every port of ibsim and every port without XDR has them.
//
// Where ibtool departs from both releases on purpose (docs/ibtool.md,
// "Deliberate differences"), the tests of that command say so, not this.
func (r *Release) Normalise(argv []string, stdout string) string {
	r = release(r)
	if r.Diags != "44" || len(argv) == 0 {
		return stdout
	}
	switch argv[0] {
	case "smpquery", "saquery":
		stdout = xdrLines44.ReplaceAllStringFunc(stdout, addXDRLines)
	}
	return stdout
}

// xdrLines44 is the last line of a PortInfo dump of diags 44: the
// LinkSpeedExtEnabled line, with its indentation and its label padded
// with dots to the value's column.
var xdrLines44 = regexp.MustCompile(`(?m)^(\t*)(LinkSpeedExtEnabled:\.+)[^\n]*\n`)

// addXDRLines appends to a LinkSpeedExtEnabled line the three lines that
// 56 prints after it for a port whose XDR fields are zero, aligned as
// libibmad aligns its fields.
func addXDRLines(line string) string {
	m := xdrLines44.FindStringSubmatch(line)
	indent, col := m[1], len(m[2])
	var b strings.Builder
	b.WriteString(line)
	for _, f := range [][2]string{
		{"LinkSpeedExtActive2", "No Extended Speed 2"},
		{"LinkSpeedExtSupported2", "0"},
		{"LinkSpeedExtEnabled2", "0"},
	} {
		label := f[0] + ":"
		b.WriteString(indent + label + strings.Repeat(".", max(col-len(label), 0)) + f[1] + "\n")
	}
	return b.String()
}

// Broken says why a C tool of release r cannot be compared on argv, or ""
// when it can: 56.1 has bugs that 44 does not, and ibtool does what 44
// does there. Such a command line crashes under libumad2sim and leaves
// its simulator client slot taken, so a comparison does not run it at all.
//
//   - ibtracert -m (--mlid): 56.1 frees the nodes it has just linked into
//     its search (rdma-core 46's "ibtracert: Fix memory leak") and crashes
//     or finds no route.
//   - ibqueryerrors -D (--Direct): 56.1 reads NodeInfo on the GSI port,
//     where it registered no SMP agent (rdma-core 56's SMI/GSI separation;
//     fixed after 56.1); libumad2sim crashes on the send.
func (r *Release) Broken(argv []string) string {
	r = release(r)
	if r.Diags != "56" || len(argv) == 0 {
		return ""
	}
	has := func(flags ...string) bool {
		for _, a := range argv[1:] {
			for _, f := range flags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return true
				}
			}
		}
		return false
	}
	switch {
	case argv[0] == "ibtracert" && has("-m", "--mlid"):
		return "ibtracert -m of infiniband-diags 56.1 uses freed nodes"
	case argv[0] == "ibqueryerrors" && has("-D", "--Direct"):
		return "ibqueryerrors -D of infiniband-diags 56.1 sends SMPs on its GSI port"
	}
	return ""
}
