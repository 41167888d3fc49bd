package iba_test

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// A raw MAD decoded: a directed-route SMP, the GetResp of NodeInfo that a
// switch sent back, as read from /dev/infiniband/umadN after its 40-byte
// header or from an ibsim socket. The format is found from the header's
// class, the attribute from its attribute ID, both through the registry.
func Example_decodeMAD() {
	raw := make([]byte, 256)
	copy(raw, []byte{
		0x01, 0x81, 0x01, 0x81, 0x80, 0x00, 0x00, 0x01, // header: SubnMgtDirected GetResp, D=1, hop 0 of 1
		0x00, 0x01, 0x00, 0x01, 0x1c, 0xd0, 0x55, 0x17, // TID
		0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // NodeInfo, modifier 0
	})
	raw[32], raw[33], raw[34], raw[35] = 0xff, 0xff, 0xff, 0xff // DrSLID, DrDLID: permissive
	copy(raw[64:], []byte{
		0x01, 0x01, 0x02, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01, // a switch of 8 ports
		0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01,
		0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa1, 0x01, 0x00, 0x00, 0x00,
	})
	raw[129] = 1 // initial path 0,1

	format, ok := iba.FormatOf(iba.Class(raw[1]))
	if !ok {
		fmt.Println("unknown class")
		return
	}
	var smp iba.SMPFormatDirected
	if err := smp.Unmarshal(raw); err != nil {
		fmt.Println(err)
		return
	}
	attr, ok := iba.LookupAttr(iba.Class(smp.MgmtClass), smp.AttributeID)
	if !ok {
		fmt.Println("unknown attribute")
		return
	}
	a := attr.New()
	if err := a.Unmarshal(smp.Data[:]); err != nil {
		fmt.Println(err)
		return
	}
	ni := a.(*iba.NodeInfo)
	fmt.Printf("%s method %#x %s: hop %d of %d, path %v\n", format.Name, smp.Method, attr.Name, smp.HopPointer, smp.HopCount, smp.InitialPath[:smp.HopCount+1])
	fmt.Printf("%v with %d ports, node GUID %v, entered by port %d\n", ni.NodeType, ni.NumPorts, ni.NodeGUID, ni.LocalPortNum)
	// Output:
	// SMPFormatDirected method 0x81 NodeInfo: hop 0 of 1, path [0 1]
	// Switch with 8 ports, node GUID 0x0000000000200001, entered by port 1
}
