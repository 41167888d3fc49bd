package promfabric

import (
	"github.com/rdmakit/rdmakit/perf"
)

// Namespace prefixes every metric name the exporter serves.
const Namespace = "ibfabric"

// metricType is a family's type in the exposition formats.
type metricType uint8

const (
	counterType metricType = iota
	gaugeType
)

func (t metricType) String() string {
	if t == counterType {
		return "counter"
	}
	return "gauge"
}

// family is one metric family: its name, help, type and label names.
type family struct {
	name   string
	help   string
	typ    metricType
	labels []string
}

// The label sets of the families.
var (
	portLabels     = []string{"guid", "port"}
	nodeLabels     = []string{"guid"}
	nodeInfoLabels = []string{"guid", "type", "name", "description", "lid", "system_guid", "vendor_id", "device_id"}
	portInfoLabels = []string{"guid", "port", "name", "description", "port_guid", "lid",
		"remote_guid", "remote_port", "remote_name"}
)

// counterFamilies are the port counter families, by perf.Counter.
var counterFamilies = [perf.NumCounters]*family{
	perf.SymbolErrorCounter:           {name: "port_symbol_errors_total", help: "SymbolErrorCounter: minor link errors detected on one or more physical lanes."},
	perf.LinkErrorRecoveryCounter:     {name: "port_link_error_recoveries_total", help: "LinkErrorRecoveryCounter: times the port training state machine completed the link error recovery process."},
	perf.LinkDownedCounter:            {name: "port_link_downed_total", help: "LinkDownedCounter: times the link error recovery process failed and the link went down."},
	perf.PortRcvErrors:                {name: "port_receive_errors_total", help: "PortRcvErrors: packets received with errors."},
	perf.PortRcvRemotePhysicalErrors:  {name: "port_receive_remote_physical_errors_total", help: "PortRcvRemotePhysicalErrors: packets received marked with the EBP delimiter."},
	perf.PortRcvSwitchRelayErrors:     {name: "port_receive_switch_relay_errors_total", help: "PortRcvSwitchRelayErrors: packets received that the switch could not forward."},
	perf.PortXmitDiscards:             {name: "port_transmit_discards_total", help: "PortXmitDiscards: outbound packets discarded because the port was down or congested."},
	perf.PortXmitConstraintErrors:     {name: "port_transmit_constraint_errors_total", help: "PortXmitConstraintErrors: packets not transmitted because of outbound raw or partition filtering."},
	perf.PortRcvConstraintErrors:      {name: "port_receive_constraint_errors_total", help: "PortRcvConstraintErrors: packets received and discarded because of inbound raw or partition filtering."},
	perf.LocalLinkIntegrityErrors:     {name: "port_local_link_integrity_errors_total", help: "LocalLinkIntegrityErrors: times the count of local physical errors exceeded the threshold."},
	perf.ExcessiveBufferOverrunErrors: {name: "port_excessive_buffer_overrun_errors_total", help: "ExcessiveBufferOverrunErrors: times buffer overruns in a row exceeded the threshold."},
	perf.VL15Dropped:                  {name: "port_vl15_dropped_total", help: "VL15Dropped: incoming VL15 (subnet management) packets dropped for lack of buffers."},
	perf.PortXmitWait:                 {name: "port_transmit_wait_total", help: "PortXmitWait: ticks during which the port had data to transmit but no credits or arbitration."},
	perf.QP1Dropped:                   {name: "port_qp1_dropped_total", help: "QP1Dropped: general management packets dropped for lack of resources."},
	perf.PortXmitData:                 {name: "port_transmit_data_bytes_total", help: "PortXmitData: data octets transmitted (the counter counts 4-octet words; this is 4 times it)."},
	perf.PortRcvData:                  {name: "port_receive_data_bytes_total", help: "PortRcvData: data octets received (the counter counts 4-octet words; this is 4 times it)."},
	perf.PortXmitPkts:                 {name: "port_transmit_packets_total", help: "PortXmitPkts: packets transmitted."},
	perf.PortRcvPkts:                  {name: "port_receive_packets_total", help: "PortRcvPkts: packets received."},
	perf.PortUnicastXmitPkts:          {name: "port_unicast_transmit_packets_total", help: "PortUnicastXmitPkts: unicast packets transmitted."},
	perf.PortUnicastRcvPkts:           {name: "port_unicast_receive_packets_total", help: "PortUnicastRcvPkts: unicast packets received."},
	perf.PortMulticastXmitPkts:        {name: "port_multicast_transmit_packets_total", help: "PortMulticastXmitPkts: multicast packets transmitted."},
	perf.PortMulticastRcvPkts:         {name: "port_multicast_receive_packets_total", help: "PortMulticastRcvPkts: multicast packets received."},
}

