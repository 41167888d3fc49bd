package diags

import (
	"encoding/json"
	"testing"
)

// TestDumpFTsLive compares dump_fts, dump_lfts and dump_mfts with the C
// commands (dump_lfts and dump_mfts are the C package's shell scripts
// over dump_fts) on the fat tree with the IPoIB broadcast group joined.
func TestDumpFTsLive(t *testing.T) { eachRelease(t, testDumpFTsLive) }

func testDumpFTsLive(t *testing.T, p peers) {
	l := startRouteLive(t, p)
	cases := [][]string{{}, {"-a"}, {"-n"}, {"-a", "-n"}, {"5"}, {"0x3", "0x9"}, {"0x40"},
		{"-M"}, {"-M", "-a"}, {"-M", "-n"}, {"-M", "-a", "-n", "0xc000", "0xc002"}, {"-M", "0xc001"}}
	compareRetrying(t, l, "dump_fts", cases)
	t.Run("dump_lfts", func(t *testing.T) {
		compareRetrying(t, l, "dump_lfts", [][]string{{}, {"-n", "2", "6"}, {"-M"}})
	})
	t.Run("dump_mfts", func(t *testing.T) {
		compareRetrying(t, l, "dump_mfts", [][]string{{}, {"-a", "-n", "0xc000", "0xc001"}})
	})
	t.Run("json", func(t *testing.T) {
		out, errOut, code := l.ours(t, "dump_fts", "--json", "-M")
		var doc struct {
			Command string
			Result  []ForwardingTable
		}
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		if doc.Command != "dump_fts" || len(doc.Result) != 3 {
			t.Fatalf("want the tables of 3 switches:\n%s", out)
		}
		for _, ft := range doc.Result {
			if len(ft.MulticastEntries) != 1 || ft.MulticastEntries[0].MLID != 0xc000 || len(ft.MulticastEntries[0].Ports) == 0 {
				t.Errorf("switch %s: want MLID 0xc000 forwarded: %+v", ft.Name, ft.MulticastEntries)
			}
		}
	})
}
