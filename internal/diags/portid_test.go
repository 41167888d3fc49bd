package diags

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/rdmakit/rdmakit/ibpath"
)

// FuzzTargetParse: a destination argument under every combination of the
// addressing flags (-D, -L, -G) never makes the target code panic; two
// flags at once are a usage error; what parses has a name in the C tools'
// words.
func FuzzTargetParse(f *testing.F) {
	for _, s := range []string{
		"1", "0x10", "0,1,3", "0,", "0x0002c90300000001", "0002:c903:0000:0001", "fe80::2:c903:0:1", "hca1",
		"IBPath(DLID=1)", "IBPath(DLID=1,SL=3,retries=1)", "DR(0,1)", "-1", "65536", "0xffffffffffffffffff", "",
	} {
		for m := range 8 {
			f.Add(s, uint8(m))
		}
	}
	// A name is looked up in the SA's NodeRecords: an in-process fabric
	// answers.
	e := &Env{Ctx: context.Background(), Fabric: fuzzFabric, Retries: 0, Timeout: 20, Stdout: io.Discard, Stderr: io.Discard}
	s, err := e.open()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	f.Fuzz(func(t *testing.T, arg string, mode uint8) {
		a := &addrFlags{direct: mode&1 != 0, lid: mode&2 != 0, guid: mode&4 != 0}
		p, err := s.parseTarget(arg, a)
		var ue *UsageError
		switch n := int(mode&1) + int(mode>>1&1) + int(mode>>2&1); {
		case n > 1 && !errors.As(err, &ue):
			t.Fatalf("%q with %d addressing flags: %v, want a usage error", arg, n, err)
		case err != nil:
			return
		}
		if portidString(p) == "" || p.String() == "" {
			t.Fatalf("%q: a path with no name", arg)
		}
		if dr, ok := p.(*ibpath.DRPath); ok && a.direct {
			if hops, ok := parseDRList(arg); ok && len(hops) > len(dr.DrPath) {
				t.Fatalf("%q: %d hops, the DR list has %d", arg, len(dr.DrPath), len(hops))
			}
		}
	})
}
