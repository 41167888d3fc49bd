// Package textfile reads line-oriented text files within bounds: the
// readers of node name maps, threshold files and the site configuration
// share Lines and Read, so that each stops at the same kinds of limit and
// says where; the topology readers share ScanText, which stops a binary
// file at its first NUL byte.
package textfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// LimitError is a file that went past a bound of Lines: the whole file
// (Line 0) or one line.
type LimitError struct {
	Line  int // 1-based; 0 for the file as a whole
	Limit int64
}

func (e *LimitError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("larger than %d bytes", e.Limit)
	}
	return fmt.Sprintf("a line longer than %d bytes", e.Limit)
}

// Lines calls f with each line of r and its 1-based number, reading at most
// maxFile bytes, lines of at most maxLine. It returns f's first error; a
// *LimitError when r goes past a bound; or the read error.
func Lines(r io.Reader, maxFile int64, maxLine int, f func(n int, line string) error) error {
	lr := &io.LimitedReader{R: r, N: maxFile + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, min(maxLine, 4096)), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if lr.N <= 0 {
			break
		}
		if err := f(n, sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LimitError{Line: n + 1, Limit: int64(maxLine)}
		}
		return err
	}
	if lr.N <= 0 {
		return &LimitError{Limit: maxFile}
	}
	return nil
}

// Read is Lines for a reader with an error type of its own: a bound that r
// goes past becomes mk(line, reason), with line 0 for the file as a whole.
func Read(r io.Reader, maxFile int64, maxLine int, f func(n int, line string) error, mk func(line int, reason string) error) error {
	err := Lines(r, maxFile, maxLine, f)
	var le *LimitError
	if errors.As(err, &le) {
		return mk(le.Line, le.Error())
	}
	return err
}

// ErrBinary is what ScanText stops at: a NUL byte, which no text file has.
var ErrBinary = errors.New("binary data (a NUL byte)")

// ScanText is bufio.ScanLines that refuses binary data: a NUL byte in a
// line, or in what has been read of one, so that a binary file stops at
// once rather than at the line length limit.
func ScanText(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	look := tok
	if tok == nil {
		look = data
	}
	if bytes.IndexByte(look, 0) >= 0 {
		return 0, nil, ErrBinary
	}
	return adv, tok, err
}
