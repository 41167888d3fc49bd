package iba

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustStruct(t *testing.T, name string) *Struct {
	t.Helper()
	s, ok := StructByName(name)
	if !ok {
		t.Fatalf("no structure %s", name)
	}
	return s
}

func TestLookup(t *testing.T) {
	tests := []struct {
		st, path  string
		canon     string
		off, bits int
		index     int
	}{
		{"NodeRecord", "LID", "LID", 0, 16, -1},
		{"NodeRecord", "nodeInfo.systemImageGUID", "nodeInfo.systemImageGUID", 64, 64, -1},
		{"NodeRecord", "NODEINFO.SystemImageGuid", "nodeInfo.systemImageGUID", 64, 64, -1},
		{"NodeRecord", "nodeInfo", "nodeInfo", 32, 320, -1},
		{"NodeRecord", "nodeDescription.nodeString", "nodeDescription.nodeString", 352, 512, -1},
		// Embedded headers read as the format's own components.
		{"SMPFormat", "attributeID", "attributeID", 128, 16, -1},
		{"SMPFormat", "MADHeader.attributeID", "MADHeader.attributeID", 128, 16, -1},
		{"SMPFormat", "reserved_144", "reserved_144", 144, 16, -1},
		{"SAFormat", "componentMask", "componentMask", 384, 64, -1},
		{"SAFormat", "transactionID", "transactionID", 64, 64, -1},
		{"SMPFormatDirected", "D", "D", 32, 1, -1},
		// Array elements in both spellings.
		{"GUIDInfoRecord", "GUIDInfo.GUIDBlock[3]", "GUIDInfo.GUIDBlock[3]", 64 + 3*64, 64, 3},
		{"GUIDInfoRecord", "guidinfo.guidblock_3", "GUIDInfo.GUIDBlock[3]", 64 + 3*64, 64, 3},
		{"ServiceRecord", "serviceData8_3", "serviceData8[3]", 896 + 24, 8, 3},
		{"ServiceRecord", "serviceData64[1]", "serviceData64[1]", 1280 + 64, 64, 1},
		{"SLtoVLMappingTable", "SLtoVL[5]", "SLtoVL[5]", 20, 4, 5},
		// Into an element of an array of structures.
		{"RandomForwardingTable", "LIDPortBlock[2].port", "LIDPortBlock[2].port", 64 + 24, 8, -1},
		{"RandomForwardingTableRecord", "randomForwardingTable.LIDPortBlock_1.LMC", "randomForwardingTable.LIDPortBlock[1].LMC", 64 + 32 + 17, 3, -1},
		{"PortInfoRecord", "portInfo.LMC", "portInfo.LMC", 32 + 277, 3, -1},
	}
	for _, tc := range tests {
		t.Run(tc.st+"/"+tc.path, func(t *testing.T) {
			r, err := mustStruct(t, tc.st).Lookup(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Path != tc.canon || r.Off != tc.off || r.Bits() != tc.bits || r.Index != tc.index {
				t.Errorf("got path %q off %d bits %d index %d, want %q %d %d %d",
					r.Path, r.Off, r.Bits(), r.Index, tc.canon, tc.off, tc.bits, tc.index)
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	tests := []struct {
		st, path string
		want     []string
	}{
		{"NodeRecord", "foo", []string{"foo: no such field in NodeRecord; fields are LID, nodeInfo, nodeDescription"}},
		{"NodeRecord", "nodeInfo.foo", []string{"nodeInfo.foo: no such field in NodeRecord.nodeInfo (NodeInfo); fields are baseVersion,", "vendorID"}},
		{"NodeRecord", "LID.x", []string{"LID is not a structure"}},
		{"NodeRecord", "", []string{"empty path"}},
		{"NodeRecord", "nodeInfo..LID", []string{"empty path component"}},
		{"GUIDInfo", "GUIDBlock[8]", []string{"index 8 out of range: GUIDBlock has 8 elements"}},
		{"GUIDInfo", "GUIDBlock[x]", []string{"not a non-negative integer"}},
		{"NodeInfo", "numPorts[1]", []string{"numPorts is not an array"}},
		{"RandomForwardingTable", "LIDPortBlock.port", []string{"LIDPortBlock is not a structure"}},
		// reserved components are named but not offered.
		{"SMPFormat", "nope", []string{"fields are baseVersion, mgmtClass,", "MKey, data"}},
	}
	for _, tc := range tests {
		t.Run(tc.st+"/"+tc.path, func(t *testing.T) {
			_, err := mustStruct(t, tc.st).Lookup(tc.path)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrNoSuchField) {
				t.Errorf("%v does not match ErrNoSuchField", err)
			}
			var pe *PathError
			if !errors.As(err, &pe) || pe.Struct != tc.st {
				t.Errorf("%v: not a *PathError for %s", err, tc.st)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "reserved_") {
				t.Errorf("error %q offers a reserved component", err)
			}
		})
	}
}

func TestMaskBits(t *testing.T) {
	tests := []struct {
		st, path string
		want     []int
	}{
		{"NodeRecord", "LID", []int{0}},
		{"NodeRecord", "nodeInfo.systemImageGUID", []int{6}},
		{"NodeRecord", "nodeinfo.NodeGUID", []int{7}},
		{"NodeRecord", "nodeInfo", []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}},
		{"NodeRecord", "nodeDescription.nodeString", []int{14}},
		{"PathRecord", "serviceID", []int{0, 1}},
		{"PathRecord", "DGID", []int{2}},
		{"PathRecord", "rate", []int{19}},
		{"ServiceRecord", "serviceData8[3]", []int{10}},
		{"ServiceRecord", "serviceData16_0", []int{23}},
		{"ServiceRecord", "serviceName", []int{6}},
		{"GUIDInfoRecord", "GUIDInfo.GUIDBlock[2]", []int{4}},
		{"LinearForwardingTableRecord", "linearForwardingTable.portBlock[7]", []int{3}},
		{"NodeRecord", "nodeInfo.nope", nil},
		{"NodeInfo", "numPorts", nil}, // not an SA record
	}
	for _, tc := range tests {
		t.Run(tc.st+"/"+tc.path, func(t *testing.T) {
			got := mustStruct(t, tc.st).MaskBits(tc.path)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// The example of python-rdma's manual: LID and
	// nodeInfo.systemImageGUID select component mask 65.
	nr := mustStruct(t, "NodeRecord")
	var mask uint64
	for _, p := range []string{"LID", "nodeInfo.systemImageGUID"} {
		for _, b := range nr.MaskBits(p) {
			mask |= 1 << b
		}
	}
	if mask != 65 {
		t.Errorf("component mask %d, want 65", mask)
	}
}
