//go:build vmguest

package verbs_test

// More tests for the floor-4 VM (see guest_test.go): the structure layouts
// against rdma-core's own ibv_devinfo, QP attributes read back, errno.

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmakit/rdmakit/verbs"
)

// devinfo runs `ibv_devinfo -v -d rxe0` and returns its device and port 1
// attributes by name. A value "NAME (N)" is given as N, as the numbers
// are what the structures hold.
func devinfo(t *testing.T) (devAttr, portAttr map[string]string) {
	t.Helper()
	out, err := exec.Command("ibv_devinfo", "-v", "-d", dev, "-i", "1").CombinedOutput()
	if err != nil {
		t.Fatalf("ibv_devinfo: %v\n%s", err, out)
	}
	devAttr, portAttr = map[string]string{}, map[string]string{}
	m := devAttr
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if k == "port" {
			m = portAttr
			continue
		}
		if i := strings.LastIndexByte(v, '('); i >= 0 && strings.HasSuffix(v, ")") {
			v = v[i+1 : len(v)-1]
		}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return devAttr, portAttr
}

// TestGuestVerbsABI compares every device and port attribute this package
// reads with what rdma-core's ibv_devinfo, compiled against the real
// verbs.h, prints for the same device: a wrong offset shows as a field
// that differs.
func TestGuestVerbsABI(t *testing.T) {
	noLeaks(t)
	c := open(t)
	da, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	pa, err := c.QueryPort(port)
	if err != nil {
		t.Fatal(err)
	}
	wantDev := map[string]string{
		"fw_ver": da.FWVersion, "node_guid": da.NodeGUID.Colon(), "sys_image_guid": da.SysImageGUID.Colon(),
		"vendor_id": fmt.Sprintf("0x%04x", da.VendorID), "vendor_part_id": fmt.Sprint(da.VendorPartID),
		"hw_ver": fmt.Sprintf("0x%X", da.HWVersion), "phys_port_cnt": fmt.Sprint(da.PhysPortCount),
		"max_mr_size": fmt.Sprintf("0x%x", da.MaxMRSize), "page_size_cap": fmt.Sprintf("0x%x", da.PageSizeCap),
		"max_qp": fmt.Sprint(da.MaxQP), "max_qp_wr": fmt.Sprint(da.MaxQPWR),
		"device_cap_flags": fmt.Sprintf("0x%08x", da.DeviceCapFlags), "max_sge": fmt.Sprint(da.MaxSGE),
		"max_cq": fmt.Sprint(da.MaxCQ), "max_cqe": fmt.Sprint(da.MaxCQE), "max_mr": fmt.Sprint(da.MaxMR),
		"max_pd": fmt.Sprint(da.MaxPD), "max_qp_rd_atom": fmt.Sprint(da.MaxQPRDAtom),
		"max_qp_init_rd_atom": fmt.Sprint(da.MaxQPInitRDAtom), "atomic_cap": fmt.Sprint(da.AtomicCap),
		"max_ah": fmt.Sprint(da.MaxAH), "max_srq": fmt.Sprint(da.MaxSRQ), "max_srq_wr": fmt.Sprint(da.MaxSRQWR),
		"max_srq_sge": fmt.Sprint(da.MaxSRQSGE), "max_pkeys": fmt.Sprint(da.MaxPKeys),
		"local_ca_ack_delay": fmt.Sprint(da.LocalCAAckDelay),
	}
	wantPort := map[string]string{
		"state": fmt.Sprint(int(pa.State)), "max_mtu": fmt.Sprint(int(pa.MaxMTU)), "active_mtu": fmt.Sprint(int(pa.ActiveMTU)),
		"sm_lid": fmt.Sprint(pa.SMLID), "port_lid": fmt.Sprint(pa.LID), "port_lmc": fmt.Sprintf("0x%02x", pa.LMC),
		"max_msg_sz": fmt.Sprintf("0x%x", pa.MaxMsgSize), "port_cap_flags": fmt.Sprintf("0x%08x", pa.PortCapFlags),
		"max_vl_num": fmt.Sprint(pa.MaxVLNum), "bad_pkey_cntr": fmt.Sprintf("0x%x", pa.BadPKeyCntr),
		"qkey_viol_cntr": fmt.Sprintf("0x%x", pa.QKeyViolCntr), "sm_sl": fmt.Sprint(pa.SMSL),
		"pkey_tbl_len": fmt.Sprint(pa.PKeyTableLen), "gid_tbl_len": fmt.Sprint(pa.GIDTableLen),
		"subnet_timeout": fmt.Sprint(pa.SubnetTimeout), "init_type_reply": fmt.Sprint(pa.InitTypeReply),
		"active_width": fmt.Sprint(pa.ActiveWidth), "active_speed": fmt.Sprint(pa.ActiveSpeed),
		"phys_state": fmt.Sprint(pa.PhysState),
	}
	gotDev, gotPort := devinfo(t)
	for _, c := range []struct {
		what      string
		want, got map[string]string
	}{{"device", wantDev, gotDev}, {"port 1", wantPort, gotPort}} {
		for k, v := range c.want {
			if g, ok := c.got[k]; !ok {
				t.Errorf("ibv_devinfo prints no %s %s", c.what, k)
			} else if g != v {
				t.Errorf("%s %s: ours %s, ibv_devinfo %s", c.what, k, v, g)
			}
		}
	}
	if ll := map[int]string{verbs.LinkLayerEthernet: "Ethernet", verbs.LinkLayerInfiniBand: "InfiniBand"}[pa.LinkLayer]; ll != gotPort["link_layer"] {
		t.Errorf("link layer %d, ibv_devinfo %s", pa.LinkLayer, gotPort["link_layer"])
	}
	t.Logf("%d device and %d port attributes agree with ibv_devinfo", len(wantDev), len(wantPort))
}

