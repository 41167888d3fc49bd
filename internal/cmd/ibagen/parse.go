package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// A decl is one iba structure as declared in the package sources.
type decl struct {
	Name    string
	Doc     string
	Section string
	Pos     string
	Fields  []*field
	Bits    int // total width, derived
	Format  *formatDir
	Attr    *attrDir
	Aliases []string
	File    string
}

type formatDir struct {
	Class   int
	Version int
}

type attrDir struct {
	ID      int
	Methods []string
	Format  string // explicit format binding (vendor classes)
	Variant string // another layout of this attribute: its primary structure
	DataOff int    // bit offset of the payload in the MAD, when not the format's data area
}

// A field is one component of a structure.
type field struct {
	GoName   string // "_" for reserved
	IBAName  string
	Label    string
	Off      int // bit offset in the enclosing struct, as declared
	Bits     int // width of one element
	Count    int // 0 for a scalar, else the array length
	Embedded bool
	GoType   string // element type as written
	Base     string // underlying basic type: uint8..uint64, GUID, GID, byte
	Struct   *decl  // element struct, if any
	Enum     string // named enum type
	Hex      bool
	Str      bool
	Data     bool
	GIDPfx   bool
	NoCM     bool
	CMEach   bool
	CMBits   int
	Pos      string
}

func (f *field) reserved() bool { return f.GoName == "_" }
func (f *field) n() int {
	if f.Count == 0 {
		return 1
	}
	return f.Count
}

type pkg struct {
	decls  map[string]*decl
	order  []*decl
	named  map[string]string    // named type -> underlying basic
	enums  map[string][]enumVal // enum type -> values
	enumOK map[string]bool
}

type enumVal struct {
	Name  string
	Value string
	Text  string
}

func parseDir(dir string) (*pkg, error) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	p := &pkg{decls: map[string]*decl{}, named: map[string]string{"GUID": "GUID", "GID": "GID"}, enums: map[string][]enumVal{}, enumOK: map[string]bool{}}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// Pass 1: named basic types and enum markers.
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				id, ok := ts.Type.(*ast.Ident)
				if !ok {
					continue
				}
				switch id.Name {
				case "uint8", "uint16", "uint32", "uint64":
					if _, special := p.named[ts.Name.Name]; !special {
						p.named[ts.Name.Name] = id.Name
					}
				}
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if doc != nil && strings.Contains(doc.Text(), "iba:enum") || hasDirective(doc, "iba:enum") {
					p.enumOK[ts.Name.Name] = true
				}
			}
		}
	}
	// Pass 2: enum constants.
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				id, ok := vs.Type.(*ast.Ident)
				if !ok || !p.enumOK[id.Name] || len(vs.Names) != 1 {
					continue
				}
				text := ""
				if vs.Comment != nil {
					text = strings.TrimSpace(vs.Comment.Text())
				}
				if text == "" {
					return nil, fmt.Errorf("%s: enum constant %s needs a trailing comment giving its display text", fset.Position(vs.Pos()), vs.Names[0].Name)
				}
				p.enums[id.Name] = append(p.enums[id.Name], enumVal{Name: vs.Names[0].Name, Text: text})
			}
		}
	}
	// Pass 3: structures.
	for _, f := range files {
		fname := filepath.Base(fset.Position(f.Pos()).Filename)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || !isIBA(st) {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				dc, err := p.parseStruct(fset, ts.Name.Name, doc, st)
				if err != nil {
					return nil, err
				}
				dc.File = fname
				if _, dup := p.decls[dc.Name]; dup {
					return nil, fmt.Errorf("%s: %s declared twice", dc.Pos, dc.Name)
				}
				p.decls[dc.Name] = dc
				p.order = append(p.order, dc)
			}
		}
	}
	sort.SliceStable(p.order, func(i, j int) bool { return p.order[i].Name < p.order[j].Name })
	// Resolve nested structures and compute sizes.
	for _, d := range p.order {
		if err := p.resolve(d, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func isIBA(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `iba:"`) {
			return true
		}
	}
	return false
}

