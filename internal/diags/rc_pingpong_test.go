//go:build cgo

package diags

import (
	"strings"
	"testing"
)

// TestPingpongUsage: bad command lines are refused before any device is
// opened, with the usage exit status.
func TestPingpongUsage(t *testing.T) {
	for _, argv := range [][]string{
		{"ibtool", "rc_pingpong", "-m", "1000"},
		{"ibtool", "rc_pingpong", "-p", "70000"},
		{"ibtool", "rc_pingpong", "-n", "0"},
		{"ibtool", "rc_pingpong", "host1", "host2"},
		{"ibtool", "ud_pingpong", "-m", "1024"}, // ibv_ud_pingpong has no -m
		{"ibtool", "ud_pingpong", "-l", "16"},
		{"ibtool", "rdma_bw", "-t", "0"},
		{"ibtool", "rdma_bw", "-e", "64"},
		{"ibtool", "rc_pingpong", "--bogus"},
	} {
		if _, stderr, code := run(t, "", argv...); code != 2 || !strings.Contains(stderr, "Run 'ibtool") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", argv[1:], code, stderr)
		}
	}
	out, _, code := run(t, "", "ibtool", "rc_pingpong", "-h")
	if code != 0 || !strings.Contains(out, "--gid-idx") || !strings.Contains(out, "-d, --ib-dev") {
		t.Errorf("rc_pingpong -h: exit %d\n%s", code, out)
	}
	// No device by that name (or none at all on this machine).
	if _, stderr, code := run(t, "", "ibtool", "rc_pingpong", "-d", "nosuchdev0"); code != 1 || !strings.Contains(stderr, "nosuchdev0") && !strings.Contains(stderr, "verbs") {
		t.Errorf("rc_pingpong -d nosuchdev0: exit %d, %q", code, stderr)
	}
}
