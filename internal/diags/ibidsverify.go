package diags

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibidsverify", aliases: []string{"ibidsverify.pl"}, make: newIBIDsVerify})
}

// IDsVerifyResult is ibidsverify's --json document: every problem found.
type IDsVerifyResult struct {
	Problems []string `json:"problems"`
	// Overlaps are LID ranges (base LID and 2^LMC, IBA 7.11.1) of
	// different end ports that overlap, which base LIDs alone miss.
	Overlaps []string `json:"lid_range_overlaps"`
}

// The infiniband-diags script reads `ibnetdiscover -g` text with these
// patterns (ibidsverify.pl); ours reads the same text, written from the
// discovered subnet, with the same patterns, so that it reports exactly
// what the script reports and in the same words.
var (
	idsCAGUID     = regexp.MustCompile(`^(?:caguid|rtguid)=(.*)`)
	idsSwitchGUID = regexp.MustCompile(`^switchguid=(.*)`)
	idsSwitchPort = regexp.MustCompile(`^switchguid=(.*)\((.*)\)`)
	idsSwitch     = regexp.MustCompile(`^Switch.*"S-(.*)"\s+# (.*) port.* lid (\d+) .*`)
	idsPeerS      = regexp.MustCompile(`"S-(.*)# lid (\d+) .*`)
	idsPeerH      = regexp.MustCompile(`^.*"H-(.*)# lid (\d+) .*`)
	idsPeerR      = regexp.MustCompile(`^.*"R-(.*)# lid (\d+) .*`)
	idsPortGUID   = regexp.MustCompile(`^\[(\d+)\]\((.*)\)`)
)

type idsRecord struct{ lid, guid string }

// idsVerify is ibidsverify.pl's main over the topology text.
type idsVerify struct {
	lids, nodeGUIDs, portGUIDs map[string]idsRecord
	out                        []string
	failed                     bool
}

func (v *idsVerify) printf(format string, a ...any) {
	v.out = append(v.out, fmt.Sprintf(format, a...))
}

// perlZero is Perl's `$x eq 0`: string equality with "0".
func perlZero(s string) bool { return s == "0" }

func (v *idsVerify) insertLID(lid, nodeGUID, nodeType string) {
	if perlZero(lid) {
		v.printf("LID 0 found for %s NodeGUID %s\n", nodeType, nodeGUID)
		v.failed = true
		return
	}
	if r, ok := v.lids[lid]; ok {
		v.printf("LID %s already defined for NodeGUID %s\n", lid, r.guid)
		v.failed = true
		return
	}
	v.lids[lid] = idsRecord{lid, nodeGUID}
}

func (v *idsVerify) insertNodeGUID(lid, nodeGUID, nodeType string) {
	if perlZero(nodeGUID) {
		v.printf("%s GUID 0x0 found with LID %s\n", nodeType, lid)
		v.failed = true
		return
	}
	if r, ok := v.nodeGUIDs[nodeGUID]; ok {
		v.printf("NodeGUID %s already defined for LID %s\n", nodeGUID, r.lid)
		v.failed = true
		return
	}
	v.nodeGUIDs[nodeGUID] = idsRecord{lid, nodeGUID}
}

func (v *idsVerify) insertPortGUID(lid, portGUID, nodeType, nodeGUID string) {
	if perlZero(portGUID) {
		v.printf("%s GUID 0x0 found with LID %s\n", nodeType, lid)
		v.failed = true
		return
	}
	if r, ok := v.portGUIDs[portGUID]; ok {
		v.printf("PortGUID %s already defined for LID %s\n", portGUID, r.lid)
		v.failed = true
		return
	}
	v.portGUIDs[portGUID] = idsRecord{lid, portGUID}
	if nodeGUID != portGUID {
		if _, ok := v.nodeGUIDs[portGUID]; ok {
			v.printf("PortGUID %s is an invalid duplicate of a NodeGUID\n", portGUID)
			v.failed = true
		}
	}
}

// maxIDsLine bounds a line of the topology text; its lines are under 300
// bytes.
const maxIDsLine = 64 << 10

