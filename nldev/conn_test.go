package nldev

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// kernel fakes the NLDEV family: handle sees each decoded request and
// returns the attribute payloads of the replies.
type kernel struct {
	t      *testing.T
	reqs   []netlink.Message
	handle func(cmd Command, flags netlink.HeaderFlags, attrs []Attribute) ([][]byte, error)
}

func (k *kernel) conn() *Conn {
	return NewConn(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
		if len(req) == 0 {
			return nil, nil
		}
		k.reqs = append(k.reqs, req...)
		m := req[0]
		typ := uint16(m.Header.Type)
		if typ>>10 != ClientNLDEV {
			k.t.Fatalf("request to client %d, want NLDEV", typ>>10)
		}
		attrs, err := UnmarshalAttributes(m.Data)
		if err != nil {
			k.t.Fatalf("request attributes: %v", err)
		}
		payloads, err := k.handle(Command(typ&0x3ff), m.Header.Flags, attrs)
		if err != nil {
			var errno unix.Errno
			if errors.As(err, &errno) {
				msgs, err := nltest.Error(int(errno), req)
				msgs[0].Header.Flags = 0 // the kernel's flags, not the request's
				return msgs, err
			}
			return nil, err
		}
		var out []netlink.Message
		for _, p := range payloads {
			out = append(out, netlink.Message{Header: netlink.Header{Type: m.Header.Type, Sequence: m.Header.Sequence, PID: m.Header.PID}, Data: p})
		}
		switch {
		case m.Header.Flags&netlink.Dump != 0:
			// The kernel ends a dump with NLMSG_DONE; Multipart turns the
			// last message into it.
			h := m.Header
			h.Type, h.Flags = netlink.Done, netlink.Multi
			return nltest.Multipart(append(out, netlink.Message{Header: h, Data: make([]byte, 4)}))
		case m.Header.Flags&netlink.Acknowledge != 0:
			return nltest.Error(0, req)
		}
		return out, nil
	}))
}

func attrU32(attrs []Attribute, t Attr) (uint32, bool) {
	for _, a := range attrs {
		if a.Type == t {
			return uint32(a.Uint), true
		}
	}
	return 0, false
}

// rxe0 as a 6.1 kernel describes it, built with mdlayher's encoder (not
// ours); with pads, as an architecture without efficient unaligned access
// sends it (nla_put_u64_64bit inserts PAD attributes), else as x86-64 does.
func rxeDeviceBytes(t *testing.T, pads bool) []byte {
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(uint16(AttrDevIndex), 1)
	ae.String(uint16(AttrDevName), "rxe0")
	ae.Uint32(uint16(AttrPortIndex), 1)
	ae.Uint64(uint16(AttrCapFlags), 0x2000000000030a4) // already 8-byte aligned: no PAD
	ae.String(uint16(AttrFWVersion), "")
	if pads {
		ae.Bytes(0, nil) // PAD, as nla_put_u64_64bit writes it
	}
	ae.Uint64(uint16(AttrNodeGUID), 0x5054_00ff_fe12_3456)
	if pads {
		ae.Bytes(0, nil)
	}
	ae.Uint64(uint16(AttrSysImageGUID), 0x5054_00ff_fe12_3456)
	ae.Uint8(uint16(AttrDevNodeType), 1)
	ae.String(uint16(AttrDevProtocol), "roce")
	ae.Uint8(uint16(AttrDevDIM), 0)
	ae.Uint32(200, 7) // an attribute from a future kernel
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDevList(t *testing.T) {
	k := &kernel{t: t, handle: func(cmd Command, flags netlink.HeaderFlags, attrs []Attribute) ([][]byte, error) {
		if cmd != CmdGet || flags&netlink.Dump == 0 {
			t.Fatalf("got %v flags %v, want a GET dump", cmd, flags)
		}
		return [][]byte{rxeDeviceBytes(t, true)}, nil
	}}
	devs, err := k.conn().Dev.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 {
		t.Fatalf("%d devices", len(devs))
	}
	d := devs[0]
	if d.Index != 1 || d.Name != "rxe0" || d.NumPorts != 1 || d.Protocol != "roce" || d.NodeType != 1 || d.CapFlags != 0x2000000000030a4 {
		t.Fatalf("decoded %+v", d)
	}
	// The kernel sends be64_to_cpu(guid): iproute2 prints it as four
	// host-order 16-bit groups from the top, which Colon does.
	if got := d.NodeGUID.Colon(); got != "5054:00ff:fe12:3456" {
		t.Fatalf("node GUID %s", got)
	}
	if !d.Has(AttrDevDIM) || d.Has(AttrParentName) || !d.Has(AttrFWVersion) {
		t.Fatal("presence not recorded")
	}
	if len(d.Unknown) != 1 || d.Unknown[0].Type != 200 || d.Unknown[0].Kind != KindUnknown || binary.NativeEndian.Uint32(d.Unknown[0].Data) != 7 {
		t.Fatalf("unknown attribute not kept raw: %+v", d.Unknown)
	}
	// Our encoder reproduces the kernel's bytes as x86-64 sends them.
	d.Unknown = nil
	got, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := rxeDeviceBytes(t, false)
	want = want[:len(want)-8] // without the future attribute
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("re-encoded device differs (-kernel +ours):\n%s", diff)
	}
}

