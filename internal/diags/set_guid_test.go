package diags

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSetGUIDLive programs an alias GUID through OpenSM's SA on the ibsim
// floor and keeps the record the SA answers (no C command exists; the LID
// OpenSM chose is masked in the golden file).
func TestSetGUIDLive(t *testing.T) {
	l := startLive(t, machinePeers)
	lid := strconv.Itoa(l.lid["H-3"])
	mask := regexp.MustCompile(`LID=\d+`)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"slot1", []string{"set_guid", lid, "1", "0x0002c903deadbe01"}},
		{"slot9", []string{"set_guid", "-t", "2000", guidOf(l, "H-3"), "9", "0002:c903:dead:be09"}},
		{"json", []string{"set_guid", "--json", lid, "2", "0x0002c903deadbe02"}},
	} {
		out, errOut, code := l.ours(t, tc.args[0], tc.args[1:]...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", tc.name, code, errOut)
			continue
		}
		golden(t, tc.name, mask.ReplaceAllString(strings.ReplaceAll(out, fmt.Sprintf(`"lid": %s`, lid), `"lid": LID`), "LID=N"))
	}
	for _, bad := range [][]string{{lid, "256", "0x1"}, {lid, "1", "nope"}, {lid, "1"}} {
		if _, _, code := l.ours(t, "set_guid", bad...); code != 2 {
			t.Errorf("%v: exit %d, want a usage error", bad, code)
		}
	}
}