// idsTextError is topology text the script's patterns cannot be trusted
// with.
type idsTextError struct {
	file string
	line int
	msg  string
}

func (e *idsTextError) Error() string {
	return fmt.Sprintf("ibnet topology %s: line %d: %s", e.file, e.line, e.msg)
}

// run reads the topology text from r, within subnet.MaxFileSize, through
// the script's patterns. The patterns skip what they do not match, so the
// text is checked for what would make them read nothing or garbage: a NUL
// byte (a cache or other binary file), a line over maxIDsLine, more than
// subnet.MaxFileSize bytes, no node line at all.
func (v *idsVerify) run(r io.Reader, name string) error {
	lr := &io.LimitedReader{R: r, N: subnet.MaxFileSize + 1}
	var nodeType, nodeGUID, portGUID, lid, firstPort string
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 4096), maxIDsLine)
	n, nodes := 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.IndexByte(line, 0) >= 0 {
			return &idsTextError{name, n, "binary data (a NUL byte): not ibnetdiscover's text; give a cache with --load-cache"}
		}
		if strings.HasPrefix(line, "Switch") || strings.HasPrefix(line, "Ca") || strings.HasPrefix(line, "Rt") {
			nodes++
		}
		if m := idsCAGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		}
		if m := idsSwitchGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID, nodeType = m[1], "", ""
		}
		if m := idsSwitchPort.FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID = m[1], "0x"+m[2]
		}
		if m := idsSwitch.FindStringSubmatch(line); m != nil {
			nodeType, firstPort, lid = "switch", "yes", m[3]
			v.insertLID(lid, nodeGUID, nodeType)
			v.insertNodeGUID(lid, nodeGUID, nodeType)
			if portGUID != "" {
				v.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
			}
		}
		if len(line) >= 2 && line[:2] == "Ca" {
			nodeType, firstPort = "ca", "yes"
		}
		if len(line) >= 2 && line[:2] == "Rt" {
			nodeType, firstPort = "router", "yes"
		}
		if nodeType == "ca" || nodeType == "router" {
			for _, re := range []*regexp.Regexp{idsPeerS, idsPeerH, idsPeerR} {
				if m := re.FindStringSubmatch(line); m != nil {
					lid = m[2]
					v.insertLID(lid, nodeGUID, nodeType)
					if firstPort == "yes" {
						v.insertNodeGUID(lid, nodeGUID, nodeType)
						firstPort = "no"
					}
				}
			}
			if m := idsPortGUID.FindStringSubmatch(line); m != nil {
				portGUID = "0x" + m[2]
				v.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
			}
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return &idsTextError{name, n + 1, fmt.Sprintf("longer than %d bytes: not ibnetdiscover's text", maxIDsLine)}
	case err != nil:
		return fmt.Errorf("ibnet topology %s: after line %d: %w", name, n, err)
	case lr.N <= 0:
		return fmt.Errorf("ibnet topology %s: %w", name, &subnet.SizeError{What: "topology text", Size: -1, Limit: subnet.MaxFileSize})
	case nodes == 0:
		return &idsTextError{name, n, "no node (Switch, Ca or Rt line): not ibnetdiscover's text"}
	}
	return nil
}