func hasDirective(cg *ast.CommentGroup, name string) bool {
	if cg == nil {
		return false
	}
	for _, c := range cg.List {
		if strings.HasPrefix(c.Text, "//"+name) {
			return true
		}
	}
	return false
}

func directives(cg *ast.CommentGroup, name string) []string {
	var out []string
	if cg == nil {
		return out
	}
	for _, c := range cg.List {
		if rest, ok := strings.CutPrefix(c.Text, "//"+name); ok && (rest == "" || rest[0] == ' ') {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

func kv(s string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(s) {
		k, v, _ := strings.Cut(w, "=")
		m[k] = v
	}
	return m
}

func (p *pkg) parseStruct(fset *token.FileSet, name string, doc *ast.CommentGroup, st *ast.StructType) (*decl, error) {
	d := &decl{Name: name, Pos: fset.Position(st.Pos()).String()}
	if doc != nil {
		var lines []string
		for _, l := range strings.Split(doc.Text(), "\n") {
			if strings.HasPrefix(l, "iba:") {
				continue
			}
			lines = append(lines, l)
		}
		d.Doc = strings.TrimSpace(strings.Join(lines, "\n"))
		if i := strings.Index(d.Doc, "(IBA "); i >= 0 {
			if j := strings.IndexByte(d.Doc[i:], ')'); j > 0 {
				d.Section = d.Doc[i+5 : i+j]
			}
		}
	}
	for _, s := range directives(doc, "iba:format") {
		m := kv(s)
		c, err1 := strconv.ParseInt(m["class"], 0, 16)
		v, err2 := strconv.ParseInt(m["version"], 0, 16)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad iba:format %q", d.Pos, s)
		}
		d.Format = &formatDir{Class: int(c), Version: int(v)}
	}
	for _, s := range directives(doc, "iba:attr") {
		m := kv(s)
		id, err := strconv.ParseInt(m["id"], 0, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: bad iba:attr id in %q", d.Pos, s)
		}
		a := &attrDir{ID: int(id), Format: m["format"], Variant: m["variant"]}
		if v, ok := m["dataoff"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n%8 != 0 {
				return nil, fmt.Errorf("%s: iba:attr dataoff=%q is not a whole-byte bit offset", d.Pos, v)
			}
			a.DataOff = n
		}
		if m["methods"] != "" {
			a.Methods = strings.Split(m["methods"], ",")
		}
		d.Attr = a
	}
	for _, s := range directives(doc, "iba:alias") {
		d.Aliases = append(d.Aliases, strings.Fields(s)...)
	}
	for _, af := range st.Fields.List {
		pos := fset.Position(af.Pos()).String()
		if af.Tag == nil {
			return nil, fmt.Errorf("%s: field without iba tag in %s", pos, name)
		}
		tagv, _ := strconv.Unquote(af.Tag.Value)
		tag, ok := lookupTag(tagv, "iba")
		if !ok {
			return nil, fmt.Errorf("%s: field without iba tag in %s", pos, name)
		}
		f := &field{Pos: pos, Off: -1}
		switch len(af.Names) {
		case 0:
			f.Embedded = true
		case 1:
			f.GoName = af.Names[0].Name
		default:
			return nil, fmt.Errorf("%s: one field per line, please", pos)
		}
		t := af.Type
		if at, ok := t.(*ast.ArrayType); ok {
			bl, ok := at.Len.(*ast.BasicLit)
			if !ok {
				return nil, fmt.Errorf("%s: array length must be a literal", pos)
			}
			n, _ := strconv.Atoi(bl.Value)
			f.Count = n
			t = at.Elt
		}
		id, ok := t.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported field type", pos)
		}
		f.GoType = id.Name
		if f.Embedded {
			f.GoName = id.Name
		}
		for _, o := range strings.Split(tag, ",") {
			k, v, _ := strings.Cut(o, "=")
			var err error
			switch k {
			case "off":
				f.Off, err = strconv.Atoi(v)
			case "bits":
				f.Bits, err = strconv.Atoi(v)
			case "hex":
				f.Hex = true
			case "str":
				f.Str = true
			case "data":
				f.Data = true
			case "gidprefix":
				f.GIDPfx = true
			case "nocm":
				f.NoCM = true
			case "cmeach":
				f.CMEach = true
			case "cmbits":
				f.CMBits, err = strconv.Atoi(v)
			case "name":
				f.IBAName = v
			case "label":
				f.Label = v
			default:
				err = fmt.Errorf("unknown option %q", k)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: iba tag %q: %v", pos, tag, err)
			}
		}
		if f.Off < 0 {
			return nil, fmt.Errorf("%s: iba tag needs off= (the spec's bit offset)", pos)
		}
		if f.IBAName == "" && !f.reserved() {
			f.IBAName = derive(f.GoName)
		}
		d.Fields = append(d.Fields, f)
	}
	return d, nil
}

// derive gives the IBA/JSON name of a Go field: the first letter is lowered
// unless the name starts with an acronym (LID, GUID, MKey, SL).
func derive(g string) string {
	if len(g) > 1 && g[1] >= 'A' && g[1] <= 'Z' {
		return g
	}
	return strings.ToLower(g[:1]) + g[1:]
}

func lookupTag(tag, key string) (string, bool) {
	for tag != "" {
		i := strings.IndexByte(tag, ':')
		if i < 0 {
			return "", false
		}
		k := strings.TrimSpace(tag[:i])
		tag = tag[i+1:]
		v, err := strconv.QuotedPrefix(tag)
		if err != nil {
			return "", false
		}
		tag = strings.TrimSpace(tag[len(v):])
		if k == key {
			s, _ := strconv.Unquote(v)
			return s, true
		}
	}
	return "", false
}

var basicBits = map[string]int{"uint8": 8, "byte": 8, "uint16": 16, "uint32": 32, "uint64": 64, "GUID": 64, "GID": 128}

func (p *pkg) resolve(d *decl, seen map[string]bool) error {
	if d.Bits > 0 {
		return nil
	}
	if seen[d.Name] {
		return fmt.Errorf("%s: %s contains itself", d.Pos, d.Name)
	}
	seen[d.Name] = true
	run := 0
	for _, f := range d.Fields {
		if sd, ok := p.decls[f.GoType]; ok {
			if err := p.resolve(sd, seen); err != nil {
				return err
			}
			f.Struct = sd
			if f.Bits != 0 && f.Bits != sd.Bits {
				return fmt.Errorf("%s: bits=%d but %s is %d bits", f.Pos, f.Bits, sd.Name, sd.Bits)
			}
			f.Bits = sd.Bits
		} else {
			base, ok := p.named[f.GoType]
			if !ok {
				if _, isBasic := basicBits[f.GoType]; !isBasic {
					return fmt.Errorf("%s: unknown type %s", f.Pos, f.GoType)
				}
				base = f.GoType
			} else if p.enumOK[f.GoType] {
				f.Enum = f.GoType
			}
			f.Base = base
			max := basicBits[base]
			if f.Bits == 0 {
				if base == "GUID" || base == "GID" || base == "byte" {
					f.Bits = max
				} else {
					return fmt.Errorf("%s: iba tag needs bits=", f.Pos)
				}
			}
			if base == "byte" && f.Count == 0 {
				return fmt.Errorf("%s: byte is for [N]byte blobs; use uint8", f.Pos)
			}
			if f.Bits > max {
				return fmt.Errorf("%s: %d bits do not fit %s", f.Pos, f.Bits, f.GoType)
			}
			if (base == "GUID" || base == "GID") && f.Bits != max {
				return fmt.Errorf("%s: %s must be %d bits", f.Pos, base, max)
			}
		}
		if f.Off != run {
			return fmt.Errorf("%s: %s.%s: spec offset %d but the declarations before it end at bit %d", f.Pos, d.Name, f.GoName, f.Off, run)
		}
		if f.Struct != nil && f.Off%8 != 0 {
			return fmt.Errorf("%s: nested structure not byte aligned", f.Pos)
		}
		run += f.Bits * f.n()
	}
	if run%8 != 0 {
		return fmt.Errorf("%s: %s is %d bits, not whole bytes", d.Pos, d.Name, run)
	}
	d.Bits = run
	return nil
}
