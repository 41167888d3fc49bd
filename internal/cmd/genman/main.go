// Command genman writes ibtool's man pages, one per command (section 8, as
// infiniband-diags' are), from its command tree with cobra's man page
// generator: the usage, the long help and every flag of each command.
//
// It is run by `go generate ./cmd/ibtool` and writes docs/man/*.8; the
// pages are committed, and scripts/check.sh fails when regenerating them
// changes anything. The date in the pages is manDate, not the day they
// were made, so that they regenerate byte for byte.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/rdmakit/rdmakit/internal/diags"
)

// manDate is the date the pages carry.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("out", "docs/man", "directory to write the pages to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Pages of commands that are gone go too.
	old, err := filepath.Glob(filepath.Join(dir, "*.8"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	root := diags.Root()
	noTag(root)
	return doc.GenManTree(root, &doc.GenManHeader{Section: "8", Date: &manDate, Source: "rdmakit", Manual: "ibtool"}, dir)
}

// noTag leaves out cobra's "Auto generated ... on DATE" line, which would
// date every page by the day it was made.
func noTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, s := range c.Commands() {
		noTag(s)
	}
}
