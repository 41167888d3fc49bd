package ibsim_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/ibsimserver"
	"github.com/rdmakit/rdmakit/sim/topo"
)

var benchSeq atomic.Int64

// benchTree has a node for each of the benchmark's callers: HCA w+1 of
// 64, so that with the latency model on no caller queues behind another at
// a node's SMA.
var benchTree = testbed.FatTree{Leaves: 4, Spines: 2, HCAsPerLeaf: 16}

// benchPath is the directed route from H-1 to HCA w+1: through its leaf,
// and for the other leaves through spine 1.
func benchPath(w int) []byte {
	leaf, port := w/benchTree.HCAsPerLeaf+1, byte(w%benchTree.HCAsPerLeaf+1)
	if leaf == 1 {
		return []byte{1, port}
	}
	return []byte{1, byte(benchTree.UplinkPort(1)), byte(leaf), port}
}

// benchServeEnv, set in the environment of the test binary, makes it
// serve benchTree instead of running tests: "nolatency" or "latency".
const benchServeEnv = "RDMAKIT_IBSIM_BENCH_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(benchServeEnv); mode != "" {
		if err := serveBench(mode, os.Getenv("IBSIM_SOCKNAME")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchLatency is the latency model of each benchmark mode. "latency" is
// fabricsim's "-latency hop=1us,sma=20us,agent=20us", that of the
// 10k-node ibqueryerrors bench: replies arrive in bursts, as they do there.
var benchLatency = map[string]sim.Latency{
	"nolatency": {},
	"latency":   {Hop: time.Microsecond, SMA: 20 * time.Microsecond, Agent: 20 * time.Microsecond},
}

// serveBench serves benchTree from an ibsimserver until stdin closes,
// saying "ready" on stdout once clients may connect.
func serveBench(mode, sockName string) error {
	lat, ok := benchLatency[mode]
	if !ok {
		return fmt.Errorf("no benchmark mode %q", mode)
	}
	tf, err := benchTree.Build()
	if err != nil {
		return err
	}
	text, err := tf.Topology()
	if err != nil {
		return err
	}
	top, err := topo.Parse(strings.NewReader(text), "fabric")
	if err != nil {
		return err
	}
	f, err := sim.New(top)
	if err != nil {
		return err
	}
	if err := f.SetLatency(lat); err != nil {
		return err
	}
	s, err := ibsimserver.Listen(f, ibsimserver.Config{SockName: sockName})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
	cancel()
	return <-done
}

// startBenchServer runs serveBench in a child process, so that the
// benchmark's CPU time and allocations are the client's alone, and
// returns its socket name. The child is killed when b ends.
func startBenchServer(b *testing.B, mode string) string {
	b.Helper()
	name := fmt.Sprintf("rkbench%d-%d", os.Getpid(), benchSeq.Add(1))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServeEnv+"="+mode, "IBSIM_SOCKNAME="+name)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("benchmark server said %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		b.Fatal("benchmark server not ready after 30s")
	}
	return name
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRoundTrip measures DR NodeInfo round trips to an ibsimserver
// in a child process with 64 callers at once, each asking its own node,
// as mad.Client drives the transport: many goroutines in Send, one in
// Recv handing each reply to the caller that waits for it. allocs/op and
// cpu-ns/op are the client's alone.
func BenchmarkRoundTrip(b *testing.B) {
	for _, mode := range []string{"nolatency", "latency"} {
		b.Run(mode, func(b *testing.B) { benchRoundTrip(b, startBenchServer(b, mode)) })
	}
}

func benchRoundTrip(b *testing.B, sockName string) {
	callers := benchTree.Leaves * benchTree.HCAsPerLeaf
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: sockName, Node: "H-1"})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	agent, err := tr.Register(mad.AgentSpec{Class: 0x81})
	if err != nil {
		b.Fatal(err)
	}
	// Caller w's TIDs carry w in bits 20-31: the reader finds the caller
	// without a map, so that the harness allocates nothing per MAD.
	waiters := make([]chan *mad.Packet, callers)
	for i := range waiters {
		waiters[i] = make(chan *mad.Packet, 1)
	}
	recvDone := make(chan error, 1)
	go func() {
		for {
			p, err := tr.Recv(ctx)
			if err != nil {
				recvDone <- err
				return
			}
			w := binary.BigEndian.Uint32(p.MAD[12:]) >> 20
			if int(w) < callers {
				waiters[w] <- p
			}
		}
	}()
	var ids atomic.Uint32
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((callers + procs - 1) / procs)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		w := ids.Add(1) - 1
		if int(w) >= callers {
			return // the others take this goroutine's share
		}
		req := drGet(0, attrNodeInfo, 0, benchPath(int(w))...)
		p := &mad.Packet{Agent: agent, Addr: mad.Addr{LID: 0xffff}, MAD: req, Timeout: 5 * time.Second}
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for seq := uint32(0); pb.Next(); seq++ {
			binary.BigEndian.PutUint32(req[12:], w<<20|seq&0xfffff)
			if err := tr.Send(ctx, p); err != nil {
				b.Error(err)
				return
			}
			timer.Reset(5 * time.Second)
			select {
			case r := <-waiters[w]:
				if r.Err != nil {
					b.Error(r.Err)
					return
				}
				if status := binary.BigEndian.Uint16(r.MAD[4:]) & 0x7fff; status != 0 {
					b.Errorf("caller %d: MAD status %#x", w, status)
					return
				}
			case <-timer.C:
				b.Errorf("caller %d: no reply", w)
				return
			}
		}
	})
	b.StopTimer()
	// Other programs share the CPUs: the process's CPU time per round trip
	// is steadier than ns/op.
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	cancel()
	<-recvDone
	if s := tr.Stats(); s != (ibsim.Stats{}) {
		b.Errorf("stats %+v, want nothing lost", s)
	}
}
