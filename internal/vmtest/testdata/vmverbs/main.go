// Command vmverbs is a cgo extra binary for the vmtest floor's own test: it
// shows that a program linked against the host's libibverbs runs in the guest
// and reaches rxe0 through the rxe provider (open device, PD, CQ). It needs
// no RDMA headers: it declares the few functions it calls, with the
// structures as opaque types, and links libibverbs.so.1 (the runtime
// package's file, not the -dev package's libibverbs.so) by name.
package main

/*
#cgo LDFLAGS: -l:libibverbs.so.1
#include <stdlib.h>
#include <string.h>

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct ibv_device **list);
const char *ibv_get_device_name(struct ibv_device *device);
struct ibv_context *ibv_open_device(struct ibv_device *device);
int ibv_close_device(struct ibv_context *context);
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
int ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector);
int ibv_destroy_cq(struct ibv_cq *cq);

// probe returns 0 when the named device opens and a PD and a CQ can be
// created on it, or a distinct step number on failure.
static int probe(const char *name) {
	int n = 0, rc = 1;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) return 1;
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) != 0) continue;
		rc = 2;
		struct ibv_context *ctx = ibv_open_device(list[i]);
		if (!ctx) break;
		rc = 3;
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		if (pd) {
			rc = 4;
			struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
			if (cq) {
				rc = 0;
				ibv_destroy_cq(cq);
			}
			ibv_dealloc_pd(pd);
		}
		ibv_close_device(ctx);
		break;
	}
	ibv_free_device_list(list);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

func main() {
	name := "rxe0"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	steps := []string{"ok", "device not found", "open failed", "alloc PD failed", "create CQ failed"}
	rc := int(C.probe(cs))
	fmt.Printf("vmverbs %s: %s\n", name, steps[rc])
	if rc != 0 {
		os.Exit(1)
	}
}
