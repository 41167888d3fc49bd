package perf

import "math"

// A Delta is what a counter counted between two readings.
type Delta struct {
	// Value is the count between the readings: after a Reset, the later
	// reading itself; when Saturated, what the counter counted until it
	// stopped.
	Value uint64
	// Reset: the counter went backwards and was cleared between the
	// readings (IBA counters never decrease otherwise); Value counts from
	// the clear.
	Reset bool
	// Wrapped: a 64-bit counter went past its largest value and started
	// again from 0 (only when its earlier reading was in the top half).
	Wrapped bool
	// Saturated: the later reading stands at the counter's largest value
	// (a PortCounters counter stops there, IBA 16.1.3.5), so the true
	// count is Value or more.
	Saturated bool
}

// Diff is what counter k counted from prev to cur, with counters cleared,
// wrapped and saturated between them told apart. ok is false when either
// reading lacks the counter.
func Diff(prev, cur *Counters, k Counter) (d Delta, ok bool) {
	a, okA := prev.Get(k)
	b, okB := cur.Get(k)
	if !okA || !okB {
		return Delta{}, false
	}
	bits := cur.Bits(k)
	switch {
	case b >= a:
		d.Value = b - a
	case bits == 64 && prev.Bits(k) == 64 && a > math.MaxUint64/2 && b < math.MaxUint64/2:
		d.Value, d.Wrapped = b+(math.MaxUint64-a)+1, true
	default:
		d.Value, d.Reset = b, true
	}
	d.Saturated = cur.Saturated(k)
	return d, true
}

// Rate is counter k's count per second from prev to cur (by their Time),
// data counters in octets; ok is false without both readings or time
// between them.
func Rate(prev, cur *Counters, k Counter) (rate float64, d Delta, ok bool) {
	d, ok = Diff(prev, cur, k)
	dt := cur.Time.Sub(prev.Time).Seconds()
	if !ok || dt <= 0 {
		return 0, d, false
	}
	return float64(Octets(k, d.Value)) / dt, d, true
}