// lidOverlaps is python-rdma's LMC-aware check: every end port owns
// 2^LMC LIDs from its base (IBA 7.11.1); two ranges must not meet.
func lidOverlaps(s *subnet.Subnet) []string {
	type rng struct {
		lo, hi uint16
		p      *subnet.Port
	}
	var rs []rng
	for _, n := range s.Nodes() {
		for _, p := range n.Ports {
			if p == nil || !p.HasInfo || p.BaseLID == 0 || (n.Type == iba.NodeTypeSwitch && p.Num != 0) {
				continue
			}
			lo, hi := p.LIDs()
			rs = append(rs, rng{lo, hi, p})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	var out []string
	for i := 1; i < len(rs); i++ {
		a, b := rs[i-1], rs[i]
		if b.lo <= a.hi && a.lo != b.lo {
			out = append(out, fmt.Sprintf("LID range %d-%d of port %d of %v %q overlaps LID range %d-%d of port %d of %v %q",
				a.lo, a.hi, a.p.Num, a.p.Node.GUID, a.p.Node.Description(), b.lo, b.hi, b.p.Num, b.p.Node.GUID, b.p.Node.Description()))
		}
	}
	return out
}

func newIBIDsVerify(e *Env) *cobra.Command {
	var df discoverFlags
	var topoFile string
	c := &cobra.Command{
		Use:   "ibidsverify",
		Short: "check LIDs and GUIDs for zeros and duplicates (infiniband-diags ibidsverify)",
		Long: `ibidsverify discovers the subnet (or loads --load-cache) and reports LID 0,
duplicate LIDs, node GUIDs and port GUIDs, and port GUIDs that repeat a node
GUID, in the words of infiniband-diags' ibidsverify script; exit status 1
when it finds any. As python-rdma's, it also checks the LID ranges that LMC
gives end ports (IBA 7.11.1) for overlaps, which base LIDs alone miss.
-R (recalculate) is accepted: the subnet is discovered afresh unless
--cache names a file. python-rdma's --up and -N are accepted and change
nothing: the checks see the ports the topology lists, which are linked
(not Polling or Disabled), and the output has no colors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var text bytes.Buffer
			input, name := io.Reader(&text), "from the discovery"
			if topoFile != "" {
				name = topoFile
			}
			var overlaps []string
			var lost error
			if topoFile != "" {
				// The script's own input: a subnet with duplicate GUIDs
				// does not load into a database keyed by GUID.
				fh, err := os.Open(topoFile)
				if err != nil {
					return &exitError{fmt.Errorf("Failed to open ibnet topology: %w", err), 1}
				}
				defer fh.Close()
				input = fh
			} else {
				df.progressBar = true
				r, err := e.discover(&df, nil)
				if err != nil {
					var ue *UsageError
					if errors.As(err, &ue) {
						return err
					}
					return &exitError{err, 1}
				}
				e.warnFailures("ibidsverify", r)
				lost = r.lost()
				if err := r.s.WriteTopology(&text, subnet.TopologyOptions{Group: true}); err != nil {
					return err
				}
				overlaps = lidOverlaps(r.s)
			}
			v := &idsVerify{lids: map[string]idsRecord{}, nodeGUIDs: map[string]idsRecord{}, portGUIDs: map[string]idsRecord{}}
			if err := v.run(input, name); err != nil {
				return incomplete(&exitError{err, 1}, lost)
			}
			res := &IDsVerifyResult{Problems: []string{}, Overlaps: overlaps}
			for _, l := range v.out {
				res.Problems = append(res.Problems, l[:len(l)-1])
			}
			if res.Overlaps == nil {
				res.Overlaps = []string{}
			}
			if e.JSON {
				if err := e.writeJSON("ibidsverify", res); err != nil {
					return incomplete(err, lost)
				}
			} else {
				for _, l := range v.out {
					fmt.Fprint(e.Stdout, l)
				}
				for _, l := range res.Overlaps {
					fmt.Fprintln(e.Stdout, l)
				}
			}
			var failed error
			if v.failed || len(res.Overlaps) > 0 {
				failed = &exitError{errors.New(strconv.Itoa(len(res.Problems)+len(res.Overlaps)) + " problems found"), 1}
			}
			return incomplete(failed, lost)
		},
	}
	fl := c.Flags()
	fl.BoolP("recalculate", "R", false, "recalculate the ibnetdiscover information (done unless --cache names a file)")
	fl.Bool("up", false, "only check ports that are not Polling or Disabled (python-rdma; the checks see linked ports only)")
	fl.BoolP("nocolor", "N", false, "do not colorize the output (python-rdma; it has no colors)")
	fl.StringVar(&topoFile, "topology", "", "check this `ibnetdiscover -g` output (the script's cache file) instead of discovering")
	fl.StringVar(&df.loadCache, "load-cache", "", "load the subnet from this ibnetdiscover cache instead of discovering")
	df.register(c, false)
	return c
}
