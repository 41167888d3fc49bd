package subnet

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxFileSize bounds every subnet file this package reads: ReadFile, Read,
// ReadTopology, ReadCache and ReadIBNDCache stop and fail once a file
// passes it. 1 GiB is ten times our cache of a 100,000-node subnet with
// full forwarding tables, and far more than its topology text (about
// 50 MB); a file that large is the wrong file, or a device such as
// /dev/zero.
const MaxFileSize = 1 << 30

// ErrTooLarge is matched (errors.Is) by every *SizeError.
var ErrTooLarge = errors.New("subnet file too large")

// SizeError is a file or stream that passes a size limit.
type SizeError struct {
	What  string // "topology file", "libibnetdisc cache", ...
	Size  int64  // its size or declared size; -1 when only "more" is known
	Limit int64
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: more than %d bytes, the limit (subnet.MaxFileSize)", e.What, e.Limit)
	}
	return fmt.Sprintf("%s: %d bytes, more than the limit of %d (subnet.MaxFileSize)", e.What, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *SizeError) Is(target error) bool { return target == ErrTooLarge }

// Format is one of the file formats the package reads.
type Format int

// The formats, told apart by their first bytes (DetectFormat).
const (
	// FormatTopology is ibnetdiscover's topology text (also ibsim's
	// topology files): ReadTopology.
	FormatTopology Format = iota + 1
	// FormatIBNDCache is libibnetdisc's cache: ReadIBNDCache.
	FormatIBNDCache
	// FormatCache is our own cache: ReadCache.
	FormatCache
)

func (f Format) String() string {
	switch f {
	case FormatTopology:
		return "topology file"
	case FormatIBNDCache:
		return "libibnetdisc cache"
	case FormatCache:
		return "rdmakit cache"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// DetectFormat names the format of a file from its first bytes (8 are
// enough): a cache by its magic number, topology text otherwise.
func DetectFormat(head []byte) Format {
	switch {
	case len(head) >= 4 && binary.LittleEndian.Uint32(head) == ibndMagic:
		return FormatIBNDCache
	case bytes.HasPrefix(head, []byte(cacheMagic)):
		return FormatCache
	}
	return FormatTopology
}

// Read reads a subnet in any of the three formats, which it tells by the
// first bytes (DetectFormat), within MaxFileSize.
func Read(r io.Reader) (*Subnet, Format, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(cacheMagic))
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, 0, fmt.Errorf("reading subnet file: %w", err)
	}
	f := DetectFormat(head)
	var s *Subnet
	switch f {
	case FormatIBNDCache:
		s, err = ReadIBNDCache(br)
	case FormatCache:
		s, err = ReadCache(br)
	default:
		s, err = ReadTopology(br)
	}
	return s, f, err
}

// ReadFile reads a subnet file in any of the three formats (see Read). A
// regular file larger than MaxFileSize is refused before it is read; every
// error names the file.
func ReadFile(path string) (*Subnet, Format, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("loading %s: %w", path, err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileSize {
		return nil, 0, fmt.Errorf("loading %s: %w", path, &SizeError{What: "subnet file", Size: st.Size(), Limit: MaxFileSize})
	}
	s, f, err := Read(fh)
	if err != nil {
		return nil, f, fmt.Errorf("loading %s: %w", path, err)
	}
	return s, f, nil
}

// readBounded reads what is left of r, at most limit bytes, growing its
// buffer as data arrives (a header that declares more than the stream holds
// costs only what the stream holds).
func readBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, &SizeError{What: what, Size: -1, Limit: limit}
	}
	return data, nil
}

// countingReader fails once more than limit bytes have been read through
// it, so that a streaming parser stops at the limit.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
	what  string
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n > c.limit {
		return 0, &SizeError{What: c.what, Size: -1, Limit: c.limit}
	}
	if rem := c.limit + 1 - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
