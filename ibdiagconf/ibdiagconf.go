// Package ibdiagconf reads infiniband-diags' site configuration, ibdiag.conf:
// the defaults every diag takes before its command line (rdma-core
// infiniband-diags/ibdiag_common.c, read_ibdiag_config). ibtool reads it
// as the C tools do, from DefaultPath or the file -z/--config names, and a
// value given on the command line wins over the file's.
//
// The file is KEY=VALUE lines, blank lines and # comments. The keys are the
// C tools': CA (the local device), Port (its port number), timeout (MAD
// timeout in milliseconds), MLX_EPI (whether discovery asks Mellanox
// devices for MlnxExtPortInfo), m_key (the M_Key of SMPs, IBA 14.2.4),
// sa_key (the SM_Key of SA queries, IBA 15.2.1.1) and nd_format, which
// infiniband-diags reads and uses nowhere. Parse is stricter than the C
// reader, which takes any key that starts with a known one, ignores what
// it cannot read and crashes on a key with no '=': a line that is not
// KEY=VALUE, or a value that is not of its key's kind, is an error naming
// the line; a key the diags do not read is kept in Config.Unknown for the
// caller to warn about.
//
// See ExampleParse.
package ibdiagconf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/internal/textfile"
)

// DefaultPath is the file the C tools read when -z names none.
const DefaultPath = "/etc/infiniband-diags/ibdiag.conf"

// Bounds of what Parse reads: the C reader's lines are at most 1023 bytes,
// and the file has seven keys.
const (
	MaxFile = 1 << 20
	MaxLine = 4096
)

// ErrSyntax matches every SyntaxError.
var ErrSyntax = errors.New("invalid ibdiag.conf")

// SyntaxError is a line of the file that cannot be read, or a file past
// Parse's bounds.
type SyntaxError struct {
	File   string
	Line   int // 1-based; 0 for the file as a whole
	Text   string
	Reason string
}

func (e *SyntaxError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("site configuration %s: %s", e.File, e.Reason)
	case e.Text == "":
		return fmt.Sprintf("site configuration %s, line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("site configuration %s, line %d: %s: %q", e.File, e.Line, e.Reason, e.Text)
}

// Is matches ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Config is what a file sets; a nil field is a key the file does not set.
// When a key appears twice the last line wins, as in the C reader.
type Config struct {
	// CA is the local device (-C).
	CA *string
	// Port is the local port number (-P).
	Port *int
	// Timeout is the MAD timeout in milliseconds (-t); 0 keeps the tools'
	// default.
	Timeout *int
	// MlxEPI says whether discovery reads the MlnxExtPortInfo of Mellanox
	// devices (libibnetdisc's IBND_CONFIG_MLX_EPI; true by default).
	MlxEPI *bool
	// MKey is the M_Key of every SMP (-y).
	MKey *uint64
	// SAKey is the SM_Key of every SA query (saquery --smkey).
	SAKey *uint64
	// NDFormat is read and kept; infiniband-diags uses it nowhere.
	NDFormat *string
	// Unknown are the lines with a key the diags do not read.
	Unknown []Setting
}

// Setting is one KEY=VALUE line.
type Setting struct {
	Line       int
	Key, Value string
}

// Parse reads a configuration from r; name is the file's name for
// messages.
func Parse(r io.Reader, name string) (*Config, error) {
	c := &Config{}
	err := textfile.Read(r, MaxFile, MaxLine, func(n int, line string) error { return c.line(line, n, name) },
		func(l int, reason string) error { return &SyntaxError{File: name, Line: l, Reason: reason} })
	switch {
	case errors.Is(err, ErrSyntax):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("reading site configuration %s: %w", name, err)
	}
	return c, nil
}

// ReadFile reads the file at path. A file that does not exist gives an
// error matching fs.ErrNotExist, which a caller reading DefaultPath
// ignores, as the C tools do.
func ReadFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("site configuration: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &SyntaxError{File: path, Reason: "is a directory"}
	}
	return Parse(f, path)
}

// line reads line n into c.
func (c *Config) line(text string, n int, name string) error {
	t := strings.TrimSpace(text)
	if t == "" || t[0] == '#' {
		return nil
	}
	bad := func(format string, args ...any) error {
		return &SyntaxError{File: name, Line: n, Text: text, Reason: fmt.Sprintf(format, args...)}
	}
	key, val, ok := strings.Cut(t, "=")
	if !ok {
		return bad("want KEY=VALUE")
	}
	key = strings.TrimSpace(key)
	// A comment after the value, as the C reader's strtoul leaves one
	// behind a number.
	if i := strings.Index(val, "#"); i >= 0 && (i == 0 || val[i-1] == ' ' || val[i-1] == '\t') {
		val = val[:i]
	}
	val = strings.TrimSpace(val)
	if key == "" {
		return bad("no key before '='")
	}
	if val == "" {
		return bad("%s has no value", key)
	}
	num := func(bits int) (uint64, error) {
		v, err := strconv.ParseUint(val, 0, bits)
		if err != nil {
			return 0, bad("%s: %q is not a number of at most %d bits", key, val, bits)
		}
		return v, nil
	}
	switch key {
	case "CA":
		if strings.ContainsAny(val, " \t") {
			return bad("CA: a device name has no blanks")
		}
		c.CA = &val
	case "Port":
		v, err := num(8)
		if err != nil {
			return err
		}
		p := int(v)
		c.Port = &p
	case "timeout":
		v, err := num(31)
		if err != nil {
			return err
		}
		ms := int(v)
		c.Timeout = &ms
	case "MLX_EPI":
		var b bool
		switch strings.ToLower(val) {
		case "true", "yes", "1":
			b = true
		case "false", "no", "0":
		default:
			return bad("MLX_EPI: want true or false")
		}
		c.MlxEPI = &b
	case "m_key":
		v, err := num(64)
		if err != nil {
			return err
		}
		c.MKey = &v
	case "sa_key":
		v, err := num(64)
		if err != nil {
			return err
		}
		c.SAKey = &v
	case "nd_format":
		c.NDFormat = &val
	default:
		c.Unknown = append(c.Unknown, Setting{Line: n, Key: key, Value: val})
	}
	return nil
}