// The other families, in the order they are written.
var (
	famSaturated = &family{name: "port_counters_saturated", typ: gaugeType, labels: portLabels,
		help: "Counters of the port read from PortCounters that stand at their largest value: they stopped counting there (IBA 16.1.3.5)."}
	famState = &family{name: "port_state_id", typ: gaugeType, labels: portLabels,
		help: "PortInfo:PortState as of the last topology refresh: 1 Down, 2 Initialize, 3 Armed, 4 Active, 5 ActDefer."}
	famPhysState = &family{name: "port_physical_state_id", typ: gaugeType, labels: portLabels,
		help: "PortInfo:PortPhysicalState as of the last topology refresh: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest."}
	famWidthActive = &family{name: "port_link_width_active_lanes", typ: gaugeType, labels: portLabels,
		help: "PortInfo:LinkWidthActive as a lane count (0 when the link is not up at one width)."}
	famWidthEnabled = &family{name: "port_link_width_enabled_lanes", typ: gaugeType, labels: portLabels,
		help: "The widest width of PortInfo:LinkWidthEnabled, in lanes."}
	famWidthSupported = &family{name: "port_link_width_supported_lanes", typ: gaugeType, labels: portLabels,
		help: "The widest width of PortInfo:LinkWidthSupported, in lanes."}
	famSpeedActive = &family{name: "port_link_speed_active_bytes_per_second", typ: gaugeType, labels: portLabels,
		help: "The data rate of one lane at the active speed (LinkSpeedActive, LinkSpeedExtActive, FDR10), in bytes per second."}
	famSpeedEnabled = &family{name: "port_link_speed_enabled_bytes_per_second", typ: gaugeType, labels: portLabels,
		help: "The data rate of one lane at the fastest enabled speed, in bytes per second."}
	famSpeedSupported = &family{name: "port_link_speed_supported_bytes_per_second", typ: gaugeType, labels: portLabels,
		help: "The data rate of one lane at the fastest supported speed, in bytes per second."}
	famRate = &family{name: "port_rate_bytes_per_second", typ: gaugeType, labels: portLabels,
		help: "The data rate of the link at its active width and speed, in bytes per second."}
	famPortInfo = &family{name: "port_info", typ: gaugeType, labels: portInfoLabels,
		help: "One series per port, value 1: the port GUID and LID, and the node, port and name at the other end of its link (empty when none is known)."}
	famNodeInfo = &family{name: "node_info", typ: gaugeType, labels: nodeInfoLabels,
		help: "One series per node, value 1: its type, node-name-map name (else its description), NodeDescription, LID, system image GUID, vendor and device IDs."}
	famUp = &family{name: "node_up", typ: gaugeType, labels: nodeLabels,
		help: "1 when the node's PMA answered this scrape's reads in time, else 0 (a node the last discovery no longer reached is 0 too)."}
	famNodeErrors = &family{name: "node_read_errors", typ: gaugeType, labels: nodeLabels,
		help: "Reads of the node's counters that failed in this scrape."}

	famScrapeDuration = &family{name: "scrape_duration_seconds", typ: gaugeType,
		help: "How long this scrape's counter reads took."}
	famScrapeTimeout = &family{name: "scrape_timeout_seconds", typ: gaugeType,
		help: "The bound this scrape's counter reads had."}
	famScrapeReads = &family{name: "scrape_reads", typ: gaugeType,
		help: "PerformanceGet reads this scrape sent."}
	famScrapeSent = &family{name: "scrape_mads_sent", typ: gaugeType,
		help: "MADs this scrape's reads sent, retries included."}
	famScrapeFailed = &family{name: "scrape_mads_failed", typ: gaugeType,
		help: "Reads of this scrape that failed (no reply, an error status, not sent because the node had not answered, or out of time)."}
	famScrapeTimedOut = &family{name: "scrape_mads_timed_out", typ: gaugeType,
		help: "Reads of this scrape that had no reply to any of their tries."}
	famScrapeUnreachable = &family{name: "scrape_nodes_unreachable", typ: gaugeType,
		help: "Nodes with node_up 0 in this scrape."}
	famScrapes = &family{name: "scrapes_total", typ: counterType,
		help: "Scrapes that read the fabric's counters."}
	famMADsSent = &family{name: "mads_sent_total", typ: counterType,
		help: "MADs the exporter sent: the scrapes' reads and the topology discoveries' SMPs, retries included."}
	famMADsTimedOut = &family{name: "mads_timed_out_total", typ: counterType,
		help: "Reads of the scrapes that had no reply to any try."}

	famTopoNodes = &family{name: "topology_nodes", typ: gaugeType, labels: []string{"type"},
		help: "Nodes in the cached topology, by type; lost counts those the last discovery no longer reached."}
	famTopoPorts = &family{name: "topology_ports", typ: gaugeType,
		help: "Ports in the cached topology."}
	famTopoLinks = &family{name: "topology_links", typ: gaugeType,
		help: "Links in the cached topology (each counted once)."}
	famTopoUnreachable = &family{name: "topology_unreachable_paths", typ: gaugeType,
		help: "Directed routes the last discovery could not reach a node through."}
	famTopoTime = &family{name: "topology_refresh_timestamp_seconds", typ: gaugeType,
		help: "When the cached topology was last discovered, in seconds since the Unix epoch."}
	famTopoDuration = &family{name: "topology_refresh_duration_seconds", typ: gaugeType,
		help: "How long the last successful discovery took."}
	famTopoRefreshes = &family{name: "topology_refreshes_total", typ: counterType, labels: []string{"result"},
		help: "Topology discoveries, by result (success, error)."}
	famFabricOpens = &family{name: "fabric_opens_total", typ: counterType, labels: []string{"result"},
		help: "Times the exporter opened the fabric, by result (success, error): at start and after the fabric was lost."}
	famFabricUp = &family{name: "fabric_up", typ: gaugeType,
		help: "1 while the fabric is open and its local port answers, 0 while it is lost or being opened again."}
)

