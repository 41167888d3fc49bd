package diags

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/ibdiagconf"
)

// defaultSiteConfig is the site configuration read when -z names none
// (tests point it elsewhere).
var defaultSiteConfig = ibdiagconf.DefaultPath

// setup runs before every command: it reads the site configuration and
// the keys, as infiniband-diags' ibdiag_process_opts does before a tool
// starts. A value on the command line wins over the file's.
func (e *Env) setup(cmd *cobra.Command) error {
	if e.Version {
		return nil
	}
	if err := e.applySiteConfig(cmd); err != nil {
		return err
	}
	return e.readKeys(cmd)
}

// applySiteConfig reads ibdiag.conf (-z, else the default file, which may
// be absent) into the settings no flag gave. CA and Port name a local
// device, so they apply to the umad fabric only.
func (e *Env) applySiteConfig(cmd *cobra.Command) error {
	path, named := e.Config, cmd.Flags().Changed("config")
	if !named {
		path = defaultSiteConfig
	}
	if path == "" {
		return usagef("--config: no file named")
	}
	cfg, err := ibdiagconf.ReadFile(path)
	if err != nil {
		if !named && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if errors.Is(err, ibdiagconf.ErrSyntax) {
			return err
		}
		return fmt.Errorf("reading the site configuration: %w", err)
	}
	for _, u := range cfg.Unknown {
		fmt.Fprintf(e.Stderr, "%s: warning: site configuration %s, line %d: infiniband-diags reads no key %q; ignored\n", cmd.Name(), path, u.Line, u.Key)
	}
	given := func(name string) bool {
		f := cmd.Flags().Lookup(name)
		return f != nil && f.Changed
	}
	if e.fabricSpec() == "umad" {
		if cfg.CA != nil && !given("Ca") {
			e.CA = *cfg.CA
		}
		if cfg.Port != nil && *cfg.Port != 0 && !given("Port") {
			e.Port = strconv.Itoa(*cfg.Port)
		}
	}
	if cfg.Timeout != nil && !given("timeout") {
		e.Timeout = *cfg.Timeout
	}
	if cfg.MlxEPI != nil {
		e.MlxEPI = *cfg.MlxEPI
	}
	if cfg.MKey != nil && !given("m_key") {
		e.MKey = *cfg.MKey
	}
	if cfg.SAKey != nil && !given("smkey") {
		e.SMKey = *cfg.SAKey
	}
	return nil
}
