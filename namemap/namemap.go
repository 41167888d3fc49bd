// Package namemap reads node name maps, the files infiniband-diags and
// OpenSM use to give nodes names of the administrator's choosing
// (--node-name-map; rdma-core util/node_name_map.c): one node GUID and its
// name per line, the name optionally quoted, # comments. Every command
// that prints a node prints Map.Name: the map's name for the node, else
// its NodeDescription cleaned for printing (Clean).
//
// See ExampleParse.
package namemap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/textfile"
)

// DefaultPath is where the C tools look for a map when none is named.
const DefaultPath = "/etc/rdma/ib-node-name-map"

// Bounds of what Parse reads: a map of every node of the largest fabric is
// a few megabytes.
const (
	MaxFile = 256 << 20
	MaxLine = 64 << 10
)

// ErrSyntax matches every SyntaxError.
var ErrSyntax = errors.New("invalid node name map")

// SyntaxError is a line of a map that is not a GUID and a name, or a map
// that goes past Parse's bounds.
type SyntaxError struct {
	File   string
	Line   int // 1-based; 0 for the file as a whole
	Text   string
	Reason string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("node name map %s: %s", e.File, e.Reason)
	case e.Text == "":
		return fmt.Sprintf("node name map %s, line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("node name map %s, line %d: %s: %q", e.File, e.Line, e.Reason, e.Text)
}

// Is matches ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// A Map names nodes by their node GUID. The nil *Map is an empty one.
type Map struct {
	names map[iba.GUID]string
}

// Parse reads a map from r (name is the file's name for messages). Each
// line is blank, a # comment, or a GUID (C notation: 0x hex, decimal)
// followed by its name; the name is the first run of text between quotes
// and # marks after it, as the C parser takes it. A line with a GUID and
// no name names nothing; the first line of a GUID wins. Anything else, a
// line longer than MaxLine or a file longer than MaxFile is an error.
func Parse(r io.Reader, name string) (*Map, error) {
	m := &Map{names: map[iba.GUID]string{}}
	err := textfile.Read(r, MaxFile, MaxLine, func(n int, line string) error {
		t := strings.TrimLeft(line, " \t\v\f\r")
		if t == "" || t[0] == '#' {
			return nil
		}
		end := strings.IndexAny(t, " \t#")
		if end < 0 {
			end = len(t)
		}
		g, err := strconv.ParseUint(t[:end], 0, 64)
		if err != nil {
			return &SyntaxError{File: name, Line: n, Text: line, Reason: "not a GUID of at most 64 bits and a name"}
		}
		rest := strings.TrimLeft(t[end:], " \t\v\f\r")
		// strtok(p, "\"#"): the first run of text between quotes and
		// comment marks.
		nm := strings.TrimLeft(rest, "\"#")
		if i := strings.IndexAny(nm, "\"#"); i >= 0 {
			nm = nm[:i]
		}
		if nm == "" {
			return nil
		}
		if _, dup := m.names[iba.GUID(g)]; !dup {
			m.names[iba.GUID(g)] = nm
		}
		return nil
	}, func(l int, reason string) error { return &SyntaxError{File: name, Line: l, Reason: reason} })
	switch {
	case errors.Is(err, ErrSyntax):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("reading node name map %s: %w", name, err)
	}
	return m, nil
}

// Load reads the map at path. With path "" it reads DefaultPath when that
// file exists and gives an empty map when it does not, as the C tools do.
func Load(path string) (*Map, error) {
	if path == "" {
		if _, err := os.Stat(DefaultPath); err != nil {
			return &Map{}, nil
		}
		path = DefaultPath
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening node name map: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &SyntaxError{File: path, Reason: "is a directory"}
	}
	return Parse(f, path)
}

// Lookup is the map's name for a node GUID.
func (m *Map) Lookup(g iba.GUID) (string, bool) {
	if m == nil {
		return "", false
	}
	s, ok := m.names[g]
	return s, ok
}

// GUIDs are the node GUIDs the map gives name, in increasing order: the
// reverse lookup, for a target given by its name.
func (m *Map) GUIDs(name string) []iba.GUID {
	if m == nil {
		return nil
	}
	var gs []iba.GUID
	for g, n := range m.names {
		if n == name {
			gs = append(gs, g)
		}
	}
	slices.Sort(gs)
	return gs
}

// Len is the number of nodes the map names.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.names)
}

// Name is remap_node_name: the map's name for the node, else its
// description as given.
func (m *Map) Name(g iba.GUID, desc string) string {
	if s, ok := m.Lookup(g); ok {
		return s
	}
	return desc
}

// NameBytes is Name with a NodeDescription as the 64 bytes of its
// attribute, cleaned (Clean) when the map has no name.
func (m *Map) NameBytes(g iba.GUID, desc []byte) string {
	if s, ok := m.Lookup(g); ok {
		return s
	}
	return Clean(desc)
}

// Clean is clean_nodedesc: a NodeDescription's text up to its first NUL,
// every byte that is not printable ASCII made a blank.
func Clean(b []byte) string {
	end := len(b)
	for i, c := range b {
		if c == 0 {
			end = i
			break
		}
	}
	var out []byte
	for i, c := range b[:end] {
		if c < 0x20 || c > 0x7e {
			if out == nil {
				out = append([]byte(nil), b[:end]...)
			}
			out[i] = ' '
		}
	}
	if out == nil {
		return string(b[:end])
	}
	return string(out)
}
