// Command vmverbs is a cgo extra binary for the vmtest floor's own test: it
// shows that a program linked against the host's libibverbs runs in the guest
// and reaches rxe0 through the rxe provider (open device, PD, CQ).
package main

/*
#cgo LDFLAGS: -libverbs
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

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
