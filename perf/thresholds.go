package perf

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/internal/textfile"
)

// Thresholds are limits on counters: a port whose counter is above its
// limit has errors. The file format is infiniband-diags' error_thresholds
// (ibqueryerrors --threshold-file) and python-rdma's threshold file (the
// ibcheck commands, ibswportwatch), which are the same: NAME=VALUE lines,
// # comments and blank lines, names as IBA, python-rdma or perfquery spell
// them (ParseCounter), values in C notation (decimal, 0x hex, 0 octal).
// A data counter's limit is a rate (ibswportwatch); the error checks look
// at the error counters only.
type Thresholds struct {
	limits [NumCounters]uint64
	set    uint32
	order  []Counter
}

// Set gives counter k the limit v.
func (t *Thresholds) Set(k Counter, v uint64) {
	if t.set&(1<<k) == 0 {
		t.order = append(t.order, k)
	}
	t.limits[k] = v
	t.set |= 1 << k
}

// Get is counter k's limit and whether it has one.
func (t *Thresholds) Get(k Counter) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	return t.limits[k], t.set&(1<<k) != 0
}

// Limit is counter k's limit, 0 when it has none (any count is an error).
func (t *Thresholds) Limit(k Counter) uint64 {
	v, _ := t.Get(k)
	return v
}

// Counters are the counters with a limit, in the order they were set.
func (t *Thresholds) Counters() []Counter {
	if t == nil {
		return nil
	}
	return append([]Counter(nil), t.order...)
}

// Exceeds says whether v is above counter k's limit (0 without one).
func (t *Thresholds) Exceeds(k Counter, v uint64) bool { return v > t.Limit(k) }

// Exceeded are the error counters of c above their limits, in
// ErrorCounters' order.
func (t *Thresholds) Exceeded(c *Counters) []Counter {
	var out []Counter
	for _, k := range ErrorCounters {
		if v, ok := c.Get(k); ok && t.Exceeds(k, v) {
			out = append(out, k)
		}
	}
	return out
}

// MaxThresholdFile is the largest threshold file read: a real one is a few
// hundred bytes.
const MaxThresholdFile = 1 << 20

// ErrThresholds matches every ThresholdError.
var ErrThresholds = errors.New("invalid threshold file")

// ThresholdError is a threshold file that cannot be used, with the line
// that says why.
type ThresholdError struct {
	File   string
	Line   int // 1-based; 0 for the file as a whole
	Text   string
	Reason string
}

func (e *ThresholdError) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("threshold file %s: %s", e.File, e.Reason)
	case e.Text == "":
		return fmt.Sprintf("threshold file %s, line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("threshold file %s, line %d: %s: %q", e.File, e.Line, e.Reason, e.Text)
}

// Is matches ErrThresholds.
func (e *ThresholdError) Is(target error) bool { return target == ErrThresholds }

// ParseThresholds reads a threshold file from r (name is the file's name
// for messages). Every line must be a comment, blank, or NAME=VALUE with
// a counter's name and a value that fits 64 bits; the first that is not is
// an error naming it.
func ParseThresholds(r io.Reader, name string) (*Thresholds, error) {
	t := &Thresholds{}
	err := textfile.Read(r, MaxThresholdFile, 64<<10, func(n int, line string) error {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			return nil
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return &ThresholdError{File: name, Line: n, Text: line, Reason: "want NAME=VALUE"}
		}
		c, ok := ParseCounter(strings.TrimSpace(k))
		if !ok {
			return &ThresholdError{File: name, Line: n, Text: line, Reason: "not a counter of PortCounters or PortCountersExtended"}
		}
		val, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return &ThresholdError{File: name, Line: n, Text: line, Reason: "the value is not a number of at most 64 bits"}
		}
		t.Set(c, val)
		return nil
	}, func(l int, reason string) error { return &ThresholdError{File: name, Line: l, Reason: reason} })
	switch {
	case errors.Is(err, ErrThresholds):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("reading threshold file %s: %w", name, err)
	}
	return t, nil
}

// LoadThresholds reads the threshold file at path.
func LoadThresholds(path string) (*Thresholds, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading thresholds: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &ThresholdError{File: path, Reason: "is a directory"}
	}
	return ParseThresholds(f, path)
}
