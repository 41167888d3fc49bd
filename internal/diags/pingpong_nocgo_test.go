//go:build !cgo

package diags

import (
	"strings"
	"testing"
)

// TestPingpongNoCgo: a static ibtool has the verbs commands and says
// plainly what they need.
func TestPingpongNoCgo(t *testing.T) {
	for _, name := range []string{"rc_pingpong", "ud_pingpong", "rdma_bw"} {
		_, stderr, code := run(t, "", "ibtool", name, "-d", "mlx5_0", "host")
		if code != 1 || !strings.Contains(stderr, "built without cgo") {
			t.Errorf("%s: exit %d, %q", name, code, stderr)
		}
	}
}
