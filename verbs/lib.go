package verbs

import (
	"os"
	"unsafe"
)

// libName is the file libibverbs is loaded from: the soname of
// rdma-core's runtime library (package libibverbs1 on Debian and Ubuntu,
// libibverbs on RHEL), not the -dev package's libibverbs.so.
const libName = "libibverbs.so.1"

// EnvLibrary names an environment variable that, when set, is the file
// loaded instead of libibverbs.so.1: a path to another rdma-core build,
// or a soname dlopen looks up as usual. It is read once, at the first use
// of the package.
const EnvLibrary = "RDMAKIT_LIBIBVERBS"

func libPath() string {
	if p := os.Getenv(EnvLibrary); p != "" {
		return p
	}
	return libName
}

// symbols are the addresses of the libibverbs functions this package
// calls, resolved once by load. The data path verbs (post send and
// receive, poll, arm a CQ) are inlines in verbs.h that call through the
// context's ops table; Context keeps those.
type symbols struct {
	getDeviceList      uintptr // struct ibv_device **(int *num_devices)
	freeDeviceList     uintptr // void (struct ibv_device **)
	getDeviceName      uintptr // const char *(struct ibv_device *)
	getDeviceGUID      uintptr // __be64 (struct ibv_device *)
	openDevice         uintptr // struct ibv_context *(struct ibv_device *)
	closeDevice        uintptr // int (struct ibv_context *)
	queryDevice        uintptr // int (struct ibv_context *, struct ibv_device_attr *)
	queryPort          uintptr // int (struct ibv_context *, uint8_t, struct _compat_ibv_port_attr *)
	queryGID           uintptr // int (struct ibv_context *, uint8_t, int, union ibv_gid *)
	queryGIDEx         uintptr // int (struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t, size_t); 0 before rdma-core 32
	queryPKey          uintptr // int (struct ibv_context *, uint8_t, int, __be16 *)
	allocPD            uintptr // struct ibv_pd *(struct ibv_context *)
	deallocPD          uintptr // int (struct ibv_pd *)
	regMR              uintptr // struct ibv_mr *(struct ibv_pd *, void *, size_t, int)
	deregMR            uintptr // int (struct ibv_mr *)
	createCompChannel  uintptr // struct ibv_comp_channel *(struct ibv_context *)
	destroyCompChannel uintptr // int (struct ibv_comp_channel *)
	createCQ           uintptr // struct ibv_cq *(struct ibv_context *, int, void *, struct ibv_comp_channel *, int)
	resizeCQ           uintptr // int (struct ibv_cq *, int)
	destroyCQ          uintptr // int (struct ibv_cq *)
	getCQEvent         uintptr // int (struct ibv_comp_channel *, struct ibv_cq **, void **)
	ackCQEvents        uintptr // void (struct ibv_cq *, unsigned int)
	createSRQ          uintptr // struct ibv_srq *(struct ibv_pd *, struct ibv_srq_init_attr *)
	modifySRQ          uintptr // int (struct ibv_srq *, struct ibv_srq_attr *, int)
	querySRQ           uintptr // int (struct ibv_srq *, struct ibv_srq_attr *)
	destroySRQ         uintptr // int (struct ibv_srq *)
	createQP           uintptr // struct ibv_qp *(struct ibv_pd *, struct ibv_qp_init_attr *)
	queryQP            uintptr // int (struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *)
	modifyQP           uintptr // int (struct ibv_qp *, struct ibv_qp_attr *, int)
	destroyQP          uintptr // int (struct ibv_qp *)
	createAH           uintptr // struct ibv_ah *(struct ibv_pd *, struct ibv_ah_attr *)
	destroyAH          uintptr // int (struct ibv_ah *)
	initAHFromWC       uintptr // int (struct ibv_context *, uint8_t, struct ibv_wc *, struct ibv_grh *, struct ibv_ah_attr *)
	attachMcast        uintptr // int (struct ibv_qp *, const union ibv_gid *, uint16_t)
	detachMcast        uintptr // int (struct ibv_qp *, const union ibv_gid *, uint16_t)
	getAsyncEvent      uintptr // int (struct ibv_context *, struct ibv_async_event *)
	ackAsyncEvent      uintptr // void (struct ibv_async_event *)

	errnoLocation uintptr // libc's int *__errno_location(void)
}

// symbol is one entry of the table load resolves.
type symbol struct {
	name     string
	addr     *uintptr
	optional bool
}

func (s *symbols) table() []symbol {
	return []symbol{
		{"ibv_get_device_list", &s.getDeviceList, false},
		{"ibv_free_device_list", &s.freeDeviceList, false},
		{"ibv_get_device_name", &s.getDeviceName, false},
		{"ibv_get_device_guid", &s.getDeviceGUID, false},
		{"ibv_open_device", &s.openDevice, false},
		{"ibv_close_device", &s.closeDevice, false},
		{"ibv_query_device", &s.queryDevice, false},
		{"ibv_query_port", &s.queryPort, false},
		{"ibv_query_gid", &s.queryGID, false},
		{"_ibv_query_gid_ex", &s.queryGIDEx, true},
		{"ibv_query_pkey", &s.queryPKey, false},
		{"ibv_alloc_pd", &s.allocPD, false},
		{"ibv_dealloc_pd", &s.deallocPD, false},
		{"ibv_reg_mr", &s.regMR, false},
		{"ibv_dereg_mr", &s.deregMR, false},
		{"ibv_create_comp_channel", &s.createCompChannel, false},
		{"ibv_destroy_comp_channel", &s.destroyCompChannel, false},
		{"ibv_create_cq", &s.createCQ, false},
		{"ibv_resize_cq", &s.resizeCQ, false},
		{"ibv_destroy_cq", &s.destroyCQ, false},
		{"ibv_get_cq_event", &s.getCQEvent, false},
		{"ibv_ack_cq_events", &s.ackCQEvents, false},
		{"ibv_create_srq", &s.createSRQ, false},
		{"ibv_modify_srq", &s.modifySRQ, false},
		{"ibv_query_srq", &s.querySRQ, false},
		{"ibv_destroy_srq", &s.destroySRQ, false},
		{"ibv_create_qp", &s.createQP, false},
		{"ibv_query_qp", &s.queryQP, false},
		{"ibv_modify_qp", &s.modifyQP, false},
		{"ibv_destroy_qp", &s.destroyQP, false},
		{"ibv_create_ah", &s.createAH, false},
		{"ibv_destroy_ah", &s.destroyAH, false},
		{"ibv_init_ah_from_wc", &s.initAHFromWC, false},
		{"ibv_attach_mcast", &s.attachMcast, false},
		{"ibv_detach_mcast", &s.detachMcast, false},
		{"ibv_get_async_event", &s.getAsyncEvent, false},
		{"ibv_ack_async_event", &s.ackAsyncEvent, false},
	}
}

// lib holds the resolved symbols once load succeeded; every object of this
// package comes from a Context, and a Context exists only after that.
var lib *symbols

// at gives a typed pointer to the C object at addr. addr is never Go
// memory: it comes from libibverbs or from memory this package mapped.
func at[T any](addr uintptr) *T { return *(**T)(unsafe.Pointer(&addr)) }

// addr is the address of p, for a C argument or a pointer field of a C
// structure; p is C memory or memory this package mapped.
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// goString copies the NUL-terminated C string at p (at most max bytes).
func goString(p uintptr, max int) string {
	if p == 0 {
		return ""
	}
	b := unsafe.Slice(at[byte](p), max)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// cint reads a C int result from a register-wide return value: the upper
// half of the register is not part of it.
func cint(r uintptr) int { return int(int32(uint32(r))) }