func TestErrorsCarryErrnoAndExtAck(t *testing.T) {
	k := &kernel{t: t, handle: func(cmd Command, _ netlink.HeaderFlags, attrs []Attribute) ([][]byte, error) {
		return nil, unix.ENODEV
	}}
	_, err := k.conn().Dev.Get(context.Background(), 9)
	var oe *OpError
	if !errors.As(err, &oe) || !errors.Is(err, unix.ENODEV) || oe.Op != "RDMA_NLDEV_CMD_GET" {
		t.Fatalf("got %#v", err)
	}
	if errors.Is(err, ErrNotSupported) {
		t.Fatal("ENODEV is not 'not supported'")
	}

	// An extended ack: NLMSGERR_ATTR_MSG after the echoed request header.
	c := NewConn(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
		errno := -int32(unix.EOPNOTSUPP)
		data := binary.NativeEndian.AppendUint32(nil, uint32(errno))
		hdr := make([]byte, 16)
		binary.NativeEndian.PutUint32(hdr, 16)
		data = append(data, hdr...)
		ae := netlink.NewAttributeEncoder()
		ae.String(unix.NLMSGERR_ATTR_MSG, "Device doesn't support this")
		tlv, _ := ae.Encode()
		data = append(data, tlv...)
		return []netlink.Message{{Header: netlink.Header{Type: netlink.Error, Flags: netlink.Capped | netlink.AcknowledgeTLVs, Sequence: req[0].Header.Sequence, PID: req[0].Header.PID}, Data: data}}, nil
	}))
	err = c.Dev.SetAdaptiveModeration(context.Background(), 1, true)
	if !errors.As(err, &oe) || oe.Message != "Device doesn't support this" || !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("got %v", err)
	}
}

