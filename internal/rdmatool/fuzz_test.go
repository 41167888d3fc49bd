package rdmatool

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzArgs runs rdmatool's whole grammar (options, objects, commands,
// DEV/PORT arguments and filters) on arbitrary command lines against the
// fake kernel: none may panic or hang, and every failure exits 1 (or 255
// from a usage error) with a message. A line is split as a batch file's is
// (splitArgs, fuzzed too). Lines that read a batch file or start the
// monitor, which waits for events, are left out.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		"dev", "-j dev show rxe0", "-d -p link show rxe0/1", "link show rxe0/1 state ACTIVE",
		"resource show qp lqpn 1-17 type RC", "res show qp pid 1,2,3", "res show cm_id dst-port 7174 -j",
		"res show mr rkey 0x13c", "res show srq srqn 1-4", "-d res show qp link rxe0/1 lqpn 17",
		"statistic qp show link rxe0/1", "stat show link rxe0/1 -p", "statistic mode supported link rxe0/1",
		"system show", "sys set netns exclusive", "dev set rxe0 name rxe1", "dev set rxe0 adaptive-moderation on",
		"link add rxe1 type rxe netdev eth0", "res show qp lqpn '1 - 2'", "-- dev", "-Vj", "--js dev", "res sh qp lqpn 99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, err := splitArgs(line)
		if err != nil || len(args) == 0 {
			return
		}
		for _, a := range args {
			if a != "" && (strings.HasPrefix("monitor", a) || strings.HasPrefix(a, "-b") || strings.HasPrefix(a, "--b")) {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out, errb bytes.Buffer
		code := run(ctx, args, &out, &errb, fakeKernel(t))
		if ctx.Err() != nil {
			t.Fatalf("%q: still running after 10 s", args)
		}
		if code != 0 && errb.Len() == 0 && out.Len() == 0 {
			t.Fatalf("%q: exit %d without a word", args, code)
		}
	})
}
