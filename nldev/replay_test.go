package nldev_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/rdmakit/rdmakit/nldev"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// replayDir holds the exchanges recorded from the VM kernel (Debian's 6.1
// with rxe0 on dummy0 and siw0 on dummy1, while an ibv_rc_pingpong pair, an
// rping pair on each device and an ib_send_bw pair with an SRQ ran); they are
// refreshed with `go test ./nldev -run TestVM -record`.
const replayDir = "testdata/replay"

// devs are the indices of the VM's two devices.
type devs struct{ rxe, siw uint32 }

func findDevs(ctx context.Context, c *nldev.Conn) (devs, error) {
	var d devs
	list, err := c.Dev.List(ctx)
	if err != nil {
		return d, err
	}
	found := 0
	for _, x := range list {
		switch x.Name {
		case "rxe0":
			d.rxe = x.Index
			found++
		case "siw0":
			d.siw = x.Index
			found++
		}
	}
	if found != 2 {
		return d, fmt.Errorf("want rxe0 and siw0, have %d devices", len(list))
	}
	return d, nil
}

// replayCase is one call of the library, recorded in the VM and replayed
// here. Each starts by listing the devices to learn their indices.
type replayCase struct {
	name  string
	fails bool // the kernel refuses it
	call  func(ctx context.Context, c *nldev.Conn, d devs) (any, error)
}

// both runs a per-device dump on rxe0 and on siw0.
func both[T any](f func(ctx context.Context, q nldev.Query) ([]T, error)) func(context.Context, *nldev.Conn, devs) (any, error) {
	return func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		a, err := f(ctx, nldev.Query{Dev: d.rxe})
		if err != nil {
			return nil, err
		}
		b, err := f(ctx, nldev.Query{Dev: d.siw})
		return append(a, b...), err
	}
}

var replayCases = []replayCase{
	{name: "dev-list", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Dev.List(ctx) }},
	{name: "dev-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		a, err := c.Dev.Get(ctx, d.rxe)
		if err != nil {
			return nil, err
		}
		b, err := c.Dev.Get(ctx, d.siw)
		return []*nldev.Device{a, b}, err
	}},
	{name: "dev-get-nosuch", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Dev.Get(ctx, 4242) }},
	{name: "link-list", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Link.List(ctx) }},
	{name: "link-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		a, err := c.Link.Get(ctx, d.rxe, 1)
		if err != nil {
			return nil, err
		}
		b, err := c.Link.Get(ctx, d.siw, 1)
		return []*nldev.Port{a, b}, err
	}},
	{name: "link-get-noport", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Link.Get(ctx, d.rxe, 7) }},
	{name: "res-summary", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Res.Summary(ctx) }},
	{name: "res-summary-of", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Res.SummaryOf(ctx, d.siw) }},
	{name: "res-qp", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.QPs)(ctx, c, d) }},
	{name: "res-qp-port-details", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.QPs(ctx, nldev.Query{Dev: d.rxe, Port: 1, DriverDetails: true})
	}},
	{name: "res-qp-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		// The first QP of a process (kernel QPs, such as the GSI QP,
		// are not found by number: ENOENT).
		qps, err := c.Res.QPs(ctx, nldev.Query{Dev: d.rxe})
		if err != nil {
			return nil, err
		}
		for _, q := range qps {
			if q.PID != 0 {
				return c.Res.QP(ctx, nldev.Query{Dev: d.rxe, Port: q.Port}, q.LQPN)
			}
		}
		return nil, errors.New("no user QP on rxe0")
	}},
	{name: "res-qp-get-kernel", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.QP(ctx, nldev.Query{Dev: d.rxe, Port: 1}, 1)
	}},
	{name: "res-qp-raw", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.QPs(ctx, nldev.Query{Dev: d.rxe, Raw: true})
	}},
	{name: "res-cmid", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.CMIDs)(ctx, c, d) }},
	{name: "res-cmid-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.CMID(ctx, nldev.Query{Dev: d.siw, Port: 1}, 0)
	}},
	{name: "res-cq", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.CQs)(ctx, c, d) }},
	{name: "res-cq-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.CQ(ctx, nldev.Query{Dev: d.rxe}, 0)
	}},
	{name: "res-mr", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.MRs)(ctx, c, d) }},
	{name: "res-mr-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.MR(ctx, nldev.Query{Dev: d.siw}, 0)
	}},
	{name: "res-pd", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.PDs)(ctx, c, d) }},
	{name: "res-pd-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.PD(ctx, nldev.Query{Dev: d.rxe}, 0)
	}},
	{name: "res-ctx", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.Ctxs)(ctx, c, d) }},
	{name: "res-ctx-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.Ctx(ctx, nldev.Query{Dev: d.siw}, 0)
	}},
	{name: "res-srq", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return both(c.Res.SRQs)(ctx, c, d) }},
	{name: "res-srq-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return c.Res.SRQ(ctx, nldev.Query{Dev: d.rxe}, 0)
	}},
	{name: "sys-get", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Sys.Get(ctx) }},
	{name: "stat-port", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Stat.Port(ctx, d.rxe, 1) }},
	{name: "stat-port-siw", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Stat.Port(ctx, d.siw, 1) }},
	{name: "stat-mode", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Stat.Mode(ctx, d.rxe, 1) }},
	{name: "stat-status", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Stat.Status(ctx, d.rxe, 1) }},
	{name: "stat-counters", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) { return c.Stat.Counters(ctx, d.rxe, 1) }},
	{name: "stat-set-auto", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return nil, c.Stat.SetAuto(ctx, d.rxe, 1, 0, nil)
	}},
	{name: "dev-set-dim", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return nil, c.Dev.SetAdaptiveModeration(ctx, d.rxe, false)
	}},
	{name: "newdev-unsupported", fails: true, call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		return nil, c.Dev.Add(ctx, d.rxe, "smi9", nldev.DeviceType(1))
	}},
	{name: "link-add-delete", call: func(ctx context.Context, c *nldev.Conn, d devs) (any, error) {
		if err := c.Link.Add(ctx, "rxerec", "rxe", "lo"); err != nil {
			return nil, err
		}
		again := c.Link.Add(ctx, "rxerec2", "rxe", "lo") // lo carries rxerec already
		list, err := c.Dev.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range list {
			if x.Name == "rxerec" {
				return map[string]string{"second add": fmt.Sprint(again)}, c.Link.Delete(ctx, x.Index)
			}
		}
		return nil, errors.New("rxerec did not appear")
	}},
}

