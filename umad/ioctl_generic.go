//go:build linux && !mips && !mipsle && !mips64 && !mips64le && !ppc64 && !ppc64le && !sparc64

package umad

// The generic _IOC encoding of include/uapi/asm-generic/ioctl.h (x86, arm,
// arm64, riscv, s390, loong64).
const (
	iocNone      = 0
	iocWrite     = 1
	iocRead      = 2
	iocSizeShift = 16
	iocDirShift  = 30
)
