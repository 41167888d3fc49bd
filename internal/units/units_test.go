package units

import (
	"math"
	"testing"
)

func TestIEC(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{64 << 10, "64.0 KiB"},
		{3 << 29, "1.5 GiB"},
		{1<<40 + 1<<37, "1.1 TiB"},
		{math.MaxInt64 - 1, "8.0 EiB"},
		{math.MaxInt64, "more than 8 EiB"},
	} {
		if got := IEC(c.b); got != c.want {
			t.Errorf("IEC(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}