// runCase runs one case and renders its outcome for the golden file.
func runCase(ctx context.Context, c *nldev.Conn, rc replayCase) (string, error) {
	d, err := findDevs(ctx, c)
	if err != nil {
		return "", err
	}
	v, err := rc.call(ctx, c, d)
	if (err != nil) != rc.fails {
		return "", fmt.Errorf("%s: error %v, want failure %v", rc.name, err, rc.fails)
	}
	if err != nil {
		return "error: " + err.Error() + "\n", nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

// TestReplay runs every case against the kernel's recorded replies: the
// decoded values must match the golden file, no attribute the 6.1 kernel
// sends may be left undecoded, and every reply must re-encode to the
// kernel's own bytes.
func TestReplay(t *testing.T) {
	for _, rc := range replayCases {
		t.Run(rc.name, func(t *testing.T) {
			ex, err := nldevtest.ReadFile(filepath.Join(replayDir, rc.name+".nl"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := runCase(context.Background(), nldevtest.Replay(t, ex), rc)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, `"Unknown": [`) {
				t.Errorf("attributes left undecoded:\n%s", got)
			}
			golden(t, got)
			for _, e := range ex {
				for _, m := range e.Replies {
					if m.Header.Type == netlink.Error || m.Header.Type == netlink.Done {
						continue
					}
					attrs, err := nldev.UnmarshalAttributes(m.Data)
					if err != nil {
						t.Fatalf("reply to %#x: %v", uint16(e.Request.Header.Type), err)
					}
					again, err := nldev.MarshalAttributes(attrs)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(again, m.Data) {
						t.Errorf("reply to %#x re-encodes differently:\nkernel %x\nours   %x", uint16(e.Request.Header.Type), m.Data, again)
					}
				}
			}
		})
	}
}

func golden(t *testing.T, got string) {
	t.Helper()
	p := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s:\n--- got\n%s--- want\n%s", p, got, want)
	}
}
