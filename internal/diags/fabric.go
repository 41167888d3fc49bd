package diags

import (
	"errors"
	"os"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
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
	if e.Debug > 0 {
		opts = append(opts, fabric.WithTrace(e.tracer()))
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