// families are every family the exporter writes, in the order it writes
// them.
var families = func() []*family {
	var fs []*family
	for _, f := range counterFamilies {
		f.typ, f.labels = counterType, portLabels
		fs = append(fs, f)
	}
	return append(fs, famSaturated, famState, famPhysState, famWidthActive, famWidthEnabled, famWidthSupported,
		famSpeedActive, famSpeedEnabled, famSpeedSupported, famRate, famPortInfo, famNodeInfo, famUp, famNodeErrors,
		famScrapeDuration, famScrapeTimeout, famScrapeReads, famScrapeSent, famScrapeFailed, famScrapeTimedOut,
		famScrapeUnreachable, famScrapes, famMADsSent, famMADsTimedOut,
		famTopoNodes, famTopoPorts, famTopoLinks, famTopoUnreachable, famTopoTime, famTopoDuration, famTopoRefreshes,
		famFabricOpens, famFabricUp)
}()

// fullName is the family's metric name with the namespace.
func (f *family) fullName() string { return Namespace + "_" + f.name }

// MetricNames lists the name of every metric family the exporter's fabric
// side writes (the Gatherer's are not among them).
func MetricNames() []string {
	names := make([]string, len(families))
	for i, f := range families {
		names[i] = f.fullName()
	}
	return names
}
