package ibsimserver

import "golang.org/x/sys/unix"

// setIOV points msg[i] at bufs[i], for the benchmark's batched client.
func setIOV(msg []unix.Mmsghdr, iov []unix.Iovec, bufs [][]byte) {
	for i, b := range bufs {
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
		msg[i] = unix.Mmsghdr{}
		msg[i].Hdr.Iov = &iov[i]
		msg[i].Hdr.SetIovlen(1)
	}
}
