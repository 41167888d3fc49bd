package diags

import (
	"strings"
	"testing"
)

// -d prints one line per MAD event on stderr, -dd adds the decoded packets
// in the dump format, and stdout is the same as without them; -vv adds the
// packets of a failed RPC to the error.
func TestDebugAndVerbose(t *testing.T) {
	l := startLive(t, machinePeers)
	plain, _, code := l.ours(t, "smpquery", "nodeinfo", "1")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	out, errs, code := l.ours(t, "smpquery", "-d", "nodeinfo", "1")
	if code != 0 || out != plain {
		t.Fatalf("-d changed the output or failed (exit %d)", code)
	}
	if !strings.Contains(errs, "D: ") || !strings.Contains(errs, "SubnGet") || strings.Contains(errs, "+ data") {
		t.Errorf("-d trace:\n%s", errs)
	}
	_, errs, _ = l.ours(t, "smpquery", "-dd", "nodeinfo", "1")
	if !strings.Contains(errs, "+ data NodeInfo") || !strings.Contains(errs, "nodeGUID=") {
		t.Errorf("-dd trace lacks the decoded packets:\n%s", errs)
	}
	// LID 999 is not routed: the error, with -vv, dumps the request.
	_, errs, code = l.ours(t, "-t", "100", "--retries", "0", "-vv", "smpquery", "nodeinfo", "999")
	if code == 0 || !strings.Contains(errs, "request:") || !strings.Contains(errs, "attributeID=17") {
		t.Errorf("-vv error (exit %d):\n%s", code, errs)
	}
}
