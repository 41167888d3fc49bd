package subnet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxFile is the largest subnet file LoadFile reads: a libibnetdisc cache
// of the largest fabrics is a few tens of megabytes; 1 GiB leaves room and
// stops a wrong path (/dev/zero) before it fills the memory.
const MaxFile = 1 << 30

// ErrTooLarge matches the error of a file above MaxFile.
var ErrTooLarge = errors.New("file too large")

// Magic numbers of the binary formats LoadFile tells apart.
var (
	ibndCacheMagic = []byte{0x2b, 0x83, 0xe7, 0x8f}
	ourCacheMagic  = []byte("RDMKSUBN")
)

// LoadFile reads a subnet from whichever of the three formats the file is:
// a libibnetdisc cache (ibnetdiscover --cache), our own cache (WriteCache)
// or an ibnetdiscover topology (ReadTopology). It reads at most MaxFile
// bytes.
func LoadFile(path string) (*Subnet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("loading %s: is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	if len(data) > MaxFile {
		return nil, fmt.Errorf("loading %s: %w: more than %d bytes", path, ErrTooLarge, MaxFile)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return s, nil
}

// Parse reads a subnet from data in any of LoadFile's formats, told apart
// by their magic numbers (text has none).
func Parse(data []byte) (*Subnet, error) {
	switch {
	case bytes.HasPrefix(data, ibndCacheMagic):
		return ParseIBNDCache(data)
	case bytes.HasPrefix(data, ourCacheMagic):
		return ParseCache(data)
	}
	return ReadTopology(bytes.NewReader(data))
}
