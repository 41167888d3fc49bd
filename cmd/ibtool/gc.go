package main

import (
	"os"
	"runtime/debug"
)

// tuneGC trades memory for CPU where the user has not chosen (GOGC,
// GOMEMLIMIT). A sweep of a large fabric allocates a little per MAD while
// the subnet it holds stays live, so the collector runs often and scans
// the whole subnet each time: at GOGC=400 it runs a quarter as often (on
// a 10k-node ibqueryerrors about 6% less wall time, 25% more memory). A
// soft limit of a quarter of the machine's memory makes it collect sooner
// where memory is short.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if total := totalMemory(); total > 0 {
			debug.SetMemoryLimit(int64(total / 4))
		}
	}
}
