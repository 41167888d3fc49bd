package diags

import (
	"strings"
	"testing"
)

// TestGMPPathFromSA: a GMP to a plain LID takes its path (SL, P_Key) from
// an SA PathRecord when the SA answers, and goes as the C tools send it
// (to the LID, SL 0) when no SA answers (here: -s names a switch's LID,
// whose reply refuses the query).
func TestGMPPathFromSA(t *testing.T) {
	_, errOut, code := run(t, "", "ibtool", "--fabric", saModeFabric, "-d", "perfquery", "21", "1")
	if code != 0 || !strings.Contains(errOut, "send SubnAdmGet PathRecord to SA at LID 9") ||
		!strings.Contains(errOut, "send PerformanceGet PortCounters to IBPath(DGID=") || !strings.Contains(errOut, "SL=0, SLID=9, pkey=0xffff)") {
		t.Errorf("with an SA: exit %d\n%s", code, errOut)
	}
	out, errOut, code := run(t, "", "ibtool", "--fabric", saModeFabric, "-d", "-s", "2", "perfquery", "21", "1")
	if code != 0 || !strings.Contains(errOut, "send SubnAdmGet PathRecord to SA at LID 2 try 1") || strings.Contains(errOut, "try 2") ||
		!strings.Contains(errOut, "send PerformanceGet PortCounters to IBPath(DLID=21) try 1") || !strings.Contains(out, "# Port counters: Lid 21 port 1") {
		t.Errorf("without an SA: exit %d\n%s%s", code, out, errOut)
	}
}
