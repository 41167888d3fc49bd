package textfile

import (
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
