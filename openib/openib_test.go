package openib_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/openib"
)

// serveOn runs serve on node's port 1 of f's simulator until the test
// ends, once ready (asked through f) says it answers; it returns the
// server's LID. Until a server registers, the simulator's own agent
// answers the OpenIB classes with the node's name.
func serveOn(t testing.TB, f *fabric.Fabric, node string, serve func(ctx context.Context, mc *mad.Client) error, ready func(lid uint16) bool) uint16 {
	t.Helper()
	tr, err := f.Sim.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fabric.New(context.Background(), tr, fabric.WithServe())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, srv.MAD) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("server: %v", err)
		}
		srv.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); !ready(srv.Local.LID); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server on %s does not answer", node)
		}
	}
	return srv.Local.LID
}

func openSim(t testing.TB) *fabric.Fabric {
	t.Helper()
	f, err := fabric.Open(context.Background(), "sim:fattree:k=4,n=2", fabric.WithTimeout(100*time.Millisecond), fabric.WithRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestPingAndSysStat: a ping and every sysstat query are answered by the
// servers with what they were given; a query under another OUI, or to a
// port nobody serves, goes unanswered.
func TestPingAndSysStat(t *testing.T) {
	f := openSim(t)
	ctx := context.Background()
	pingLID := serveOn(t, f, "hca5", func(ctx context.Context, mc *mad.Client) error {
		return openib.ServePing(ctx, mc, iba.OUIOpenIB, "pinger.example")
	}, func(lid uint16) bool {
		host, _ := openib.Ping(ctx, f.MAD, ibpath.NewLID(lid), iba.OUIOpenIB)
		return host == "pinger.example"
	})
	info := openib.SysInfo{Host: "stats.example", CPUs: []openib.CPU{{" Fast CPU", " 2000.0"}, {" Fast CPU", "(null)"}}}
	statLID := serveOn(t, f, "hca9", func(ctx context.Context, mc *mad.Client) error {
		return openib.ServeSysStat(ctx, mc, iba.OUIOpenIB, info)
	}, func(lid uint16) bool {
		host, _ := openib.SysStat(ctx, f.MAD, ibpath.NewLID(lid), iba.OUIOpenIB, openib.AttrHostInfo)
		return host == info.Host
	})

	host, err := openib.Ping(ctx, f.MAD, ibpath.NewLID(pingLID), iba.OUIOpenIB)
	if err != nil || host != "pinger.example" {
		t.Fatalf("ping: %q %v", host, err)
	}
	for attr, want := range map[uint16]string{
		openib.AttrSysStatPing: "",
		openib.AttrHostInfo:    "stats.example",
		openib.AttrCPUInfo:     "cpu 0: model  Fast CPU MHZ  2000.0\ncpu 1: model  Fast CPU MHZ (null)\n",
	} {
		got, err := openib.SysStat(ctx, f.MAD, ibpath.NewLID(statLID), iba.OUIOpenIB, attr)
		if err != nil || got != want {
			t.Errorf("sysstat %#x: %q %v, want %q", attr, got, err, want)
		}
	}
	cpi, err := openib.SysStatClassPortInfo(ctx, f.MAD, ibpath.NewLID(statLID), iba.OUIOpenIB)
	if err != nil || cpi.BaseVersion != 1 || cpi.ClassVersion != 1 || cpi.RespTimeValue != 16 || cpi.TrapQKey != mad.QP1QKey {
		t.Errorf("sysstat ClassPortInfo: %+v %v", cpi, err)
	}
	if _, err := openib.Ping(ctx, f.MAD, ibpath.NewLID(pingLID), 0x1234); !errors.Is(err, mad.ErrTimeout) {
		t.Errorf("ping under another OUI: %v, want a timeout", err)
	}
}

func TestSysStatReply(t *testing.T) {
	cpus, err := openib.ParseCPUInfo(strings.NewReader("processor\t: 0\nmodel name\t: Fast CPU\ncpu MHz\t\t: 2000.0\n\nprocessor\t: 1\nmodel name\t: Fast CPU\n"))
	if err != nil || len(cpus) != 2 || cpus[0].Model != " Fast CPU" || cpus[0].MHz != " 2000.0" || cpus[1].MHz != "(null)" {
		t.Fatalf("cpus %q %v", cpus, err)
	}
	long := make([]openib.CPU, 20)
	for i := range long {
		long[i] = openib.CPU{Model: "m", MHz: "1"}
	}
	if r := openib.SysStatReply(openib.AttrCPUInfo, nil, openib.SysInfo{CPUs: long}); len(r) != openib.DataSize || r[openib.DataSize-1] != 0 {
		t.Errorf("a long CPU list must fit one MAD, NUL terminated")
	}
	if r := openib.SysStatReply(openib.AttrSysStatPing, []byte{1, 2, 3}, openib.SysInfo{}); r[0] != 1 || r[2] != 3 {
		t.Errorf("ping must echo the request")
	}
	many := strings.Repeat("processor\t: 0\n", 300)
	if cpus, err := openib.ParseCPUInfo(strings.NewReader(many)); err != nil || len(cpus) != 256 {
		t.Errorf("%d processors kept (%v), want 256", len(cpus), err)
	}
	if _, err := openib.ParseCPUInfo(strings.NewReader(strings.Repeat("x", 2<<20))); err == nil {
		t.Errorf("a 2 MiB line must be an error")
	}
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add([]byte("processor\t: 0\nmodel name\t: Fast CPU\ncpu MHz\t\t: 2000.0\n"))
	f.Add([]byte("model name\t: before any processor\nprocessor\t:\n:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cpus, _ := openib.ParseCPUInfo(strings.NewReader(string(b)))
		if len(cpus) > 256 {
			t.Fatalf("%d processors kept", len(cpus))
		}
		if r := openib.SysStatReply(openib.AttrCPUInfo, nil, openib.SysInfo{CPUs: cpus}); len(r) != openib.DataSize || r[openib.DataSize-1] != 0 {
			t.Fatalf("reply of %d bytes", len(r))
		}
	})
}

// An ibping and an ibsysstat query of a port of the in-process fabric,
// whose nodes answer the OpenIB classes themselves (with the first word of
// their description) until a program serves them there, as ServePing does.
func ExamplePing() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	lid := uint16(11) // hca3
	host, err := openib.Ping(ctx, f.MAD, ibpath.NewLID(lid), iba.OUIOpenIB)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("Pong from %s (Lid %d)\n", host, lid)
	host, err = openib.SysStat(ctx, f.MAD, ibpath.NewLID(lid), iba.OUIOpenIB, openib.AttrHostInfo)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sysstat host:", host)
	// Output:
	// Pong from hca3 (Lid 11)
	// sysstat host: hca3
}
