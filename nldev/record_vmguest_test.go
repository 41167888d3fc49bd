//go:build vmguest

package nldev_test

// Runs inside the kernel VM (internal/vmtest): every replay case against the
// real kernel through a recorder. With NLDEV_RECORD=1 the recordings go to
// the console for the host test (vm_host_test.go) to store in testdata.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

func TestRecordReplies(t *testing.T) {
	nldevtest.StartTraffic(t)
	rec, err := nldevtest.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	uname, _ := exec.Command("uname", "-r").Output()
	record := os.Getenv("NLDEV_RECORD") == "1"
	for _, rc := range replayCases {
		t.Run(rc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := runCase(ctx, rec.Conn(), rc)
			ex := rec.Take()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, `"Unknown": [`) {
				t.Errorf("attributes left undecoded:\n%s", got)
			}
			if !record {
				return
			}
			b, err := nldevtest.Marshal(fmt.Sprintf("%s: recorded from Linux %s in the vmtest VM (go test ./nldev -run TestVM -record)", rc.name, strings.TrimSpace(string(uname))), ex)
			if err != nil {
				t.Fatal(err)
			}
			nldevtest.Emit(replayDir+"/"+rc.name+".nl", b)
		})
	}
}
