// Package uapi reads the enums of a kernel uapi C header such as
// include/uapi/rdma/rdma_netlink.h: names, values (implicit increments,
// literals, shifts and references to earlier names) and the type comment
// that follows each enumerator. It understands exactly the C subset those
// headers use and reports anything else as an error rather than guessing.
package uapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Enumerator is one name of an enum.
type Enumerator struct {
	Name    string
	Value   int64
	Comment string // the trailing /* ... */ on the same line, trimmed
}

// Header holds the enums of one header.
type Header struct {
	Enums     map[string][]Enumerator // named enums, by tag
	Anonymous [][]Enumerator          // unnamed enums in file order
}

var (
	enumStart = regexp.MustCompile(`^enum\s*([A-Za-z_][A-Za-z0-9_]*)?\s*\{`)
	entryRe   = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*([^,/]+?))?\s*,?\s*(?:/\*\s*(.*?)\s*\*/)?\s*$`)
)

// Parse extracts every enum of src.
func Parse(src []byte) (*Header, error) {
	h := &Header{Enums: map[string][]Enumerator{}}
	lines := strings.Split(string(src), "\n")
	known := map[string]int64{}
	inComment := false
	for i := 0; i < len(lines); i++ {
		m := enumStart.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		tag := m[1]
		var vals []Enumerator
		next := int64(0)
		closed := false
		for i++; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			if inComment {
				if j := strings.Index(line, "*/"); j >= 0 {
					inComment = false
					line = strings.TrimSpace(line[j+2:])
				} else {
					continue
				}
			}
			if line == "" {
				continue
			}
			if strings.HasPrefix(line, "}") {
				closed = true
				break
			}
			if strings.HasPrefix(line, "/*") {
				if !strings.Contains(line, "*/") {
					inComment = true
				}
				continue
			}
			if strings.HasPrefix(line, "//") {
				continue
			}
			if j := strings.Index(line, "/*"); j >= 0 && !strings.Contains(line[j:], "*/") {
				// A comment that runs on to the next lines: keep the enumerator.
				inComment = true
				line = strings.TrimSpace(line[:j])
			}
			e := entryRe.FindStringSubmatch(line)
			if e == nil {
				return nil, fmt.Errorf("line %d: cannot read enumerator %q", i+1, line)
			}
			v := next
			if e[2] != "" {
				var err error
				v, err = eval(strings.TrimSpace(e[2]), known)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", i+1, err)
				}
			}
			known[e[1]] = v
			vals = append(vals, Enumerator{Name: e[1], Value: v, Comment: e[3]})
			next = v + 1
		}
		if !closed {
			return nil, fmt.Errorf("enum %q is not closed", tag)
		}
		if tag == "" {
			h.Anonymous = append(h.Anonymous, vals)
		} else {
			h.Enums[tag] = vals
		}
	}
	return h, nil
}

// eval handles the value forms the uapi headers use: N, 0xN, (1 << N), A << N and NAME.
func eval(expr string, known map[string]int64) (int64, error) {
	expr = strings.TrimSpace(strings.Trim(expr, "()"))
	if l, r, ok := strings.Cut(expr, "<<"); ok {
		a, err := eval(l, known)
		if err != nil {
			return 0, err
		}
		b, err := eval(r, known)
		if err != nil {
			return 0, err
		}
		if b < 0 || b > 62 {
			return 0, fmt.Errorf("shift %d out of range", b)
		}
		return a << b, nil
	}
	if v, err := strconv.ParseInt(expr, 0, 64); err == nil {
		return v, nil
	}
	if v, ok := known[expr]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("cannot evaluate %q", expr)
}
