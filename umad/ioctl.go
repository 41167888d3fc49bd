package umad

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The ioctls of rdma/ib_user_mad.h (numbers in rdma/rdma_user_ioctl.h),
// built with the architecture's _IOC encoding (ioctl_*.go).
const (
	ioctlMagic = 0x1b // RDMA_IOCTL_MAGIC

	regReqSize = 28 // sizeof(struct ib_user_mad_reg_req), the same on 32 and 64 bits
)

var (
	ioctlRegisterAgent   = ioc(iocRead|iocWrite, ioctlMagic, 0x01, regReqSize) // IB_USER_MAD_REGISTER_AGENT
	ioctlUnregisterAgent = ioc(iocWrite, ioctlMagic, 0x02, 4)                  // IB_USER_MAD_UNREGISTER_AGENT
	ioctlEnablePKey      = ioc(iocNone, ioctlMagic, 0x03, 0)                   // IB_USER_MAD_ENABLE_PKEY
)

func ioc(dir, typ, nr, size uintptr) uintptr {
	return dir<<iocDirShift | size<<iocSizeShift | typ<<8 | nr
}

// regReq is struct ib_user_mad_reg_req:
//
//	__u32 id;                     0   agent ID, written back by the kernel
//	unsigned long method_mask[];  4   128 bits as longs, 4-byte aligned
//	__u8  qpn;                    20  0 for SMPs, 1 for GMPs
//	__u8  mgmt_class;             21
//	__u8  mgmt_class_version;     22
//	__u8  oui[3];                 23  big-endian, vendor classes 0x30-0x4f
//	__u8  rmpp_version;           26
type regReq [regReqSize]byte

// longBytes is sizeof(unsigned long), the word the kernel reads the method
// mask in.
const longBytes = int(unsafe.Sizeof(uintptr(0)))

func marshalRegReq(qpn, class, version uint8, methods []uint8, oui uint32, rmpp uint8) (regReq, error) {
	var r regReq
	if oui > 0xffffff {
		return r, fmt.Errorf("OUI %#x is wider than 24 bits", oui)
	}
	// The kernel treats the mask as a bitmap of longs in host order:
	// method m is bit m%bits of word m/bits.
	bits := 8 * longBytes
	words := make([]uint64, 128/bits)
	for _, m := range methods {
		if m >= 128 {
			return r, fmt.Errorf("method %#x: only request methods 0x00-0x7f can be registered", m)
		}
		words[int(m)/bits] |= 1 << (uint(m) % uint(bits))
	}
	for i, w := range words {
		off := 4 + i*longBytes
		if longBytes == 8 {
			binary.NativeEndian.PutUint64(r[off:], w)
		} else {
			binary.NativeEndian.PutUint32(r[off:], uint32(w))
		}
	}
	r[20] = qpn
	r[21] = class
	r[22] = version
	r[23], r[24], r[25] = byte(oui>>16), byte(oui>>8), byte(oui)
	r[26] = rmpp
	return r, nil
}

// methodMask decodes the mask of a regReq; the tests use it to check the
// encoding the kernel will read.
func (r *regReq) methodMask() []uint8 {
	var out []uint8
	bits := 8 * longBytes
	for m := 0; m < 128; m++ {
		off := 4 + (m/bits)*longBytes
		var w uint64
		if longBytes == 8 {
			w = binary.NativeEndian.Uint64(r[off:])
		} else {
			w = uint64(binary.NativeEndian.Uint32(r[off:]))
		}
		if w&(1<<(uint(m)%uint(bits))) != 0 {
			out = append(out, uint8(m))
		}
	}
	return out
}

func (r *regReq) id() uint32 { return binary.NativeEndian.Uint32(r[0:]) }
