package diags

import (
	"strconv"
	"strings"
)

// Numbers on command lines read as the C tools read them (strtoul, atoi),
// so that every argument the C tools take means the same here.

// cDigits splits s as strtol and strtoul (base 0) read it: leading
// blanks and an optional sign, then 0x for hex, 0 for octal or decimal,
// the digits of that base, and what follows them.
func cDigits(s string) (neg bool, base uint64, digits, rest string) {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base = 10
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isDigit(s[2], 16):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base = 8
	}
	i := 0
	for i < len(s) && isDigit(s[i], base) {
		i++
	}
	return neg, base, s[:i], s[i:]
}

// cStrtoul reads a number as strtoul(s, NULL, 0) does: leading blanks, an
// optional sign, 0x for hex, 0 for octal, and whatever digits follow; text
// that is not a number reads as 0. The C tools read port numbers, masks and
// ports lists this way, and junk after the digits is ignored.
func cStrtoul(s string) uint64 {
	neg, base, digits, _ := cDigits(s)
	var n uint64
	for i := 0; i < len(digits); i++ {
		d, _ := strconv.ParseUint(digits[i:i+1], 16, 8)
		n = n*base + d
	}
	if neg {
		n = -n
	}
	return n
}

// cStrtolExact reads s as strtol(s, &end, 0) does and says whether that
// took all of s without overflow: at least one digit and nothing after
// the digits, as the C tools check an option's value (-Y).
func cStrtolExact(s string) (int64, bool) {
	neg, base, digits, rest := cDigits(s)
	if digits == "" || rest != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, int(base), 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func isDigit(c byte, base uint64) bool {
	d, err := strconv.ParseUint(string(c), 16, 8)
	return err == nil && d < base
}

// cPort is a port argument as strtol gives it to an int.
func cPort(s string) int { return int(int32(cStrtoul(s))) }

// atoi is C's atoi: leading blanks, a sign, decimal digits, and anything
// after them ignored.
func atoi(s string) int32 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(s[i:j], 10, 64)
	if err != nil {
		return 0
	}
	return int32(n)
}
