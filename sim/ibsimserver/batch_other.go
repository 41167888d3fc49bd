//go:build !linux

package ibsimserver

import "net"

// batchIO moves one datagram per system call where recvmmsg(2) and
// sendmmsg(2) do not exist.
type batchIO struct{ c net.Conn }

func newBatchIO(c net.Conn, n int) (*batchIO, error) { return &batchIO{c}, nil }

func (b *batchIO) read(bufs [][]byte, sizes []int) (int, error) {
	n, err := b.c.Read(bufs[0])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	return 1, nil
}

func (b *batchIO) write(bufs [][]byte) error {
	for _, buf := range bufs {
		if _, err := b.c.Write(buf); err != nil {
			return err
		}
	}
	return nil
}
