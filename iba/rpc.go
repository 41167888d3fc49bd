package iba

import "strings"

// Method is a MAD method (IBA 13.4.5, table 104; SA methods 15.2.2).
//
//iba:enum
type Method uint8

const (
	MethodGet               Method = 0x01 // Get
	MethodSet               Method = 0x02 // Set
	MethodSend              Method = 0x03 // Send
	MethodTrap              Method = 0x05 // Trap
	MethodReport            Method = 0x06 // Report
	MethodTrapRepress       Method = 0x07 // TrapRepress
	MethodGetTable          Method = 0x12 // GetTable
	MethodGetTraceTable     Method = 0x13 // GetTraceTable
	MethodGetMulti          Method = 0x14 // GetMulti
	MethodDelete            Method = 0x15 // Delete
	MethodGetResp           Method = 0x81 // GetResp
	MethodReportResp        Method = 0x86 // ReportResp
	MethodGetTableResp      Method = 0x92 // GetTableResp
	MethodGetMultiResp      Method = 0x94 // GetMultiResp
	MethodDeleteResp        Method = 0x95 // DeleteResp
	MethodResponseBit       Method = 0x80 // R bit
	methodGetTraceTableResp Method = 0x93 // GetTraceTableResp
)

// IsResponse reports whether the R bit is set (IBA 13.4.5).
func (m Method) IsResponse() bool { return m&MethodResponseBit != 0 }

// Response gives the method of the reply to a request. Set, GetTraceTable
// and the other requests without a response method of their own are
// answered with GetResp (IBA 13.4.5, 15.2.2).
func (m Method) Response() Method {
	switch m {
	case MethodGetTable, MethodGetTraceTable:
		return MethodGetTableResp
	case MethodGetMulti:
		return MethodGetMultiResp
	case MethodDelete:
		return MethodDeleteResp
	case MethodReport:
		return MethodReportResp
	case MethodTrap, MethodSend, MethodTrapRepress:
		return m
	}
	return MethodGetResp
}

// Class is a management class (IBA 13.4.4, table 103).
//
//iba:enum
type Class uint8

const (
	ClassSubnMgt         Class = 0x01 // SubnMgt
	ClassSubnAdm         Class = 0x03 // SubnAdm
	ClassPerfMgt         Class = 0x04 // PerfMgt
	ClassBM              Class = 0x05 // BM
	ClassDevMgt          Class = 0x06 // DevMgt
	ClassComMgt          Class = 0x07 // ComMgt
	ClassSNMP            Class = 0x08 // SNMP
	ClassVendor          Class = 0x09 // VendorSpec
	ClassMellanox        Class = 0x0a // VendorSpecMellanox
	ClassCongestionCtl   Class = 0x21 // CongestionCtl
	ClassVendorOUI       Class = 0x30 // VendorSpecOUI
	ClassOpenIBPing      Class = 0x32 // OpenIBPing
	ClassOpenIBSysStat   Class = 0x33 // OpenIBSysStat
	ClassSubnMgtDirected Class = 0x81 // SubnMgtDirected
)

// IsVendorOUI reports whether the class is in the vendor range with OUI
// (0x30-0x4f, IBA 13.4.4).
func (c Class) IsVendorOUI() bool { return c >= 0x30 && c <= 0x4f }

// IsVendor reports whether the class is a vendor class of either range.
func (c Class) IsVendor() bool { return (c >= 0x09 && c <= 0x0f) || c.IsVendorOUI() }

// RPC names a method of a management class as the IBA does (SubnGet is the
// Get method of the SubnMgt classes): the names carried by the attributes'
// Methods lists.
type RPC struct {
	Name    string
	Method  Method
	Classes []Class
}

// RPCs lists every IBA-named RPC. Vendor RPCs apply to every vendor class.
var RPCs = []RPC{
	{"SubnGet", MethodGet, []Class{ClassSubnMgt, ClassSubnMgtDirected}},
	{"SubnSet", MethodSet, []Class{ClassSubnMgt, ClassSubnMgtDirected}},
	{"SubnTrap", MethodTrap, []Class{ClassSubnMgt}},
	{"SubnTrapRepress", MethodTrapRepress, []Class{ClassSubnMgt}},
	{"SubnAdmGet", MethodGet, []Class{ClassSubnAdm}},
	{"SubnAdmSet", MethodSet, []Class{ClassSubnAdm}},
	{"SubnAdmGetTable", MethodGetTable, []Class{ClassSubnAdm}},
	{"SubnAdmGetTraceTable", MethodGetTraceTable, []Class{ClassSubnAdm}},
	{"SubnAdmGetMulti", MethodGetMulti, []Class{ClassSubnAdm}},
	{"SubnAdmDelete", MethodDelete, []Class{ClassSubnAdm}},
	{"SubnAdmReport", MethodReport, []Class{ClassSubnAdm}},
	{"PerformanceGet", MethodGet, []Class{ClassPerfMgt}},
	{"PerformanceSet", MethodSet, []Class{ClassPerfMgt}},
	{"PerformanceTrap", MethodTrap, []Class{ClassPerfMgt}},
	{"BMGet", MethodGet, []Class{ClassBM}},
	{"BMSet", MethodSet, []Class{ClassBM}},
	{"BMSend", MethodSend, []Class{ClassBM}},
	{"BMTrap", MethodTrap, []Class{ClassBM}},
	{"DevMgtGet", MethodGet, []Class{ClassDevMgt}},
	{"DevMgtSet", MethodSet, []Class{ClassDevMgt}},
	{"DevMgtTrap", MethodTrap, []Class{ClassDevMgt}},
	{"CommMgtGet", MethodGet, []Class{ClassComMgt}},
	{"CommMgtSet", MethodSet, []Class{ClassComMgt}},
	{"CommMgtSend", MethodSend, []Class{ClassComMgt}},
	{"SNMPGet", MethodGet, []Class{ClassSNMP}},
	{"SNMPSend", MethodSend, []Class{ClassSNMP}},
	{"CongestionGet", MethodGet, []Class{ClassCongestionCtl}},
	{"CongestionSet", MethodSet, []Class{ClassCongestionCtl}},
	{"CongestionTrap", MethodTrap, []Class{ClassCongestionCtl}},
	{"VendGet", MethodGet, nil},
	{"VendSet", MethodSet, nil},
	{"VendSend", MethodSend, nil},
	{"VendTrap", MethodTrap, nil},
}

// LookupRPC finds an RPC by name, case-insensitively.
func LookupRPC(name string) (RPC, bool) {
	for _, r := range RPCs {
		if strings.EqualFold(r.Name, name) {
			return r, true
		}
	}
	return RPC{}, false
}
