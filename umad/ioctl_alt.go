//go:build linux && (mips || mipsle || mips64 || mips64le || ppc64 || ppc64le || sparc64)

package umad

// The _IOC encoding of MIPS, PowerPC and SPARC: three direction bits and
// 13 size bits (arch/*/include/uapi/asm/ioctl.h).
const (
	iocNone      = 1
	iocRead      = 2
	iocWrite     = 4
	iocSizeShift = 16
	iocDirShift  = 29
)
