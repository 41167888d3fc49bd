// Package promfabric exports the state of a whole InfiniBand fabric as
// Prometheus metrics: the PortCounters and PortCountersExtended counters
// (IBA 16.1.3.5, 16.1.4.11) of every port of every switch, channel adapter
// and router, each port's link state, physical state, widths and speeds
// (PortInfo, IBA 14.2.5.6), an info series per node and per port naming
// both ends of each link, whether each node answered, and what each scrape
// cost. Its name joins its two sides, as client_golang's promhttp does:
// Prometheus on one, the fabric on the other. cmd/ibfabric_exporter is a
// thin program over it; a Go program embeds an Exporter as a
// prometheus.Collector or serves its Handler.
//
// The topology is cached. Run discovers the subnet (package subnet) in
// the background every Options.RefreshInterval, and early when a scrape
// finds a node that stopped answering, a LinkDownedCounter that moved or
// traffic on a port the topology has down. A scrape reads counters only,
// through perf.Sweep over the cached subnet (PMA capabilities cached too:
// one PerformanceGet of PortCounters and one of PortCountersExtended per
// port), bounded by the scrape timeout: a node that did not answer in time
// is reported with ibfabric_node_up 0, never left out, and a node the
// last discovery no longer reached stays, up 0, for Options.ForgetAfter.
// When the local node itself stops answering the fabric is taken for lost
// (a simulator that died, a device reset) and Run opens it again with
// Options.Open.
//
// The metrics of a large fabric are many (about 33 series a port: 4.4
// million for 134,000 ports), too many for client_golang's registry, which
// holds and sorts every series of a scrape. Handler therefore writes the
// fabric's series straight to the response in the text exposition format
// from label text made once per topology refresh, and appends what a
// prometheus.Gatherer holds (the exporter's build information, the Go
// runtime's metrics). The Collector side (Describe, Collect) serves the
// same series through a registry, for programs that embed the exporter on
// modest fabrics. Metric names, their labels and their mapping to other
// exporters' names are in docs/exporter.md.
//
// In docs/design.md's layers promfabric sits with the programs' engines
// above perf, subnet and fabric.
package promfabric
