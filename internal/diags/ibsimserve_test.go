package diags

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/ibsimserver"
)

// serveIBSim serves f over ibsim's protocol in-process, as fabricsim does,
// on a socket name of its own (prefix, the PID and a clock reading), which
// it puts in IBSIM_SOCKNAME for the test; the server stops when the test
// ends.
func serveIBSim(t *testing.T, f *sim.Fabric, prefix string) (*ibsimserver.Server, string) {
	t.Helper()
	name := fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)
	srv, err := ibsimserver.Listen(f, ibsimserver.Config{SockName: name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		srv.Close()
		<-done
	})
	t.Setenv("IBSIM_SOCKNAME", name)
	return srv, name
}
