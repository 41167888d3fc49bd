package nldev

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rdmakit/rdmakit/internal/cmd/nldevgen/uapi"
)

// The generated constants must be what the generator makes from the
// committed header today.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	out := filepath.Join(t.TempDir(), "zz.go")
	cmd := exec.Command("go", "run", "../internal/cmd/nldevgen", "-header", "internal/uapi/rdma_netlink.h", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("zz_generated_consts.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("zz_generated_consts.go is stale: run go generate ./nldev")
	}
}

// The VM kernel (Debian's 6.1) speaks a prefix of the committed header's
// numbering: every command and attribute it knows has the same value here.
func TestHeaderIsABICompatible(t *testing.T) {
	read := func(p string) *uapi.Header {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		h, err := uapi.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		return h
	}
	old, cur := read("testdata/rdma_netlink-linux-6.1.h"), read("internal/uapi/rdma_netlink.h")
	for _, enum := range []string{"rdma_nldev_command", "rdma_nldev_attr", "rdma_nl_counter_mode", "rdma_nl_counter_mask"} {
		now := map[string]int64{}
		for _, e := range cur.Enums[enum] {
			now[e.Name] = e.Value
		}
		if len(old.Enums[enum]) == 0 {
			t.Fatalf("6.1 header has no enum %s", enum)
		}
		for _, e := range old.Enums[enum] {
			if e.Name == "RDMA_NLDEV_ATTR_MAX" || e.Name == "RDMA_NLDEV_NUM_OPS" || e.Name == "RDMA_COUNTER_MODE_MAX" {
				continue
			}
			v, ok := now[e.Name]
			if !ok || v != e.Value {
				t.Errorf("%s: 6.1 has %s = %d, committed header has %d (present %v)", enum, e.Name, e.Value, v, ok)
			}
		}
	}
	// Spot checks against values read in the header by hand.
	if AttrResSRQN != 90 || AttrDevDIM != 84 || CmdResSRQGetRaw != 25 || GroupNotify != 4 || ClientNLDEV != 5 {
		t.Fatalf("generated values moved: SRQN %d DIM %d SRQ_GET_RAW %d", AttrResSRQN, AttrDevDIM, CmdResSRQGetRaw)
	}
	if AttrResRQPSN.Kind() != KindU32 || AttrResSrcAddr.Kind() != KindSockaddr || AttrResQP.Kind() != KindNested || Attr(500).Kind() != KindUnknown {
		t.Fatal("attribute kinds not taken from the header comments")
	}
	if CmdResQPGet.MessageType() != 5<<10+10 {
		t.Fatalf("message type %#x", CmdResQPGet.MessageType())
	}
}

func TestParseRejectsUnknownSyntax(t *testing.T) {
	_, err := uapi.Parse([]byte("enum x {\n\tA = sizeof(int),\n};\n"))
	if err == nil {
		t.Fatal("want an error for an expression the parser does not know")
	}
	if _, err := uapi.Parse([]byte("enum x {\n\tA,\n")); err == nil {
		t.Fatal("want an error for an unclosed enum")
	}
	h, err := uapi.Parse([]byte("enum y {\n\t/* multi\n\t * line */\n\tA = 3, /* u8 */\n\tB, /* starts\n\t   here */\n\tC = A,\n\tD = (1 << 4),\n};\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := h.Enums["y"]
	if len(got) != 4 || got[0].Value != 3 || got[0].Comment != "u8" || got[1].Value != 4 || got[2].Value != 3 || got[3].Value != 16 {
		t.Fatalf("parsed %+v", got)
	}
}
