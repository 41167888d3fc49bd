//go:build !linux

package main

// totalMemory is unknown here: no soft limit.
func totalMemory() uint64 { return 0 }
