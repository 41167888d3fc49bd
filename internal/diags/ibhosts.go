package diags

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// ibhosts, ibswitches, ibrouters and ibnodes are shell scripts in
// infiniband-diags (scripts/ibhosts.in etc.): they run ibnetdiscover, or
// cat a topology file, and reformat its node header lines with awk. These
// commands apply the same rules to the same text, so their output is the
// scripts' for any input, topology files of other origins included.

func init() {
	register(command{name: "ibhosts", make: func(e *Env) *cobra.Command { return newNodeLister(e, "ibhosts", "CA", listCA) }})
	register(command{name: "ibswitches", make: func(e *Env) *cobra.Command { return newNodeLister(e, "ibswitches", "switch", listSwitch) }})
	register(command{name: "ibrouters", make: func(e *Env) *cobra.Command { return newNodeLister(e, "ibrouters", "router", listRouter) }})
	register(command{name: "ibnodes", make: func(e *Env) *cobra.Command { return newNodeLister(e, "ibnodes", "CA and switch", listCA, listSwitch) }})
}

type listKind int

const (
	listCA listKind = iota
	listSwitch
	listRouter
)

func (k listKind) nodeType() iba.NodeType {
	return [...]iba.NodeType{listCA: iba.NodeTypeCA, listSwitch: iba.NodeTypeSwitch, listRouter: iba.NodeTypeRouter}[k]
}

func newNodeLister(e *Env, name, what string, kinds ...listKind) *cobra.Command {
	var df discoverFlags
	c := &cobra.Command{
		Use:   name + " [topology-file]",
		Short: "list the " + what + " nodes of the subnet",
		Long: name + ` lists the ` + what + ` nodes of the subnet, discovered or read from a
topology file, as infiniband-diags' ` + name + ` script does. The file may
also be a cache (ibnetdiscover --cache); a file that is neither is an error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var text []byte
			var s *subnet.Subnet
			var lost error
			if len(args) == 1 {
				var err error
				if text, s, err = readListFile(args[0]); err != nil {
					return err
				}
			} else {
				df.progressBar = true
				r, err := e.discover(&df, nil)
				if err != nil {
					return err
				}
				e.warnFailures(name, r)
				s, lost = r.s, r.lost()
				var b bytes.Buffer
				if err := s.WriteTopology(&b, subnet.TopologyOptions{}); err != nil {
					return err
				}
				text = b.Bytes()
			}
			if e.JSON {
				types := make([]iba.NodeType, len(kinds))
				for i, k := range kinds {
					types[i] = k.nodeType()
				}
				return incomplete(e.writeJSON(name, nodeLinesJSON(s, types...)), lost)
			}
			w := bufio.NewWriter(e.Stdout)
			for _, k := range kinds {
				if err := listNodeLines(w, text, k); err != nil {
					return err
				}
			}
			return incomplete(w.Flush(), lost)
		},
	}
	df.register(c, false)
	return c
}

// readListFile reads a subnet file as subnet.ReadFile does (within
// subnet.MaxFileSize, told by its first bytes, strict), so that a file
// that is not a subnet is an error where the scripts print nothing and
// exit 0. The text the scripts' awk programs read is the file itself
// when it is topology text, else the subnet written as such.
func readListFile(path string) ([]byte, *subnet.Subnet, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %w", path, err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > subnet.MaxFileSize {
		return nil, nil, fmt.Errorf("loading %s: %w", path, &subnet.SizeError{What: "subnet file", Size: st.Size(), Limit: subnet.MaxFileSize})
	}
	// The parser streams; the copy grows only as far as it reads.
	var text bytes.Buffer
	s, format, err := subnet.Read(io.TeeReader(fh, &text))
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if format == subnet.FormatTopology {
		return text.Bytes(), s, nil
	}
	text.Reset()
	if err := s.WriteTopology(&text, subnet.TopologyOptions{}); err != nil {
		return nil, nil, err
	}
	return text.Bytes(), s, nil
}

var (
	awkHash     = regexp.MustCompile(`#[ \t]*`)
	awkPort0    = regexp.MustCompile(`port 0.*`)
	awkBase     = regexp.MustCompile(`base port 0`)
	awkEnhanced = regexp.MustCompile(`enhanced port 0`)
)

// awkMatch is awk's match(): the 1-based start of re in s (0 if none)
// and RLENGTH (-1 if none).
func awkMatch(s string, re *regexp.Regexp) (int, int) {
	loc := re.FindStringIndex(s)
	if loc == nil {
		return 0, -1
	}
	return loc[0] + 1, loc[1] - loc[0]
}

// awkSubstr is awk's substr(s, m, n); n < 0 means to the end.
func awkSubstr(s string, m, n int) string {
	start, end := m, len(s)+1
	if n >= 0 {
		end = m + n
	}
	start = max(start, 1)
	end = min(end, len(s)+1)
	if end <= start {
		return ""
	}
	return s[start-1 : end-1]
}

// listNodeLines applies one script's awk program to the topology text.
func listNodeLines(w *bufio.Writer, text []byte, k listKind) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		field := func(i int) string {
			if i <= len(f) {
				return f[i-1]
			}
			return ""
		}
		guid := awkSubstr(field(3), 4, 16)
		afterHash := func(s string) string {
			i, l := awkMatch(s, awkHash)
			return awkSubstr(s, i+l, -1)
		}
		switch {
		case k == listCA && strings.HasPrefix(line, "Ca"), k == listRouter && strings.HasPrefix(line, "Rt"):
			fmt.Fprintf(w, "%s\t: 0x%s ports %s %s\n", field(1), guid, field(2), afterHash(line))
		case k == listSwitch && strings.HasPrefix(line, "Switch"):
			desc := afterHash(line)
			pi, _ := awkMatch(desc, awkPort0)
			pinfo := awkSubstr(desc, pi, -1)
			desc = awkSubstr(desc, 1, pi-2)
			typ := "base port 0"
			ti, _ := awkMatch(desc, awkBase)
			if ti == 0 {
				typ = "enhanced port 0"
				ti, _ = awkMatch(desc, awkEnhanced)
			}
			if ti != 0 {
				desc = awkSubstr(desc, 1, ti-2)
				fmt.Fprintf(w, "%s\t: 0x%s ports %s %s %s %s\n", field(1), guid, field(2), desc, typ, pinfo)
			} else {
				fmt.Fprintf(w, "%s\t: 0x%s ports %s %s %s\n", field(1), guid, field(2), desc, pinfo)
			}
		}
		if strings.HasPrefix(line, "ib") {
			fmt.Fprintln(w, line)
			continue
		}
		for _, m := range []string{"ibpanic:", "ibwarn:", "iberror:"} {
			if strings.Contains(line, m) {
				fmt.Fprintln(w, line)
			}
		}
	}
	return sc.Err()
}