// TestGuestVerbsQPAttr reads back what RTR and RTS set on an RC QP: every
// field of struct ibv_qp_attr and struct ibv_ah_attr the kernel keeps.
func TestGuestVerbsQPAttr(t *testing.T) {
	noLeaks(t)
	c := open(t)
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	cq, err := c.CreateCQ(8, nil)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq,
		Cap: verbs.QPCap{MaxSendWR: 5, MaxRecvWR: 6, MaxSendSGE: 2, MaxRecvSGE: 3, MaxInlineData: 32}})
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := c.QueryGID(port, gidIPv4)
	access := verbs.AccessRemoteWrite | verbs.AccessRemoteRead
	if err := qp.Init(verbs.InitAttr{Port: port, Access: access}); err != nil {
		t.Fatal(err)
	}
	av := verbs.AHAttr{PortNum: port, SL: 3, GRH: &verbs.GlobalRoute{DGID: gid, SGIDIndex: gidIPv4, HopLimit: 17, TrafficClass: 0x28, FlowLabel: 0x54321}}
	if err := qp.RTR(verbs.RTRAttr{AH: av, PathMTU: verbs.MTU2048, DestQPN: 0x1234, RQPSN: 0xabcdef, MaxDestRDAtomic: 4, MinRNRTimer: 9}); err != nil {
		t.Fatal(err)
	}
	if err := qp.RTS(verbs.RTSAttr{SQPSN: 0x123456, Timeout: 17, RetryCount: 5, RNRRetry: 6, MaxRDAtomic: 2}); err != nil {
		t.Fatal(err)
	}
	a, err := qp.Query()
	if err != nil {
		t.Fatal(err)
	}
	want := verbs.QPAttr{State: verbs.QPStateRTS, CurState: verbs.QPStateRTS, PathMTU: verbs.MTU2048, DestQPN: 0x1234,
		RQPSN: 0xabcdef, SQPSN: 0x123456, AccessFlags: access, MaxDestRDAtomic: 4, MinRNRTimer: 9, Timeout: 17,
		RetryCount: 5, RNRRetry: 6, MaxRDAtomic: 2, Port: port}
	got := a
	got.Cap, got.AH, got.AltAH, got.PKeyIndex, got.PathMigState, got.QKey = verbs.QPCap{}, verbs.AHAttr{}, verbs.AHAttr{}, 0, 0, 0
	got.CurState = a.State // ibv_query_qp reports the current state in both
	if got != want {
		t.Errorf("Query after RTS:\n got %+v\nwant %+v", got, want)
	}
	// On RoCE the kernel takes the hop limit from the IP route and keeps
	// no SL (rxe); the rest of the address vector comes back as set.
	if a.AH.GRH != nil {
		a.AH.GRH.HopLimit = av.GRH.HopLimit
	}
	if a.AH.PortNum != port || a.AH.GRH == nil || *a.AH.GRH != *av.GRH {
		t.Errorf("address vector read back %+v (GRH %+v), set %+v (GRH %+v)", a.AH, a.AH.GRH, av, av.GRH)
	}
	if a.Cap.MaxSendWR < 5 || a.Cap.MaxRecvWR < 6 || a.Cap.MaxSendSGE < 2 || a.Cap.MaxRecvSGE < 3 || qp.Cap.MaxInlineData < 32 {
		t.Errorf("capacities %+v, granted %+v", a.Cap, qp.Cap)
	}
}

// TestGuestVerbsErrno: a verb that returns NULL leaves its reason in errno,
// which this package reads on the calling thread (purego keeps none).
func TestGuestVerbsErrno(t *testing.T) {
	noLeaks(t)
	c := open(t)
	da, err := c.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	pd, err := c.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateCQ(da.MaxCQE+1, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("CreateCQ(max_cqe+1) = %v, want EINVAL", err)
	}
	cq, err := c.CreateCQ(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeRC, SendCQ: cq, RecvCQ: cq, Cap: verbs.QPCap{MaxSendWR: da.MaxQPWR + 1, MaxSendSGE: 1}})
	var ve *verbs.Error
	if !errors.Is(err, syscall.EINVAL) || !errors.As(err, &ve) {
		t.Errorf("CreateQP(max_qp_wr+1) = %v, want an *Error with EINVAL", err)
	}
	// Many at once, from many goroutines: each gets its own errno.
	errs := make(chan error, 16)
	for i := 0; i < cap(errs); i++ {
		go func() {
			_, err := c.CreateCQ(da.MaxCQE+1+i, nil)
			errs <- err
		}()
	}
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; !errors.Is(err, syscall.EINVAL) {
			t.Errorf("concurrent CreateCQ: %v, want EINVAL", err)
		}
	}
}
