package ibpath

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

func mustGID(s string) iba.GID {
	g, err := iba.ParseGID(s)
	if err != nil {
		panic(err)
	}
	return g
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		mode Mode
		spec string // String() of the result
		dlid uint16
		dgid string
		dr   []byte
		port string
	}{
		{in: "12", spec: "IBPath(DLID=12)", dlid: 12},
		{in: "0xc", spec: "IBPath(DLID=12)", dlid: 12},
		{in: " 49151 ", spec: "IBPath(DLID=49151)", dlid: 0xbfff},
		{in: "0,1,4", spec: "IBDRPath(drPath=0:1:4:)", dr: []byte{0, 1, 4}},
		{in: "0,", spec: "IBDRPath(drPath=0:)", dr: []byte{0}},
		{in: "0,1,", spec: "IBDRPath(drPath=0:1:)", dr: []byte{0, 1}},
		{in: "0", mode: DirectRoute, spec: "IBDRPath(drPath=0:)", dr: []byte{0}},
		{in: "fe80::2:c903:0:1491", spec: "IBPath(DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491"},
		{in: "fe80::2:c903:0:1491%mlx4_0/1", spec: "IBPath(end_port='mlx4_0/1', DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491", port: "mlx4_0/1"},
		{in: "0002:c903:0000:1491", spec: "IBPath(DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491"},
		{in: "0:0:0:1", spec: "IBPath(DGID=fe80::1)", dgid: "fe80::1"},
		{in: "0002c90300001491", spec: "IBPath(DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491"},
		{in: "0x0002c90300001491", spec: "IBPath(DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491"},
		{in: "0x2c90300001491", mode: PortGUID, spec: "IBPath(DGID=fe80::2:c903:0:1491)", dgid: "fe80::2:c903:0:1491"},
		{in: "0x0002c90300001491", mode: NodeGUID, spec: "IBPath(nodeGUID=0x2c90300001491)"},
		{in: "5", mode: LIDOnly, spec: "IBPath(DLID=5)", dlid: 5},
		{in: "IBPath(DLID=5,SL=2,retries=3)", spec: "IBPath(DLID=5, SL=2, retries=3)", dlid: 5},
		{in: "IBPath(SLID=8,DLID=8,SL=2,pkey=0xFFF)", spec: "IBPath(DLID=8, SL=2, SLID=8, pkey=0xfff)", dlid: 8},
		{in: "IBPath(end_port='mlx4_0/1', DLID=5)", spec: "IBPath(end_port='mlx4_0/1', DLID=5)", dlid: 5, port: "mlx4_0/1"},
		{in: "IBPath(end_port=None, DLID=0xc001)", spec: "IBPath(DLID=0xc001)", dlid: 0xc001},
		{in: "IBPath(DGID=GID('fe80::1'), has_grh=True, hop_limit=255)", spec: "IBPath(DGID=fe80::1, has_grh=True, hop_limit=255)", dgid: "fe80::1"},
		{in: "IBDRPath(drPath=0:1:)", spec: "IBDRPath(drPath=0:1:)", dr: []byte{0, 1}},
		{in: "IBDRPath(drSLID=3, DLID=3, drPath=0:2:, drDLID=0xffff)", spec: "IBDRPath(DLID=3, drDLID=0xffff, drPath=0:2:, drSLID=3)", dr: []byte{0, 2}, dlid: 3},
		{in: "IBPath()", spec: "IBPath()"},
		{in: "IBPath(DLID=4, timeout=250, MKey=0x1, SMKey=0x2, qkey=0x80010000, dqpn=1)", spec: "IBPath(DLID=4, MKey=0x1, SMKey=0x2, dqpn=1, qkey=0x80010000, timeout=250)", dlid: 4},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			p, err := Parse(tc.in, Options{Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tc.spec {
				t.Errorf("String() = %s, want %s", got, tc.spec)
			}
			q, err := Parse(p.String(), Options{})
			if err != nil || q.String() != p.String() {
				t.Errorf("round trip: %v, %v", q, err)
			}
			if p.Port() != tc.port {
				t.Errorf("end port %q, want %q", p.Port(), tc.port)
			}
			switch v := p.(type) {
			case *DRPath:
				if !slices.Equal(v.DrPath, tc.dr) {
					t.Errorf("DR path %v, want %v", v.DrPath, tc.dr)
				}
				r := v.Route()
				if r.DR == nil || !slices.Equal(r.DR.Path, tc.dr) {
					t.Errorf("route %+v", r)
				}
			case *IBPath:
				if tc.dr != nil {
					t.Fatalf("got %T", p)
				}
				if v.DLID != tc.dlid {
					t.Errorf("DLID %d, want %d", v.DLID, tc.dlid)
				}
				if tc.dgid != "" && v.DGID != mustGID(tc.dgid) {
					t.Errorf("DGID %v, want %s", v.DGID, tc.dgid)
				}
				if r := v.Route(); r.Addr.LID != tc.dlid || r.DR != nil {
					t.Errorf("route %+v", r)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		in   string
		mode Mode
	}{
		{in: ""}, {in: "0"}, {in: "0xc000"}, {in: "65535"}, {in: "70000"}, {in: "-1"}, {in: "abc"},
		{in: "1,2"}, {in: "0,255"}, {in: "0,1,x"}, {in: ","},
		{in: "fe80::1%"}, {in: "fe80::1%a b"}, {in: "zz::1%mlx4_0/1"},
		{in: "0002:c903:0000:1491:5"}, {in: "00002:c903:0000:1491"},
		{in: "IBPath(DLID=5"}, {in: "Foo(DLID=5)"}, {in: "IBPath(DLID)"}, {in: "IBPath(DLID=)"},
		{in: "IBPath(nothere=1)"}, {in: "IBPath(DLID=70000)"}, {in: "IBPath(SL=16)"}, {in: "IBPath(drPath=0:1:)"},
		{in: "IBPath(DLID=1, DLID=2)"}, {in: "IBPath(DGID=GID('x'))"}, {in: "IBPath(has_grh=maybe)"},
		{in: "IBDRPath(drPath=1:2:)"}, {in: "IBDRPath(drPath=:)"}, {in: "IBPath(__import__('os')=1)"},
		{in: "12", mode: DirectRoute}, {in: "0,1", mode: LIDOnly}, {in: "xyz", mode: NodeGUID},
		{in: "IBPath(DLID=5)", mode: DirectRoute},
	}
	for _, tc := range cases {
		p, err := Parse(tc.in, Options{Mode: tc.mode})
		if err == nil {
			t.Errorf("Parse(%q, %d) = %v, want an error", tc.in, tc.mode, p)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q): %v does not match ErrSyntax", tc.in, err)
		}
	}
	long := make([]byte, maxSpec+1)
	if _, err := Parse(string(long), Options{}); err == nil {
		t.Error("an over-long target was accepted")
	}
	hops := "0"
	for i := 0; i < 64; i++ {
		hops += ",1"
	}
	if _, err := Parse(hops, Options{}); err == nil {
		t.Error("a 64-hop DR path was accepted")
	}
}

func TestDefaultEndPort(t *testing.T) {
	p, err := Parse("5", Options{EndPort: "mlx5_0/1"})
	if err != nil || p.Port() != "mlx5_0/1" {
		t.Fatalf("%v %v", p, err)
	}
	p, err = Parse("fe80::1%mlx5_1/2", Options{EndPort: "mlx5_0/1"})
	if err != nil || p.Port() != "mlx5_1/2" {
		t.Fatalf("%v %v", p, err)
	}
}

func TestRouteTiming(t *testing.T) {
	p, _ := Parse("IBPath(DLID=5, retries=3, timeout=250)", Options{})
	r := p.Route()
	if r.Tries != 4 || r.Timeout != 250*time.Millisecond {
		t.Errorf("tries %d timeout %v", r.Tries, r.Timeout)
	}
	p, _ = Parse("IBPath(DLID=5, resp_time=14, packet_life_time=10)", Options{})
	// 4.096 µs × (2^11 + 2^14) = 75.5 ms
	if d := p.Route().Timeout; d < 75*time.Millisecond || d > 76*time.Millisecond {
		t.Errorf("timeout %v", d)
	}
	p, _ = Parse("5", Options{})
	if r := p.Route(); r.Tries != 0 || r.Timeout != 0 {
		t.Errorf("a plain LID sets timing: %+v", r)
	}
	p, _ = Parse("IBDRPath(drSLID=3, DLID=3, drPath=0:2:)", Options{})
	if r := p.Route(); r.Addr.LID != 3 || r.DR.DrSLID != 3 || r.DR.DrDLID != mad.LIDPermissive {
		t.Errorf("LID-routed start: %+v %+v", r.Addr, r.DR)
	}
	if s := p.Route().String(); s != "IBDRPath(DLID=3, drPath=0:2:, drSLID=3)" {
		t.Errorf("route name %q", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"12", "0xc", "0,1,4", "0,", "fe80::2:c903:0:1491", "fe80::2:c903:0:1491%mlx4_0/1",
		"0002:c903:0000:1491", "0x0002c90300001491", "IBPath(DLID=5,SL=2,retries=3)",
		"IBDRPath(drPath=0:1:)", "IBPath(end_port='mlx4_0/1', DGID=GID('fe80::1'), has_grh=True)",
		"IBDRPath(drSLID=3, DLID=3, drPath=0:2:, drDLID=7)", "IBPath(", "IBPath(=)", "0,,", "::",
	} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, mode uint8) {
		p, err := Parse(s, Options{Mode: Mode(mode % 5)})
		if err != nil {
			return
		}
		spec := p.String()
		q, err := Parse(spec, Options{})
		if err != nil {
			t.Fatalf("Parse(%q) printed %q, which does not parse: %v", s, spec, err)
		}
		if q.String() != spec {
			t.Fatalf("round trip of %q: %q then %q", s, spec, q.String())
		}
		_ = p.Route()
	})
}
