package promfabric

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfoName is the name of the build information series.
const BuildInfoName = Namespace + "_exporter_build_info"

// Version is the exporter's version: the module version it was built at
// ("(devel)" from a work tree), and the VCS revision where Go recorded it.
func Version() (version, revision string) {
	version, revision = "(devel)", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, revision
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	return version, revision
}

// NewBuildInfo is the series ibfabric_exporter_build_info{version,
// revision, goversion} 1, as Prometheus exporters give their build.
func NewBuildInfo() prometheus.Collector {
	version, revision := Version()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        BuildInfoName,
		Help:        "The exporter's build: module version, VCS revision and Go version; value 1.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
