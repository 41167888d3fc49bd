// Package units prints sizes and counts for messages that tell a user how
// much something would take: "1.1 TiB", "24,117,248".
package units

import (
	"fmt"
	"math"
)

// IEC prints a size in bytes with binary prefixes: "512 B", "64.0 KiB",
// "1.1 TiB". math.MaxInt64 stands for a size that overflowed.
func IEC(b int64) string {
	if b == math.MaxInt64 {
		return "more than 8 EiB"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, i := float64(b), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
