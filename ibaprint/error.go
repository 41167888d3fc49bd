package ibaprint

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rdmakit/rdmakit/mad"
)

// Error describes an error at a level of detail, as python-rdma's
// MADError.dump_detailed and ibtool's -v and -vv do:
//
//	0  the error's message, one line;
//	1  each wrapping layer's own words on a line of its own, outermost
//	   first, the inner ones after "  + ";
//	2  as 1, then the request and reply MADs of the failed RPC (a
//	   mad.PacketError in the chain), decoded field by field.
//
// The text has no final newline.
func Error(err error, level int) string {
	if err == nil {
		return ""
	}
	if level <= 0 {
		return err.Error()
	}
	var lines []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if inner := errors.Unwrap(e); inner != nil {
			msg = strings.TrimSuffix(strings.TrimSuffix(msg, inner.Error()), ": ")
		}
		if msg != "" {
			lines = append(lines, msg)
		}
	}
	s := strings.Join(lines, "\n  + ")
	if level < 2 {
		return s
	}
	return s + packets(err)
}

// packets decodes the request and reply of the first mad.PacketError in
// err's chain.
func packets(err error) string {
	pe, ok := mad.AsPacketError(err)
	if !ok {
		return ""
	}
	req, rep := pe.Packets()
	var b strings.Builder
	for _, p := range []struct {
		name string
		b    []byte
	}{{"request", req}, {"reply", rep}} {
		if len(p.b) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  %s:\n", p.name)
		if err := DumpMAD(prefixWriter{&b, "    "}, p.b); err != nil {
			fmt.Fprintf(&b, "    (%v)\n", err)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// prefixWriter puts a prefix before every line written to it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	s := strings.TrimSuffix(string(b), "\n")
	for _, l := range strings.Split(s, "\n") {
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// PrefixWriter returns a writer that puts prefix before every line written
// to w (each Write is taken as whole lines).
func PrefixWriter(w io.Writer, prefix string) io.Writer { return prefixWriter{w, prefix} }
