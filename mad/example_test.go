package mad_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

// Any RPC by its IBA name, with fields of the request set by name, as
// `ibtool query SubnAdmGet NodeRecord -f LID=11` does: the names come
// from the IBA field tables, so a program can build requests it was not
// compiled for.
func ExampleClient_Do() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	rpc, _ := iba.LookupRPC("SubnAdmGet")
	rec, _ := iba.StructByName("NodeRecord")
	data := make([]byte, rec.Size)
	lid, _ := rec.Lookup("LID")
	if err := lid.SetText(data, "11"); err != nil {
		fmt.Println(err)
		return
	}
	mask, _ := sa.MaskBits(rec, "LID")
	saTarget, err := f.SA().Target(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := f.MAD.Do(ctx, mad.Request{Target: saTarget, Class: iba.ClassSubnAdm, Method: rpc.Method,
		AttrID: rec.AttrID, Data: data, CompMask: mask})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, path := range []string{"LID", "nodeInfo.nodeType", "nodeInfo.numPorts", "nodeDescription.nodeString"} {
		ref, _ := rec.Lookup(path)
		v, _ := ref.Text(rep.Data())
		fmt.Printf("%s = %s\n", path, strings.TrimSpace(v))
	}
	// Output:
	// LID = 11
	// nodeInfo.nodeType = Channel Adapter
	// nodeInfo.numPorts = 1
	// nodeDescription.nodeString = hca3 HCA-1
}

// An error at the three levels of detail of ibtool's -v and -vv
// (python-rdma's dump_detailed): the message; the chain of what was being
// done; and the MADs of the failed RPC, decoded (here only their first
// line each).
func Example_errorLevels() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	var pi iba.PortInfo
	// The CA has one port: PortInfo of port 7 is refused.
	err = f.MAD.SubnGet(ctx, ibpath.NewDR(0).Route(), &pi, 7)
	err = fmt.Errorf("reading PortInfo of port 7: %w", err)
	fmt.Println(ibaprint.Error(err, 0))
	fmt.Println(ibaprint.Error(err, 1))
	lines := strings.Split(ibaprint.Error(err, 2), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, ":") && strings.HasPrefix(l, "  re") {
			fmt.Println(l)
			fmt.Println(lines[i+1])
		}
	}
	var se *mad.StatusError
	if errors.As(err, &se) {
		fmt.Printf("status code %d: %s\n", se.Code(), se.Describe())
	}
	// Output:
	// reading PortInfo of port 7: SubnGet PortInfo to IBDRPath(drPath=0:): status 0x001c: Invalid attribute or modifier value
	// reading PortInfo of port 7
	//   + SubnGet PortInfo to IBDRPath(drPath=0:): status 0x001c: Invalid attribute or modifier value
	//   request:
	//     SMPFormatDirected Get(0x01) SubnMgtDirected(129.1) PortInfo(0x15)
	//   reply:
	//     SMPFormatDirected GetResp(0x81) SubnMgtDirected(129.1) PortInfo(0x15)
	// status code 7: Invalid attribute or modifier value
}

// Congestion control (IBA annex A10), as ibccquery and ibccconfig do it:
// what a switch supports, then its congestion setting written and read
// back. CongestionGet and CongestionSet take any of iba's congestion
// structures; ibtool ibccquery prints them in libibmad's format.
func ExampleClient_CongestionGet() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	sw := mad.Route{Addr: mad.Addr{LID: 1}} // a leaf switch
	var info iba.CongestionInfo
	if err := f.MAD.CongestionGet(ctx, sw, &info, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("CongestionInfo %#x, control table blocks %d\n", info.CongestionInfo, info.ControlTableCap)
	set := iba.SwitchCongestionSetting{ControlMap: 0x2, Threshold: 0xf, MarkingRate: 10}
	if err := f.MAD.CongestionSet(ctx, sw, &set, 0); err != nil {
		fmt.Println(err)
		return
	}
	var got iba.SwitchCongestionSetting
	if err := f.MAD.CongestionGet(ctx, sw, &got, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("Threshold %#x, Marking_Rate %d\n", got.Threshold, got.MarkingRate)
	// Output:
	// CongestionInfo 0x1, control table blocks 2
	// Threshold 0xf, Marking_Rate 10
}
