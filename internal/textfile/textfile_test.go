package textfile

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	var got []string
	err := Lines(strings.NewReader("a\n\nb c\nd"), 100, 10, func(n int, line string) error {
		got = append(got, line)
		if n != len(got) {
			t.Errorf("line %d numbered %d", len(got), n)
		}
		return nil
	})
	if err != nil || strings.Join(got, "|") != "a||b c|d" {
		t.Fatalf("%q, %v", got, err)
	}
	stop := errors.New("stop")
	if err := Lines(strings.NewReader("a\nb\n"), 100, 10, func(n int, _ string) error {
		if n == 2 {
			return stop
		}
		return nil
	}); err != stop {
		t.Errorf("f's error: %v", err)
	}
	var le *LimitError
	if err := Lines(strings.NewReader("ok\n"+strings.Repeat("x", 20)+"\n"), 100, 10, func(int, string) error { return nil }); !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("a long line: %v", err)
	}
	if err := Lines(strings.NewReader(strings.Repeat("x\n", 100)), 50, 10, func(int, string) error { return nil }); !errors.As(err, &le) || le.Line != 0 || le.Limit != 50 {
		t.Errorf("a large file: %v", err)
	}
}

type ownError struct {
	line   int
	reason string
}

func (e *ownError) Error() string { return e.reason }

func TestReadMakesTheCallersError(t *testing.T) {
	mk := func(l int, reason string) error { return &ownError{l, reason} }
	var oe *ownError
	err := Read(strings.NewReader("ok\n"+strings.Repeat("x", 20)+"\n"), 100, 10, func(int, string) error { return nil }, mk)
	if !errors.As(err, &oe) || oe.line != 2 || oe.reason != "a line longer than 10 bytes" {
		t.Errorf("a long line: %#v", err)
	}
	err = Read(strings.NewReader(strings.Repeat("x\n", 100)), 50, 10, func(int, string) error { return nil }, mk)
	if !errors.As(err, &oe) || oe.line != 0 || oe.reason != "larger than 50 bytes" {
		t.Errorf("a large file: %#v", err)
	}
	stop := errors.New("stop")
	if err := Read(strings.NewReader("a\n"), 100, 10, func(int, string) error { return stop }, mk); err != stop {
		t.Errorf("f's error: %v", err)
	}
}

func TestScanTextStopsAtNUL(t *testing.T) {
	sc := bufio.NewScanner(strings.NewReader("a\nb\n"))
	sc.Split(ScanText)
	var got []string
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	if sc.Err() != nil || strings.Join(got, "|") != "a|b" {
		t.Fatalf("text: %q, %v", got, sc.Err())
	}
	// A NUL in a line not yet ended stops the scan at once.
	sc = bufio.NewScanner(strings.NewReader("ok\nx\x00" + strings.Repeat("y", 1<<20)))
	sc.Split(ScanText)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != 1 || !errors.Is(sc.Err(), ErrBinary) {
		t.Errorf("binary: %d lines, %v", n, sc.Err())
	}
}
