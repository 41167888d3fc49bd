package diags

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestSMInfoLive compares sminfo with the C sminfo against OpenSM's SM on
// the ibsim floor: queries by the local port's SM LID, by LID, by directed
// route and by GUID, failures at ports without an SM.
func TestSMInfoLive(t *testing.T) { eachRelease(t, testSMInfoLive) }

func testSMInfoLive(t *testing.T, p peers) {
	l := startLive(t, p)
	sm := strconv.Itoa(l.lid["H-1"])
	l.compareAll(t, "sminfo", [][]string{
		{"-t", "200", "-D", "0"}, {"-t", "200", strconv.Itoa(l.lid["H-3"])}, {"-t", "200", "900"},
		// Sets: OpenSM refuses SMInfo SubnSets from a port that is not an
		// SM (status 0x0700), so both tools fail the same way.
		{sm, "1"}, {"-s", "3", "-p", "5", "-a", "9", sm, "2"}, {"-s", "0", sm, "3"}, {"-p", "15", sm, "4"}, {sm, "5"},
	})
	// What a set sends: the state, priority and activity count asked for,
	// with the control in the modifier.
	out, errOut, code := l.ours(t, "sminfo", "-dd", "-s", "3", "-p", "5", "-a", "9", sm, "2")
	if code != 255 || !strings.Contains(errOut, "SubnSet") || !strings.Contains(errOut, "attributeModifier=2") ||
		!strings.Contains(errOut, "actCount=9") || !strings.Contains(errOut, "priority=5") || !strings.Contains(errOut, "SMState=MASTER(3)") {
		t.Errorf("set: exit %d\n%s%s", code, out, errOut)
	}
	// OpenSM counts every SMInfo it answers: the activity counts differ,
	// the rest must not.
	for _, args := range [][]string{{}, {sm}, {"-D", l.dr["H-1"]}, {sm, "0"}, {"-G", guidOf(l, "H-1")}} {
		cOut, cErr, cCode := l.c(t, "sminfo", args...)
		out, errOut, code := l.ours(t, "sminfo", args...)
		l.check(t, "sminfo", args, cOut, cErr, cCode, out, errOut, code, sameBut(activityCount))
	}
}

var activityCount = regexp.MustCompile(`activity count \d+`)

// sameBut compares two outputs with what re matches blanked.
func sameBut(re *regexp.Regexp) func(c, ours string) bool {
	return func(c, ours string) bool {
		return re.ReplaceAllString(c, "#") == re.ReplaceAllString(ours, "#")
	}
}

func guidOf(l *live, node string) string {
	return fmt.Sprintf("0x%016x", uint64(l.f.Node(node).PortGUID(1)))
}

// TestSMInfoSMKey: python-rdma's --sminfo_smkey goes into the SMInfo the
// request carries (the SM answers with its key hidden from an untrusted
// requester).
func TestSMInfoSMKey(t *testing.T) {
	out, errOut, code := run(t, "", "ibtool", "--fabric", "sim:fattree:k=4,n=2", "-dd", "sminfo", "--sminfo_smkey", "0x1234")
	if code != 0 || !strings.HasPrefix(out, "sminfo: sm lid 9 ") || strings.Count(errOut, "SMKey=0x0000000000001234") != 1 {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := run(t, "", "ibtool", "--fabric", "sim:fattree:k=4,n=2", "sminfo", "--sminfo_smkey", "key"); code != 2 {
		t.Errorf("a key that is no number: exit %d: %s", code, errOut)
	}
}
