package openib

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// DataSize is the vendor data of a MAD with OUI (IBA 16.5.1): what a
// reply can carry.
const DataSize = 216

// Ping sends one ping (a VendGet of the ping class's attribute 0) to t and
// returns the host name the responder answers with. oui is the class's
// OUI, iba.OUIOpenIB unless both sides agree on another.
func Ping(ctx context.Context, mc *mad.Client, t mad.Target, oui uint32) (string, error) {
	var pong iba.OpenIBPing
	if err := mc.VendGet(ctx, t, iba.ClassOpenIBPing, oui, &pong, 0); err != nil {
		return "", err
	}
	return cString(pong.HostName[:]), nil
}

// ServePing answers pings on mc's port with host (truncated to fit the
// reply, NUL terminated), as ibping -S does, until ctx ends.
func ServePing(ctx context.Context, mc *mad.Client, oui uint32, host string) error {
	data := make([]byte, DataSize)
	copy(data[:DataSize-1], host)
	return Serve(ctx, mc, iba.ClassOpenIBPing, oui, func(*mad.ServerRequest) []byte { return data })
}

// The attributes of the sysstat class (infiniband-diags ibsysstat.c;
// iba.OpenIBSysStatPing and its siblings).
const (
	AttrSysStatPing = iba.AttrIDOpenIBSysStatPing // the request's data echoed
	AttrHostInfo    = iba.AttrIDOpenIBSysStatHostInfo
	AttrCPUInfo     = iba.AttrIDOpenIBSysStatCPUInfo
	// AttrClassPortInfo is the class's ClassPortInfo (IBA 13.4.8.1):
	// python-rdma's server answers it, infiniband-diags' does not.
	AttrClassPortInfo = iba.AttrIDClassPortInfo
)

// SysStatClassPortInfo reads the sysstat class's ClassPortInfo of the
// server at t (python-rdma's ibsysstat cpi).
func SysStatClassPortInfo(ctx context.Context, mc *mad.Client, t mad.Target, oui uint32) (iba.ClassPortInfo, error) {
	var cpi iba.ClassPortInfo
	rep, err := mc.Do(ctx, mad.Request{Target: t, Class: iba.ClassOpenIBSysStat, Method: iba.MethodGet,
		AttrID: AttrClassPortInfo, OUI: oui, Data: make([]byte, DataSize)})
	if err != nil {
		return cpi, err
	}
	if err := cpi.Unmarshal(rep.Data()); err != nil {
		return cpi, fmt.Errorf("sysstat ClassPortInfo from %v: %w", t, err)
	}
	return cpi, nil
}

// sysStatClassPortInfo is the ClassPortInfo a sysstat server answers
// with, python-rdma's: version 1 of the class, a response time value of
// 16, the GSI's Q_Key for redirection and traps.
var sysStatClassPortInfo = iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, RespTimeValue: 16,
	RedirectQKey: mad.QP1QKey, TrapQKey: mad.QP1QKey}

// SysStat sends one sysstat Get of attr to t and returns the text of the
// answer up to its first NUL: the host name (AttrHostInfo), one line per
// processor (AttrCPUInfo), nothing for AttrSysStatPing. The request carries
// DataSize zero bytes, as ibsysstat's does; t's route decides the tries.
func SysStat(ctx context.Context, mc *mad.Client, t mad.Target, oui uint32, attr uint16) (string, error) {
	rep, err := mc.Do(ctx, mad.Request{Target: t, Class: iba.ClassOpenIBSysStat, Method: iba.MethodGet,
		AttrID: attr, OUI: oui, Data: make([]byte, DataSize)})
	if err != nil {
		return "", err
	}
	return cString(rep.Data()), nil
}

// SysInfo is what a sysstat server answers with.
type SysInfo struct {
	Host string
	CPUs []CPU
}

// CPU is one processor as /proc/cpuinfo names it; a field that was not
// there is "(null)", as glibc prints the C server's missing string.
type CPU struct{ Model, MHz string }

