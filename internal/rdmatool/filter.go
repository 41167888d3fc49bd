package rdmatool

import (
	"strconv"
	"strings"
)

// filterDef is one FILTER-NAME a command accepts.
type filterDef struct {
	name   string
	number bool // numeric: N, N1,N2, N1-N2 and mixes
	doit   bool // a single number selects one object by ID
}

// filter is one FILTER-NAME FILTER-VALUE pair as typed. The key is kept as
// typed (a prefix), and matches every field name it is a prefix of, as in
// iproute2.
type filter struct {
	key, value string
	doit       bool
}

const numberChars = "1234567890,-"

// buildFilters reads the remaining words as FILTER-NAME FILTER-VALUE pairs.
func (r *rd) buildFilters(defs []filterDef) error {
	if defs == nil || r.noArg() {
		return nil
	}
	if len(r.args) == 1 {
		return r.errorf("No filter data was supplied to filter option %s\n", r.arg())
	}
	if len(r.args)%2 != 0 {
		return r.errorf("There is filter option without data\n")
	}
	for i := 0; i < len(r.args); i += 2 {
		key, value := r.args[i], r.args[i+1]
		var def *filterDef
		for j := range defs {
			if prefixOf(key, defs[j].name) {
				def = &defs[j]
				break
			}
		}
		if def == nil {
			return r.errorf("Unsupported filter option: %s\n", key)
		}
		if def.number && strings.IndexFunc(value, func(c rune) bool { return !strings.ContainsRune(numberChars, c) }) >= 0 {
			return r.errorf("%s filter accepts \"%s\" characters only\n", key, numberChars)
		}
		r.filters = append(r.filters, filter{key: key, value: strings.ToLower(value), doit: def.doit && wholeInteger(value)})
	}
	return nil
}

// wholeInteger is strtol consuming the whole string without overflow.
func wholeInteger(s string) bool {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" {
		return s == t
	}
	_, err := strconv.ParseInt(t, 10, 64)
	return err == nil
}

// doitIndex returns the value of the first filter that selects one object.
func (r *rd) doitIndex() (uint32, bool) {
	for _, f := range r.filters {
		if f.doit {
			v, _ := strconv.ParseInt(strings.TrimSpace(f.value), 10, 64)
			return uint32(v), true
		}
	}
	return 0, false
}

func (r *rd) hasFilter(key string) bool {
	for _, f := range r.filters {
		if prefixOf(f.key, key) {
			return true
		}
	}
	return false
}

// filteredNum reports whether an object whose field key is val is filtered
// out; present says whether the kernel sent the field at all.
func (r *rd) filteredNum(key string, val uint32, present bool) bool {
	if !present {
		return r.hasFilter(key)
	}
	for _, f := range r.filters {
		if !prefixOf(f.key, key) {
			continue
		}
		p := f.value
		var left, cur uint32
		rangeCheck := false
		for i := 0; i < len(p); {
			if p[i] >= '0' && p[i] <= '9' {
				j := i
				for j < len(p) && p[j] >= '0' && p[j] <= '9' {
					j++
				}
				n, _ := strconv.ParseUint(p[i:j], 10, 64)
				cur = uint32(n)
				i = j
				if cur == val || (rangeCheck && left < val && val < cur) {
					return false
				}
				rangeCheck = false
				continue
			}
			if p[i] == '-' {
				left = cur
				rangeCheck = true
			}
			i++
		}
		return true
	}
	return false
}

// filteredStr is the string counterpart; like iproute2 it matches the value
// whether or not the kernel sent the field.
func (r *rd) filteredStr(key, val string) bool {
	for _, f := range r.filters {
		if !prefixOf(f.key, key) {
			continue
		}
		for _, s := range strings.Split(f.value, ",") {
			if s != "" && strings.EqualFold(s, val) {
				return false
			}
		}
		return true
	}
	return false
}

// setArgToDevName moves to the word after "dev" or "link", where the
// device name is; with neither, no words remain (rd_set_arg_to_devname).
func (r *rd) setArgToDevName() error {
	for !r.noArg() {
		if r.argIs("dev") || r.argIs("link") {
			r.next()
			if r.noArg() {
				return r.errorf("No device name was supplied\n")
			}
			return nil
		}
		r.next()
	}
	return nil
}