func TestRequestsCarryTheRightAttributes(t *testing.T) {
	type call struct {
		cmd   Command
		flags netlink.HeaderFlags
		attrs []Attribute
	}
	var got []call
	k := &kernel{t: t, handle: func(cmd Command, flags netlink.HeaderFlags, attrs []Attribute) ([][]byte, error) {
		for i := range attrs {
			attrs[i].Data = nil
		}
		got = append(got, call{cmd, flags, attrs})
		return nil, nil
	}}
	c := k.conn()
	ctx := context.Background()
	on := true
	for _, err := range []error{
		c.Dev.SetName(ctx, 3, "mlx"),
		c.Link.Add(ctx, "rxe1", "rxe", "eth0"),
		c.Link.Delete(ctx, 4),
		c.Sys.SetNetNSMode(ctx, true),
		c.Stat.SetAuto(ctx, 1, 1, CounterMaskQPType, &on),
		c.Stat.Bind(ctx, 1, 1, 17, 0),
		c.Stat.Unbind(ctx, 1, 1, 2, 17),
		c.Stat.SetOptional(ctx, 1, 1, []uint32{5, 6}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ack := netlink.Request | netlink.Acknowledge
	want := []call{
		{CmdSet, ack, []Attribute{U32(AttrDevIndex, 3), String(AttrDevName, "mlx")}},
		{CmdNewlink, ack, []Attribute{String(AttrDevName, "rxe1"), String(AttrLinkType, "rxe"), String(AttrNdevName, "eth0")}},
		{CmdDellink, ack, []Attribute{U32(AttrDevIndex, 4)}},
		{CmdSysSet, ack, []Attribute{U8(AttrSysNetNSMode, 1)}},
		{CmdStatSet, ack, []Attribute{U32(AttrDevIndex, 1), U32(AttrPortIndex, 1), U32(AttrStatRes, uint32(AttrResQP)), U32(AttrStatMode, 1), U32(AttrStatAutoModeMask, 1), U8(AttrStatOpCounterEnabled, 1)}},
		{CmdStatSet, ack, []Attribute{U32(AttrStatMode, 2), U32(AttrStatRes, uint32(AttrResQP)), U32(AttrDevIndex, 1), U32(AttrPortIndex, 1), U32(AttrResLQPN, 17)}},
		{CmdStatDel, ack, []Attribute{U32(AttrStatMode, 2), U32(AttrStatRes, uint32(AttrResQP)), U32(AttrDevIndex, 1), U32(AttrPortIndex, 1), U32(AttrStatCounterID, 2), U32(AttrResLQPN, 17)}},
		{CmdStatSet, ack, []Attribute{U32(AttrDevIndex, 1), U32(AttrPortIndex, 1), Nest(AttrStatHWCounters, U32(AttrStatHWCounterIndex, 5), U32(AttrStatHWCounterIndex, 6))}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(call{}), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Attribute{}, "Data")); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
}

func TestContextCancelled(t *testing.T) {
	k := &kernel{t: t, handle: func(Command, netlink.HeaderFlags, []Attribute) ([][]byte, error) { return nil, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := k.conn().Dev.List(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if _, err := k.conn().Dev.List(ctx); err != nil {
		t.Fatal(err)
	}
}

// Resource dumps: each entry type decoded from a table in the kernel's
// layout (DEV_INDEX, DEV_NAME, table, entries), with the device copied in.
func TestResourceDumps(t *testing.T) {
	src := netip.MustParseAddrPort("192.168.1.5:7174")
	dst := netip.MustParseAddrPort("[fe80::1]:4791")
	tables := map[Command][]Attribute{
		CmdResQPGet: {Nest(AttrResQP,
			Nest(AttrResQPEntry, U32(AttrPortIndex, 1), U32(AttrResLQPN, 17), U32(AttrResRQPN, 18), U32(AttrResRQPSN, 100), U32(AttrResSQPSN, 200),
				U8(AttrResPathMigState, 0), U8(AttrResType, 2), U8(AttrResState, 3), U32(AttrResPDN, 4), U32(AttrResPID, 321),
				Nest(AttrDriver, String(AttrDriverString, "sqn"), U8(AttrDriverPrintType, 1), U32(AttrDriverU32, 0x1f),
					String(AttrDriverString, "neg"), Attribute{Type: AttrDriverS64, Kind: KindS64, Int: -5})),
			Nest(AttrResQPEntry, U32(AttrResLQPN, 1), U32(AttrResSQPSN, 0), U8(AttrResType, 1), U8(AttrResState, 3), String(AttrResKernName, "ib_core")))},
		CmdResCMIDGet: {Nest(AttrResCMID, Nest(AttrResCMIDEntry, U32(AttrPortIndex, 1), U32(AttrResLQPN, 17), U8(AttrResType, 2),
			U8(AttrResState, 5), U32(AttrResPS, 0x106), Binary(AttrResSrcAddr, SockaddrStorage(src)), Binary(AttrResDstAddr, SockaddrStorage(dst)),
			U32(AttrResPID, 99), U32(AttrResCMIDN, 3)))},
		CmdResCQGet: {Nest(AttrResCQ, Nest(AttrResCQEntry, U32(AttrResCQE, 255), U64(AttrResUseCnt, 2), U8(AttrResPollCtx, 1), U8(AttrDevDIM, 1),
			U32(AttrResCQN, 7), U32(AttrResCTXN, 1), String(AttrResKernName, "ib_mad")))},
		CmdResMRGet: {Nest(AttrResMR, Nest(AttrResMREntry, U32(AttrResRKey, 0x1234), U32(AttrResLKey, 0x5678), U64(AttrResIOVA, 0x7f00_1234_5678),
			U64(AttrResMRLen, 4096), U32(AttrResPDN, 2), U32(AttrResMRN, 9), U32(AttrResPID, 5)))},
		CmdResPDGet: {Nest(AttrResPD, Nest(AttrResPDEntry, U32(AttrResLocalDMALKey, 0), U64(AttrResUseCnt, 3), U32(AttrResUnsafeGlobalRKey, 0x99),
			U32(AttrResPDN, 2), U32(AttrResCTXN, 1), U32(AttrResPID, 5)))},
		CmdResCtxGet: {Nest(AttrResCtx, Nest(AttrResCtxEntry, U32(AttrResCTXN, 1), U32(AttrResPID, 5)))},
		CmdResSRQGet: {Nest(AttrResSRQ, Nest(AttrResSRQEntry, U32(AttrResSRQN, 3), U8(AttrResType, 0), U32(AttrResPDN, 2), U32(AttrResCQN, 7),
			Nest(AttrResQP, Nest(AttrResQPEntry, U32(AttrResLQPN, 5)), Nest(AttrResQPEntry, U32(AttrMinRange, 8), U32(AttrMaxRange, 11))), U32(AttrResPID, 5)))},
		CmdStatGet: {Nest(AttrStatCounter, Nest(AttrStatCounterEntry, U32(AttrPortIndex, 1), U32(AttrStatCounterID, 2), U8(AttrResType, 2), U32(AttrResPID, 5),
			Nest(AttrStatHWCounters, Nest(AttrStatHWCounterEntry, String(AttrStatHWCounterEntryName, "rx_write_requests"), U64(AttrStatHWCounterEntryValue, 12))),
			Nest(AttrResQP, Nest(AttrResQPEntry, U32(AttrResLQPN, 17)), Nest(AttrResQPEntry, U32(AttrResLQPN, 18)))))},
	}
	k := &kernel{t: t, handle: func(cmd Command, flags netlink.HeaderFlags, attrs []Attribute) ([][]byte, error) {
		if flags&netlink.Dump == 0 {
			t.Fatalf("%v: not a dump", cmd)
		}
		if dev, _ := attrU32(attrs, AttrDevIndex); dev != 2 {
			t.Fatalf("%v: dump of device %d", cmd, dev)
		}
		body := append([]Attribute{U32(AttrDevIndex, 2), String(AttrDevName, "siw0")}, tables[cmd]...)
		b, err := MarshalAttributes(body)
		return [][]byte{b}, err
	}}
	c, ctx, q := k.conn(), context.Background(), Query{Dev: 2}

	qps, err := c.Res.QPs(ctx, q)
	if err != nil || len(qps) != 2 {
		t.Fatalf("QPs: %v %d", err, len(qps))
	}
	if qps[0].DevName != "siw0" || qps[0].DevIndex != 2 || qps[0].LQPN != 17 || qps[0].RQPN != 18 || qps[0].State != 3 || qps[0].PID != 321 || !qps[0].Has(AttrResRQPN) {
		t.Fatalf("QP %+v", qps[0])
	}
	if d := qps[0].Driver; len(d) != 2 || d[0].Name != "sqn" || d[0].PrintType != PrintTypeHex || d[0].Value.Uint != 0x1f || d[1].Value.Int != -5 {
		t.Fatalf("driver table %+v", d)
	}
	if qps[1].KernName != "ib_core" || qps[1].Has(AttrResPID) || qps[1].Has(AttrPortIndex) {
		t.Fatalf("kernel QP %+v", qps[1])
	}
	cms, err := c.Res.CMIDs(ctx, q)
	if err != nil || len(cms) != 1 {
		t.Fatalf("CM IDs: %v", err)
	}
	if s, ok := cms[0].Src(); !ok || s != src {
		t.Fatalf("src %v", s)
	}
	if d, ok := cms[0].Dst(); !ok || d != dst || cms[0].PS != 0x106 || cms[0].CMIDN != 3 {
		t.Fatalf("dst %v %+v", d, cms[0])
	}
	cqs, err := c.Res.CQs(ctx, q)
	if err != nil || len(cqs) != 1 || cqs[0].CQE != 255 || cqs[0].Users != 2 || cqs[0].PollCtx != 1 || cqs[0].DIM != 1 || cqs[0].KernName != "ib_mad" {
		t.Fatalf("CQs: %v %+v", err, cqs)
	}
	mrs, err := c.Res.MRs(ctx, q)
	if err != nil || len(mrs) != 1 || mrs[0].IOVA != 0x7f00_1234_5678 || mrs[0].RKey != 0x1234 || mrs[0].MRLen != 4096 || mrs[0].MRN != 9 {
		t.Fatalf("MRs: %v %+v", err, mrs)
	}
	pds, err := c.Res.PDs(ctx, q)
	if err != nil || len(pds) != 1 || pds[0].Users != 3 || pds[0].UnsafeGlobalRKey != 0x99 || !pds[0].Has(AttrResLocalDMALKey) {
		t.Fatalf("PDs: %v %+v", err, pds)
	}
	ctxs, err := c.Res.Ctxs(ctx, q)
	if err != nil || len(ctxs) != 1 || ctxs[0].CTXN != 1 || ctxs[0].PID != 5 {
		t.Fatalf("ctxs: %v %+v", err, ctxs)
	}
	srqs, err := c.Res.SRQs(ctx, q)
	if err != nil || len(srqs) != 1 || srqs[0].SRQN != 3 || len(srqs[0].QPs) != 2 || srqs[0].QPs[0] != (QPRange{5, 5, false}) || srqs[0].QPs[1] != (QPRange{8, 11, true}) {
		t.Fatalf("SRQs: %v %+v", err, srqs)
	}
	cnts, err := c.Stat.Counters(ctx, 2, 1)
	if err != nil || len(cnts) != 1 || cnts[0].ID != 2 || len(cnts[0].QPs) != 2 || cnts[0].HWCounters[0].Name != "rx_write_requests" || cnts[0].HWCounters[0].Value != 12 {
		t.Fatalf("counters: %v %+v", err, cnts)
	}
	if len(k.reqs) == 0 {
		t.Fatal("no requests seen")
	}
}

// Every entry type survives a marshal/unmarshal round trip.
func TestEntriesRoundTrip(t *testing.T) {
	type codec interface {
		MarshalBinary() ([]byte, error)
		UnmarshalBinary([]byte) error
	}
	cases := []struct {
		in, out codec
	}{
		{&Device{Index: 1, Name: "mlx5_0", NumPorts: 2, NodeGUID: 0x0002c90300001491, FWVersion: "20.31"}, &Device{}},
		{&Port{DevIndex: 1, DevName: "mlx5_0", Port: 1, LID: 3, SubnetPrefix: 0xfe80000000000000, State: 4, PhysState: 5, NdevName: "ib0", NdevIndex: 4}, &Port{}},
		{&Summary{DevIndex: 1, DevName: "x", Entries: []SummaryEntry{{Name: "pd", Curr: 3, Max: 8}, {Name: "qp", Curr: 1}}}, &Summary{}},
		{&QP{LQPN: 7, Type: 2, State: 3, Entry: Entry{PID: 9}}, &QP{}},
		{&CMID{State: 8, PS: 0x106, SrcAddr: SockaddrStorage(netip.MustParseAddrPort("10.0.0.1:1"))}, &CMID{}},
		{&CQ{CQE: 1, Users: 1}, &CQ{}},
		{&MR{MRLen: 9, HWCounters: []HWCounter{{Name: "page_faults", Value: 2}}}, &MR{}},
		{&PD{Users: 1, PDN: 3}, &PD{}},
		{&Ctx{CTXN: 4}, &Ctx{}},
		{&SRQ{SRQN: 2, QPs: []QPRange{{Min: 3, Max: 3}, {Min: 5, Max: 9, Range: true}}}, &SRQ{}},
		{&Counter{ID: 1, QPs: []uint32{4}, HWCounters: []HWCounter{{Name: "a", Value: 1}}}, &Counter{}},
		{&PortStats{DevIndex: 1, DevName: "a", Port: 1, Mode: CounterModeAuto, AutoMask: CounterMaskQPType, HWCounters: []HWCounter{{Name: "b", Value: 2, Index: 3, Enabled: 1}}}, &PortStats{}},
		{&SysInfo{NetNSMode: 1, CopyOnFork: 1}, &SysInfo{}},
		{&Event{Type: EventNetdevAttach, DevIndex: 3, DevName: "rxe0", Port: 1, NdevIndex: 2, NdevName: "eth0"}, &Event{}},
	}
	for _, c := range cases {
		b, err := c.in.MarshalBinary()
		if err != nil {
			t.Fatalf("%T: %v", c.in, err)
		}
		if err := c.out.UnmarshalBinary(b); err != nil {
			t.Fatalf("%T: %v", c.in, err)
		}
		opts := []cmp.Option{cmpopts.IgnoreUnexported(Fields{}), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Attribute{}, "Data")}
		if diff := cmp.Diff(c.in, c.out, opts...); diff != "" {
			t.Errorf("%T round trip (-in +out):\n%s", c.in, diff)
		}
	}
}

func TestMalformedInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"short header":     {1, 0},
		"length too small": {2, 0, 1, 0},
		"length too big":   {16, 0, 1, 0, 0, 0, 0, 0},
		"u32 of 2 bytes":   {6, 0, byte(AttrDevIndex), 0, 1, 0, 0, 0},
		"u64 of 4 bytes":   {8, 0, byte(AttrCapFlags), 0, 1, 0, 0, 0},
		"bad nested":       {8, 0, byte(AttrResQP), 0, 9, 0, 1, 0},
	} {
		if _, err := UnmarshalAttributes(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	var d Device
	if err := d.UnmarshalBinary(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("device without index: %v", err)
	}
	// Deep nesting is refused, not recursed into forever.
	b := []byte{}
	for range 20 {
		inner := b
		b = binary.NativeEndian.AppendUint16(nil, uint16(4+len(inner)))
		b = binary.NativeEndian.AppendUint16(b, uint16(AttrResQP))
		b = append(b, inner...)
	}
	if _, err := UnmarshalAttributes(b); !errors.Is(err, ErrMalformed) {
		t.Errorf("deep nesting: %v", err)
	}
}

// The nested flag is ignored in both directions: the kernel does not set
// it, and a set flag does not change the type.
func TestNestedFlagIgnored(t *testing.T) {
	b, err := MarshalAttributes([]Attribute{Nest(AttrResSummary, Nest(AttrResSummaryEntry, String(AttrResSummaryEntryName, "qp")))})
	if err != nil {
		t.Fatal(err)
	}
	if binary.NativeEndian.Uint16(b[2:])&nlaFNested != 0 {
		t.Fatal("encoder set NLA_F_NESTED; nldev.c does not")
	}
	binary.NativeEndian.PutUint16(b[2:], uint16(AttrResSummary)|nlaFNested)
	a, err := UnmarshalAttributes(b)
	if err != nil || a[0].Type != AttrResSummary || a[0].Nested[0].Nested[0].Str != "qp" {
		t.Fatalf("%v %+v", err, a)
	}
}

// TestAckAfterDataReply: STAT_SET answers with a data message and then, in
// a datagram of its own, the acknowledgement; both belong to the request,
// and the next request must not find the acknowledgement queued.
func TestAckAfterDataReply(t *testing.T) {
	var pendingAck []netlink.Message
	c := NewConn(nltest.Dial(func(req []netlink.Message) ([]netlink.Message, error) {
		if len(req) == 0 { // a Receive with nothing queued
			ack := pendingAck
			pendingAck = nil
			return ack, nil
		}
		m := req[0]
		if m.Header.Flags&netlink.Acknowledge != 0 {
			pendingAck, _ = kernelAck(req)
			return []netlink.Message{{Header: netlink.Header{Type: m.Header.Type, Sequence: m.Header.Sequence, PID: m.Header.PID}, Data: m.Data}}, nil
		}
		sys, _ := (&SysInfo{NetNSMode: 1}).MarshalBinary()
		return []netlink.Message{{Header: netlink.Header{Type: m.Header.Type, Sequence: m.Header.Sequence, PID: m.Header.PID}, Data: sys}}, nil
	}))
	if err := c.Stat.SetAuto(context.Background(), 1, 1, 0, nil); err != nil {
		t.Fatal(err)
	}
	if pendingAck != nil {
		t.Fatal("the acknowledgement was left unread")
	}
	if _, err := c.Sys.Get(context.Background()); err != nil {
		t.Fatalf("the next request: %v", err)
	}
}

func kernelAck(req []netlink.Message) ([]netlink.Message, error) {
	msgs, err := nltest.Error(0, req)
	for i := range msgs {
		msgs[i].Header.Flags = 0
	}
	return msgs, err
}
