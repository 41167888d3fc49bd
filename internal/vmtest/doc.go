// Package vmtest runs Go tests inside a throw-away qemu VM that has a real
// kernel RDMA stack: floor 4 of docs/design.md ("Tests: four floors"). The
// packages that talk to the kernel (umad, RDMA netlink, sysfs, verbs) have no
// InfiniBand hardware on the build machines; in the VM they meet Debian's own
// kernel with soft-RoCE (rdma_rxe) and, when it could be built, soft-iWARP
// (siw).
//
// There are two guests, one per kernel series (Options.Kernel):
//
//   - Kernel61, the default: Debian 12's kernel 6.1 with the machine's own
//     tools (iproute2 6.1, rdma-core 44, perftest), under .cache/vm;
//   - Kernel612: Debian 13's kernel 6.12 (RDMA netlink monitoring) with
//     Debian 13's tools (iproute2 6.15, rdma-core 56), taken from the root
//     scripts/floors/20-trixie.sh builds, under .cache/vm-6.12.
//
// # Host side
//
// scripts/floors/30-vm.sh (run by scripts/setup-floors.sh) prepares each
// guest: the kernel, siw.ko, a fixed initramfs and a "ready" stamp. A host
// test calls
//
//	vmtest.Run(t, "./nldev", "-test.run=TestLive", "-test.v")
//
// Run builds the package's test binary with `go test -c -tags vmguest`, boots
// the VM with it, streams the guest's console into t.Log and fails t when the
// guest test fails, the guest setup fails, or the VM does not finish within
// its timeout (then qemu is killed by PID). The kernel's boot messages are
// kept, not logged, unless the boot fails; a guest that has not started its
// command within BootTimeout is killed and booted once more, since a hung
// boot under software emulation says nothing of the code under test.
// Without the prepared VM it calls floor.Need: the test skips locally and
// fails in CI. RunWith adds options:
// environment variables, extra binaries built with `go build`, extra files,
// cgo, a timeout, the guest. Boots of both guests are serialised across
// test processes by one lock file (.cache/vm/run.lock): with two host
// cores, concurrent TCG guests only slow each other down. A test that
// compares in both guests boots each once with all its cases.
//
// # Guest side: the contract
//
// Tests that run in the VM are ordinary Go tests in files constrained with
// `//go:build vmguest`, so a plain `go test ./...` on the host never compiles
// them. When such a test starts:
//
//   - It runs as root (PID 1 is the harness /init, scripts/vm/init), with the
//     memlock limit lifted; $HOME is /root and /tmp is an empty tmpfs.
//     $VMTEST_KERNEL names the guest ("6.1" or "6.12").
//   - The working directory is the package's own directory in the module
//     tree, shared read-only from the host over 9p, so testdata/ is readable
//     (golden files cannot be refreshed from inside).
//   - Its own binary, the extra binaries and the extra files sit in
//     $VMTEST_DIR (/mnt/vmtest, read-only), which is also the last entry of
//     $PATH, so an extra binary never hides a system tool of the same name.
//   - Modules loaded: ib_core, ib_uverbs, ib_umad, rdma_rxe, rdma_cm,
//     rdma_ucm, dummy, veth and siw when it was built (no module autoloading:
//     nothing else is there).
//   - Network: lo up; dummy0 up with 10.0.0.1/24; the soft-RoCE device rxe0
//     is bound to dummy0 (port 1, GID index 1 is ::ffff:10.0.0.1, RoCE v2).
//     When siw was built, dummy1 has 10.0.1.1/24 and carries siw0 (iWARP).
//     Tests check for siw0 in /sys/class/infiniband and skip without it.
//   - Devices: /sys/class/infiniband/rxe0, /dev/infiniband/umad0 (rxe0 port
//     1), /dev/infiniband/uverbs0 (and uverbs1 for siw0), issm0, rdma_cm.
//   - Tools on $PATH, the guest's release's: iproute2's rdma and ip,
//     ibv_devices, ibv_devinfo, ibv_rc_pingpong, ibv_ud_pingpong, rping,
//     ib_write_bw, ib_send_bw, ib_read_lat, and busybox. libibverbs finds
//     the rxe and siw providers; libibverbs, librdmacm and libibumad are in
//     /usr/lib, so cgo binaries built with Options.CGO (against the
//     machine's Debian 12 libraries) link against them in either guest,
//     and glibc's libc.so.6, libdl.so.2 and libpthread.so.0 with its
//     loader, so binaries built without cgo that load libibverbs at run
//     time (package verbs) start.
//   - The exit status of the test binary is the verdict; output goes to the
//     serial console and ends up in the host test's log.
//
// The VM runs under TCG (software emulation): throughput means nothing
// there, only behaviour does. A boot with one test takes several seconds.
package vmtest
