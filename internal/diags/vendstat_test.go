package diags

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
)

// fakeMlx is a Mellanox vendor class agent (class 0x0A) that ibsim does
// not have: general info of a device, a config space, counter groups.
type fakeMlx struct {
	deviceID uint16
	mu       sync.Mutex
	regs     map[uint32]uint32
	groups   [2]byte
}

func (f *fakeMlx) handle(_ context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
	in := req.Data()
	d := make([]byte, mlxDataSize)
	copy(d, in)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch req.AttrID {
	case mlxAttrClassPortInfo:
		clear(d)
		d[0], d[1] = 1, 1
	case mlxAttrGeneralInfo:
		clear(d)
		binary.BigEndian.PutUint16(d[8:], 0xa1)
		binary.BigEndian.PutUint16(d[10:], f.deviceID)
		binary.BigEndian.PutUint32(d[36:], 0x12345)
		d[41], d[42], d[43] = 5, 2, 3
		binary.BigEndian.PutUint32(d[44:], 0x77)
		d[48], d[49] = 0x11, 0x23
		binary.BigEndian.PutUint16(d[50:], 0x2009)
		copy(d[56:72], "MT_0000000001")
		binary.BigEndian.PutUint32(d[72:], 7)
		d[77], d[78], d[79] = 1, 2, 3 // IS3 software version
		binary.BigEndian.PutUint32(d[76:], 12)
		binary.BigEndian.PutUint32(d[80:], 1)
		binary.BigEndian.PutUint32(d[84:], 2010) // extended firmware
		d[105], d[106], d[107] = 4, 5, 6         // extended software version
	case mlxAttrConfigSpaceAccess:
		n := int(req.AttrMod>>16) & 0x3f
		for i := 0; i < n && i < 18; i++ {
			r := d[8+12*i:]
			addr, data, mask := binary.BigEndian.Uint32(r), binary.BigEndian.Uint32(r[4:]), binary.BigEndian.Uint32(r[8:])
			// Writes are answered but not kept: the C tool and ours run
			// side by side against the same agent.
			v := f.regs[addr]
			if (addr>>12)%3 != 0 {
				v = addr ^ 0x5a5a // a counter that moved on most ports
			}
			if req.Method == iba.MethodSet {
				v = v&^mask | data&mask
			}
			binary.BigEndian.PutUint32(r[4:], v)
		}
	case mlxAttrCounterGroupInfo:
		clear(d)
		d[11] = 2
		binary.BigEndian.PutUint32(d[12:], 0x3)
		binary.BigEndian.PutUint32(d[16:], 0xff00)
	case mlxAttrConfigCounterGroup:
		if req.Method == iba.MethodSet {
			f.groups = [2]byte{in[15], in[19]}
		}
		clear(d)
		d[15], d[19] = f.groups[0], f.groups[1]
	default:
		return nil, mad.ErrMethodAttrUnsupported
	}
	return &mad.ServerReply{Data: d}, nil
}

// serveFakeMlx attaches a fake agent to node as its SM client, the client
// ibsim hands the class 0x0A requests for that node to.
func serveFakeMlx(t *testing.T, l *live, node string, f *fakeMlx) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: l.sim.SockName, Node: node, ISSM: true})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr)
	done := make(chan error, 1)
	go func() {
		done <- mc.Serve(ctx, iba.ClassMellanox, 1, []iba.Method{iba.MethodGet, iba.MethodSet}, f.handle)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("fake agent on %s: %v", node, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("fake agent on %s did not stop", node)
		}
		mc.Close()
	})
}

// TestVendStatLive compares vendstat with the C vendstat against fake
// Mellanox agents on two switches of the ibsim fabric (an InfiniScale III
// and a Switch-IB, which reports the extended firmware version), and
// against a port that has no such agent.
func TestVendStatLive(t *testing.T) { eachRelease(t, testVendStatLive) }

func testVendStatLive(t *testing.T, p peers) {
	l := startLive(t, p)
	serveFakeMlx(t, l, "S-spine-1", &fakeMlx{deviceID: mlxIS3DeviceID, regs: map[uint32]uint32{}})
	serveFakeMlx(t, l, "S-leaf-2", &fakeMlx{deviceID: 0xcb20, regs: map[uint32]uint32{}})
	is3, sib := strconv.Itoa(l.lid["S-spine-1"]), strconv.Itoa(l.lid["S-leaf-2"])
	none := strconv.Itoa(l.lid["H-4"])
	cases := [][]string{
		{"-N", is3}, {"-w", is3}, {"-N", "-w", is3}, {"-N", sib}, {"-w", sib},
		{"-i", is3, "3"}, {"-c", "0,1", is3, "3"}, {"-c", "2,8", sib, "1"},
		{"-R", "0x1000", is3}, {"-R", "0x1000,0xff", "-R", "0x3000", is3},
		{"-W", "0x3000,0x55", is3}, {"-W", "0x4000,0x55,0xf0", "-R", "0x4000", is3},
		{"-G", "-N", "0x" + strconv.FormatUint(uint64(l.f.Node("S-leaf-2").GUID), 16)},
		{is3},                             // neither -N nor -w
		{"-t", "200", "-N", none},         // no agent: classportinfo query
		{"-t", "200", "-i", none, "1"},    // reported, exit 0
		{"-t", "200", "-R", "0x10", none}, // reported, exit 0
		{"-c", "1", is3},                  // usage
		{"-W", "0x10", is3},               // usage
	}
	l.compareAll(t, "vendstat", cases)
	// python-rdma's --cpi: the agent's ClassPortInfo (versions 1, 1).
	out, errOut, code := l.ours(t, "vendstat", "--cpi", is3)
	if code != 0 || !strings.HasPrefix(out, "BaseVersion......................1\nClassVersion.....................1\n") {
		t.Errorf("--cpi: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = l.ours(t, "vendstat", "--json", "-N", "-w", is3)
	var doc struct{ Result VendStatResult }
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc.Result.GeneralInfo == nil || len(doc.Result.XmitWait) == 0 {
		t.Fatalf("--json: exit %d\n%s%s", code, out, errOut)
	}
	// The LID is OpenSM's choice; the rest comes from the fake agent.
	golden(t, "is3", strings.Replace(out, `"target": "Lid `+is3+`"`, `"target": "Lid N"`, 1))
}

func TestVendStatScan(t *testing.T) {
	for in, want := range map[string][]uint32{
		"10": {0x10}, "0x10,ff": {0x10, 0xff}, "1,2,3": {1, 2, 3}, "zz": nil, "5,zz": {5}, "5;6": {5},
	} {
		got := scanHex(in, 3)
		if len(got) != len(want) {
			t.Errorf("scanHex(%q) = %x, want %x", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("scanHex(%q) = %x, want %x", in, got, want)
			}
		}
	}
}
