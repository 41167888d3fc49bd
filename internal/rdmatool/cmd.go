package rdmatool

import (
	"errors"
	"strconv"
	"strings"
	"unicode"

	"github.com/rdmakit/rdmakit/nldev"
)

// command is one keyword of a command table; the first entry of a table
// (name "") runs when no word is left.
type command struct {
	name string
	fn   func(*rd) error
}

func (r *rd) cmd(args []string) error {
	r.args = args
	return r.exec([]command{
		{"", (*rd).helpCmd},
		{"help", (*rd).helpCmd},
		{"dev", (*rd).cmdDev},
		{"link", (*rd).cmdLink},
		{"resource", (*rd).cmdRes},
		{"system", (*rd).cmdSys},
		{"statistic", (*rd).cmdStat},
		{"monitor", (*rd).cmdMonitor},
	}, "object")
}

func (r *rd) helpCmd() error {
	r.help(r.out.w)
	return nil
}

// prefixOf reports whether word is a prefix of keyword: iproute2's strcmpx,
// which also lets the empty word match anything.
func prefixOf(word, keyword string) bool {
	return len(word) <= len(keyword) && keyword[:len(word)] == word
}

func (r *rd) noArg() bool { return len(r.args) == 0 }

func (r *rd) arg() string {
	if r.noArg() {
		return ""
	}
	return r.args[0]
}

func (r *rd) next() {
	if !r.noArg() {
		r.args = r.args[1:]
	}
}

func (r *rd) argIs(keyword string) bool { return !r.noArg() && prefixOf(r.arg(), keyword) }

// exec dispatches on the next word. iproute2 prints "Unknown ..." and exits
// 0; rdmatool exits 1 (docs/rdmatool.md, fixed bugs).
func (r *rd) exec(cmds []command, what string) error {
	if r.noArg() {
		return cmds[0].fn(r)
	}
	for _, c := range cmds[1:] {
		if r.argIs(c.name) {
			r.next()
			return c.fn(r)
		}
	}
	return r.errorf("Unknown %s '%s'.\n", what, r.arg())
}

func (r *rd) lookupDev(name string) *nldev.Device {
	for i := range r.devs {
		if r.devs[i].Name == name {
			return &r.devs[i]
		}
	}
	return nil
}

// execDev runs fn for every device, or for the one named by the next word
// (rd_exec_dev), inside one JSON document.
func (r *rd) execDev(fn func(*rd) error) error {
	r.out.newDoc()
	defer r.out.endDoc()
	if r.noArg() {
		for _, d := range r.devs {
			r.devIdx = d.Index
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
	d := r.lookupDev(r.arg())
	if d == nil {
		return r.errorf("Wrong device name - %s\n", r.arg())
	}
	r.next()
	r.devIdx = d.Index
	return fn(r)
}

func (r *rd) execRequireDev(fn func(*rd) error) error {
	if r.noArg() {
		return r.errorf("Please provide device name.\n")
	}
	return r.execDev(fn)
}

// portArg parses the port part of DEV, DEV/, DEV/PORT and DEV/- as
// get_port_from_argv: port 0 with dumpAll means every port.
func portArg(s string, strict bool) (port uint32, dumpAll bool, err error) {
	dumpAll = !strict
	if i := strings.IndexByte(s, '/'); i >= 0 {
		rest := s[i+1:]
		if strings.HasPrefix(rest, "-") {
			if strict {
				return 0, false, errors.New("port")
			}
			return 0, false, nil
		}
		if rest != "" && unicode.IsDigit(rune(rest[0])) {
			dumpAll = false
			port = atoiPrefix(rest)
		}
		if port == 0 && rest != "" {
			return 0, dumpAll, errors.New("port")
		}
	}
	if strict && port == 0 {
		return 0, dumpAll, errors.New("port")
	}
	return port, dumpAll, nil
}

// atoiPrefix is atoi: the leading digits, 0 if none.
func atoiPrefix(s string) uint32 {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	v, _ := strconv.ParseUint(s[:end], 10, 32)
	return uint32(v)
}

// execLink runs fn for every port of every device, or of the device (and
// port) named by the next word (rd_exec_link). strict excludes port 0.
func (r *rd) execLink(fn func(*rd) error, strict bool) error {
	r.out.newDoc()
	defer r.out.endDoc()
	if r.noArg() {
		for _, d := range r.devs {
			r.devIdx = d.Index
			start := uint32(0)
			if strict {
				start = 1
			}
			for p := start; p <= d.NumPorts; p++ {
				r.portIdx = p
				if err := fn(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	name := r.arg()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[:i]
	}
	d := r.lookupDev(name)
	port, dumpAll, perr := portArg(r.arg(), strict)
	if d == nil || port > d.NumPorts || (port == 0 && perr != nil) {
		return r.errorf("Wrong device name\n")
	}
	r.next()
	r.devIdx = d.Index
	for r.portIdx = port; r.portIdx <= d.NumPorts; r.portIdx++ {
		if err := fn(r); err != nil {
			return err
		}
		if !dumpAll {
			break
		}
	}
	return nil
}
