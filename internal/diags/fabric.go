package diags

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

// fabricSpec is the --fabric value in effect.
func (e *Env) fabricSpec() string {
	if e.Fabric != "" {
		return e.Fabric
	}
	return fabric.Default()
}

// isUmad says whether the fabric in effect is the kernel's umad.
func (e *Env) isUmad() bool { return e.fabricSpec() == "umad" }

// fabricOptions are the global flags as package fabric's options.
func (e *Env) fabricOptions() ([]fabric.Option, error) {
	timeout, err := e.madTimeout()
	if err != nil {
		return nil, err
	}
	if e.Retries < -1 || e.Retries > fabric.MaxRetries {
		return nil, usagef("--retries %d: want 0 to %d (without the flag: 2)", e.Retries, fabric.MaxRetries)
	}
	opts := []fabric.Option{fabric.WithEndPort(e.CA, e.Port), fabric.WithRetries(e.Retries)}
	if timeout > 0 {
		opts = append(opts, fabric.WithTimeout(timeout))
	}
	switch {
	case e.Debug > 0:
		opts = append(opts, fabric.WithTrace(e.tracer()))
	case e.Errors:
		opts = append(opts, fabric.WithTrace(e.errorTracer()))
	}
	if e.MKey != 0 {
		opts = append(opts, fabric.WithMKey(e.MKey))
	}
	if e.SMKey != 0 {
		opts = append(opts, fabric.WithSMKey(e.SMKey))
	}
	if e.PKeyIdx != 0 {
		opts = append(opts, fabric.WithPKeyIndex(e.PKeyIdx))
	}
	if sp, err := e.saPath(); err != nil {
		return nil, err
	} else if sp != nil {
		opts = append(opts, fabric.WithSAPath(sp))
	}
	if e.SA {
		opts = append(opts, fabric.WithSA())
	}
	if r := os.Getenv(fabric.SysfsEnv); r != "" {
		opts = append(opts, fabric.WithSysfs(r))
	}
	return opts, nil
}

// madTimeout is -t as a duration, 0 for the default. The flag is
// range-checked first: a count of milliseconds that does not fit
// fabric.MaxTimeout would overflow the conversion into a wrong wait.
func (e *Env) madTimeout() (time.Duration, error) {
	limit := int(fabric.MaxTimeout / time.Millisecond)
	if e.Timeout < 0 || e.Timeout > limit {
		return 0, usagef("-t/--timeout %d: want 0 (the default, 1000) to %d milliseconds", e.Timeout, limit)
	}
	return time.Duration(e.Timeout) * time.Millisecond, nil
}

// saPath is where SA queries go: -s/--sm_port's LID, or --sa-path's path
// (a LID or a path spec with a DLID); nil for the local port's SM LID.
func (e *Env) saPath() (mad.Target, error) {
	switch {
	case e.SMPort != "" && e.SAPath != "":
		return nil, usagef("-s/--sm_port and --sa-path exclude each other")
	case e.SMPort != "":
		p, err := ibpath.Parse(e.SMPort, ibpath.Options{Mode: ibpath.LIDOnly})
		ip, ok := p.(*ibpath.IBPath)
		if err != nil || !ok || ip.DLID == 0 || ip.DLID >= 0xc000 {
			return nil, iberror(nil, "cannot resolve SM destination port %s", e.SMPort)
		}
		r := ip.Route()
		r.Name = fmt.Sprintf("SA at LID %d", ip.DLID)
		return r, nil
	case e.SAPath != "":
		p, err := ibpath.Parse(e.SAPath, ibpath.Options{})
		if err != nil {
			return nil, usagef("--sa-path %s: %v", e.SAPath, err)
		}
		ip, ok := p.(*ibpath.IBPath)
		if !ok || !ip.Has("DLID") || ip.DLID == 0 || ip.DLID >= 0xc000 {
			return nil, usagef("--sa-path %s: want a unicast LID or a path spec with one (DLID=...)", e.SAPath)
		}
		r := ip.Route()
		r.Name = "SA at " + ip.String()
		return r, nil
	}
	return nil, nil
}

// openTransport opens the fabric the flags select (fabric.OpenTransport),
// a fabric string the user got wrong being a usage error.
func (e *Env) openTransport(extra ...fabric.Option) (mad.Transport, error) {
	opts, err := e.fabricOptions()
	if err != nil {
		return nil, err
	}
	t, _, err := fabric.OpenTransport(e.Ctx, e.fabricSpec(), append(opts, extra...)...)
	return t, fabricError(err)
}

// fabricError turns package fabric's complaints about the fabric string
// into usage errors (exit 2).
func fabricError(err error) error {
	if err != nil && errors.Is(err, fabric.ErrBadURI) {
		return &UsageError{Msg: err.Error()}
	}
	return err
}
