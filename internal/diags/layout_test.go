package diags

import (
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/tools/go/packages"
)

// layoutExceptions are uses of a command file's identifiers outside it
// that are known and kept, as "user.go: definer.go: name". There are none;
// an entry that no longer occurs fails the test, so the list cannot rot.
var layoutExceptions = map[string]bool{}

// TestCommandFilesAreLeaves checks the layout rule of this package: a
// command file (one that registers a command) is a leaf. Nothing outside
// it, another command's file least of all, uses what it defines at package
// level (a function, method, type, field, var or const); what two commands
// share lives in a file named for what it is, or in a public package. The
// cgo and the no-cgo builds are both checked.
func TestCommandFilesAreLeaves(t *testing.T) {
	for _, cgo := range []string{"1", "0"} {
		t.Run("CGO_ENABLED="+cgo, func(t *testing.T) {
			uses, err := commandFileUses(".", "CGO_ENABLED="+cgo)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, u := range uses {
				if layoutExceptions[u] {
					seen[u] = true
					continue
				}
				t.Errorf("%s: used outside the command file that defines it; move it to a file named for what it is, or to a public package", u)
			}
			if cgo == "1" {
				for e := range layoutExceptions {
					if !seen[e] {
						t.Errorf("layout exception %q no longer occurs: remove it from layoutExceptions", e)
					}
				}
			}
		})
	}
}

// commandFileUses type-checks the package in dir (test files left out)
// and returns, sorted and once each, "user.go: definer.go: name" for every
// identifier that a command file defines and another file uses.
func commandFileUses(dir string, env ...string) ([]string, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir: dir,
	}
	if len(env) > 0 {
		cfg.Env = append(os.Environ(), env...)
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 {
		return nil, fmt.Errorf("loaded %d packages, want 1", len(pkgs))
	}
	pkg := pkgs[0]
	if len(pkg.Errors) > 0 {
		return nil, fmt.Errorf("loading %s: %v", pkg.PkgPath, pkg.Errors)
	}
	fileOf := func(o types.Object) string {
		return filepath.Base(pkg.Fset.Position(o.Pos()).Filename)
	}
	registrars := map[types.Object]bool{}
	for _, name := range []string{"register", "registerCheck"} {
		o := pkg.Types.Scope().Lookup(name)
		if o == nil {
			return nil, fmt.Errorf("package %s has no function %s", pkg.PkgPath, name)
		}
		registrars[o] = true
	}
	// A command file is one that calls a registrar, other than in the
	// body of a registrar (registerCheck calls register).
	command := map[string]bool{}
	for _, f := range pkg.Syntax {
		name := filepath.Base(pkg.Fset.Position(f.Package).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok && registrars[pkg.TypesInfo.Defs[fd.Name]] {
				return false
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && registrars[pkg.TypesInfo.Uses[id]] {
				command[name] = true
			}
			return true
		})
	}
	if len(command) == 0 {
		return nil, fmt.Errorf("no command files found in %s", pkg.PkgPath)
	}
	set := map[string]bool{}
	for id, o := range pkg.TypesInfo.Uses {
		if o.Pkg() != pkg.Types || !definedAtPackageLevel(o, pkg.Types) {
			continue
		}
		user := filepath.Base(pkg.Fset.Position(id.Pos()).Filename)
		definer := fileOf(o)
		if user == definer || !command[definer] {
			continue
		}
		set[fmt.Sprintf("%s: %s: %s", user, definer, o.Name())] = true
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// definedAtPackageLevel reports whether o is declared at package level, or
// is a method or struct field (whose owner is).
func definedAtPackageLevel(o types.Object, pkg *types.Package) bool {
	switch o := o.(type) {
	case *types.Func:
		return o.Parent() == pkg.Scope() || o.Type().(*types.Signature).Recv() != nil
	case *types.Var:
		return o.Parent() == pkg.Scope() || o.IsField()
	case *types.TypeName, *types.Const:
		return o.Parent() == pkg.Scope()
	}
	return false
}