// ServeSysStat answers sysstat queries on mc's port with info, as
// ibsysstat -S does, until ctx ends.
func ServeSysStat(ctx context.Context, mc *mad.Client, oui uint32, info SysInfo) error {
	return Serve(ctx, mc, iba.ClassOpenIBSysStat, oui, func(req *mad.ServerRequest) []byte {
		return SysStatReply(req.AttrID, req.Data(), info)
	})
}

// SysStatReply is the data of the answer to a query of attr with request
// data req (ibsysstat.c's mk_reply): the request echoed for a ping, the
// class's ClassPortInfo (as python-rdma's server answers), else the host
// name or the CPU lines, cut to one MAD and NUL terminated.
func SysStatReply(attr uint16, req []byte, info SysInfo) []byte {
	data := make([]byte, DataSize)
	var text string
	switch attr {
	case AttrSysStatPing:
		copy(data, req)
		return data
	case AttrClassPortInfo:
		_ = sysStatClassPortInfo.MarshalTo(data)
		return data
	case AttrHostInfo:
		text = info.Host
	case AttrCPUInfo:
		var b strings.Builder
		for i, c := range info.CPUs {
			fmt.Fprintf(&b, "cpu %d: model %s MHZ %s\n", i, c.Model, c.MHz)
		}
		text = b.String()
	}
	copy(data[:DataSize-1], text)
	return data
}

// Serve answers the Get requests of a vendor class with OUI (IBA 13.4.4:
// classes 0x30 to 0x4F) on mc's port with the data h returns, until ctx
// ends. Requests that name another OUI are dropped, as the kernel's OUI
// filter of such an agent drops them.
func Serve(ctx context.Context, mc *mad.Client, class iba.Class, oui uint32, h func(req *mad.ServerRequest) []byte) error {
	return mc.Serve(ctx, class, 1, []iba.Method{iba.MethodGet}, func(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
		if len(req.MAD) < 40 || uint32(req.MAD[37])<<16|uint32(req.MAD[38])<<8|uint32(req.MAD[39]) != oui {
			return nil, nil
		}
		return &mad.ServerReply{Data: h(req)}, nil
	}, mad.WithOUI(oui))
}

// HostName is what the infiniband-diags servers answer with: the host
// name and the NIS domain name as "host.domain", the host alone when there
// is no domain name.
func HostName() string {
	h, err := os.Hostname()
	if err != nil {
		h = "?hostname?"
	}
	var u unix.Utsname
	d := "?domainname?"
	if unix.Uname(&u) == nil {
		d = string(bytes.TrimRight(u.Domainname[:], "\x00"))
	}
	if d == "" {
		return h
	}
	return h + "." + d
}

// maxCPUs is how many processors the C server keeps.
const maxCPUs = 256

// LocalCPUs reads this machine's processors from /proc/cpuinfo.
func LocalCPUs() ([]CPU, error) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil, fmt.Errorf("reading the processors: %w", err)
	}
	defer f.Close()
	return ParseCPUInfo(f)
}

// ParseCPUInfo reads processors in /proc/cpuinfo's format as the C
// server's build_cpuinfo does: a "processor" line starts one, its "model
// name" and "cpu MHz" values (after the colon, blanks kept) describe it;
// at most 256 are kept. A line longer than 1 MiB is an error.
func ParseCPUInfo(r io.Reader) ([]CPU, error) {
	var cpus []CPU
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "processor\t") {
			if len(cpus) == maxCPUs {
				break
			}
			cpus = append(cpus, CPU{"(null)", "(null)"})
			continue
		}
		i := strings.IndexByte(line, ':')
		if len(cpus) == 0 || i < 0 {
			continue
		}
		switch {
		case strings.HasPrefix(line, "model name\t"):
			cpus[len(cpus)-1].Model = line[i+1:]
		case strings.HasPrefix(line, "cpu MHz\t"):
			cpus[len(cpus)-1].MHz = line[i+1:]
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return cpus, fmt.Errorf("processor list: a line longer than 1 MiB: %w", err)
		}
		return cpus, err
	}
	return cpus, nil
}

// cString is the text of a NUL-terminated string field.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
