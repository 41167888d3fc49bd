// Command ibagen generates the codecs, field tables and registries of package
// iba from its structure declarations, and the structure reference in docs/.
// It runs through `go generate ./iba`; the output is committed and CI checks
// that it is up to date.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", ".", "the iba package directory")
	docs := flag.String("docs", "", "write the structure reference (Markdown) here")
	flag.Parse()
	if err := run(*dir, *docs); err != nil {
		fmt.Fprintln(os.Stderr, "ibagen:", err)
		os.Exit(1)
	}
}

func run(dir, docs string) error {
	p, err := parseDir(dir)
	if err != nil {
		return err
	}
	if err := check(p); err != nil {
		return err
	}
	codec, err := genCodec(p)
	if err != nil {
		return fmt.Errorf("codec: %w", err)
	}
	meta, err := genMeta(p)
	if err != nil {
		return fmt.Errorf("meta: %w", err)
	}
	if err := writeIfChanged(filepath.Join(dir, "zz_generated_codec.go"), codec); err != nil {
		return err
	}
	if err := writeIfChanged(filepath.Join(dir, "zz_generated_meta.go"), meta); err != nil {
		return err
	}
	if docs != "" {
		if err := writeIfChanged(docs, genDocs(p)); err != nil {
			return err
		}
	}
	return nil
}

// check validates what the compiler cannot: names unique within a structure
// (after flattening embedded headers) and bound formats that exist.
func check(p *pkg) error {
	for _, d := range p.order {
		seen := map[string]bool{}
		var walk func(d *decl) error
		walk = func(d *decl) error {
			for _, f := range d.Fields {
				if f.Embedded {
					if err := walk(f.Struct); err != nil {
						return err
					}
					continue
				}
				if f.reserved() {
					continue
				}
				if seen[f.IBAName] {
					return fmt.Errorf("%s: field name %s used twice", f.Pos, f.IBAName)
				}
				seen[f.IBAName] = true
			}
			return nil
		}
		if err := walk(d); err != nil {
			return err
		}
		if d.Attr != nil && d.Attr.Variant != "" {
			v, ok := p.decls[d.Attr.Variant]
			if !ok || v.Attr == nil || v.Attr.ID != d.Attr.ID {
				return fmt.Errorf("%s: variant=%s must name a structure with the same attribute ID", d.Pos, d.Attr.Variant)
			}
			if len(d.Attr.Methods) > 0 {
				return fmt.Errorf("%s: a variant takes its methods from %s", d.Pos, d.Attr.Variant)
			}
		}
		if d.Attr != nil && d.Attr.Format != "" {
			if _, ok := p.decls[d.Attr.Format]; !ok {
				return fmt.Errorf("%s: format %s is not declared", d.Pos, d.Attr.Format)
			}
		}
	}
	return nil
}

func writeIfChanged(path string, data []byte) error {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}
