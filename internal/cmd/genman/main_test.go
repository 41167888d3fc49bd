package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun writes the pages twice and wants the same bytes, a page per
// command with its flags, and no page left from a command that is gone.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "ibtool-gone.8")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale page is still there: %v", err)
	}
	first := map[string]string{}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.8"))
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		first[filepath.Base(p)] = string(b)
	}
	for _, name := range []string{"ibtool.8", "ibtool-perfquery.8", "ibtool-saquery.8", "ibtool-completion-bash.8"} {
		if _, ok := first[name]; !ok {
			t.Errorf("no %s among %d pages", name, len(first))
		}
	}
	pq := first["ibtool-perfquery.8"]
	for _, want := range []string{".TH \"IBTOOL-PERFQUERY\" \"8\" \"Nov 2026\" \"rdmakit\" \"ibtool\"", `\fB--extended\fP`, `\fB--m_key\fP`, `\fB--config\fP`} {
		if !strings.Contains(pq, want) {
			t.Errorf("ibtool-perfquery.8 lacks %q", want)
		}
	}
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for name, b := range first {
		again, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(again) != b {
			t.Errorf("%s differs when made again (%v)", name, err)
		}
	}
}
