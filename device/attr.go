package device

import (
	"fmt"
	"io"
	"os"
)

// maxAttr bounds what is read of one sysfs attribute: the kernel's are at
// most a page (sysfs_emit). A longer file under a configured root (a
// fixture, or /dev/zero behind a symlink) is not an attribute, and
// reading it whole would never end.
const maxAttr = 4096

// readAttr reads a sysfs attribute file, at most maxAttr bytes; the
// error of a missing file is os.Open's (fs.ErrNotExist).
func readAttr(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAttr {
		return nil, fmt.Errorf("%s: more than %d bytes: not a sysfs attribute", path, maxAttr)
	}
	return b, nil
}
