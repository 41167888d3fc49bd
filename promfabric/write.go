package promfabric

import (
	"bufio"
	"math"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// sink takes the series of a scrape, family by family.
type sink interface {
	begin(f *family)
	value(l labels, v uint64)
	float(l labels, v float64)
}

// labels are the labels of one series, as text for the exposition and as
// values for a registry.
type labels interface {
	appendText(b []byte) []byte
	values() []string
}

func (s *series) appendText(b []byte) []byte { return append(b, s.text...) }
func (s *series) values() []string           { return s.vals }

// portLabels are a port's {guid, port}.
func (pv *portView) appendText(b []byte) []byte {
	b = append(b, pv.nv.id.portPrefix...)
	b = strconv.AppendInt(b, int64(pv.num), 10)
	return append(b, `"}`...)
}

func (pv *portView) values() []string {
	return []string{pv.nv.id.guid, strconv.Itoa(int(pv.num))}
}

// portInfo is a port as port_info's labels.
type portInfo portView

func (pi *portInfo) appendText(b []byte) []byte {
	pv := (*portView)(pi)
	b = pv.appendText(b)
	b = append(b[:len(b)-1], ',')
	b = append(b, pv.nv.id.names...)
	b = append(b, `,port_guid="`...)
	b = pv.guid.AppendHex(b)
	b = append(b, `",lid="`...)
	b = strconv.AppendUint(b, uint64(pv.lid), 10)
	b = append(b, `",`...)
	if pv.remote != nil {
		b = append(b, pv.remote.remote...)
		b = append(b, `,remote_port="`...)
		b = strconv.AppendInt(b, int64(pv.rport), 10)
		return append(b, `"}`...)
	}
	return append(b, `remote_guid="",remote_name="",remote_port=""}`...)
}

func (pi *portInfo) values() []string {
	pv := (*portView)(pi)
	v := []string{pv.nv.id.guid, strconv.Itoa(int(pv.num)), pv.nv.id.name, pv.nv.id.desc, pv.guid.String(), strconv.Itoa(int(pv.lid)), "", "", ""}
	if r := pv.remote; r != nil {
		v[6], v[7], v[8] = r.guid, strconv.Itoa(int(pv.rport)), r.name
	}
	return v
}

// nodeView's labels are its {guid}.
func (nv *nodeView) appendText(b []byte) []byte { return append(b, nv.id.label...) }
func (nv *nodeView) values() []string           { return []string{nv.id.guid} }

// nodeInfo is a node as node_info's labels.
type nodeInfo nodeView

func (ni *nodeInfo) appendText(b []byte) []byte { return append(b, ni.info...) }
func (ni *nodeInfo) values() []string {
	return ni.infoValues
}

// textSink writes the text exposition format (version 0.0.4).
type textSink struct {
	w    *bufio.Writer
	name []byte // the family's metric name
}

func (t *textSink) begin(f *family) {
	t.name = append(append(append(t.name[:0], Namespace...), '_'), f.name...)
	b := t.w.AvailableBuffer()
	b = append(b, "# HELP "...)
	b = append(b, t.name...)
	b = append(b, ' ')
	b = append(b, f.help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, t.name...)
	b = append(b, ' ')
	b = append(b, f.typ.String()...)
	b = append(b, '\n')
	_, _ = t.w.Write(b)
}

// start begins a sample's line in the writer's free buffer.
func (t *textSink) start(l labels) []byte {
	if t.w.Available() < 512 {
		_ = t.w.Flush()
	}
	b := t.w.AvailableBuffer()
	b = append(b, t.name...)
	b = l.appendText(b)
	return append(b, ' ')
}

func (t *textSink) value(l labels, v uint64) {
	b := strconv.AppendUint(t.start(l), v, 10)
	_, _ = t.w.Write(append(b, '\n'))
}

func (t *textSink) float(l labels, v float64) {
	b := t.start(l)
	switch {
	case math.IsInf(v, 1):
		b = append(b, "+Inf"...)
	case math.IsInf(v, -1):
		b = append(b, "-Inf"...)
	case math.IsNaN(v):
		b = append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		b = strconv.AppendInt(b, int64(v), 10)
	default:
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	_, _ = t.w.Write(append(b, '\n'))
}

// descs are the families' descriptions for the Collector side.
var descs = func() map[*family]*prometheus.Desc {
	m := map[*family]*prometheus.Desc{}
	for _, f := range families {
		m[f] = prometheus.NewDesc(f.fullName(), f.help, f.labels, nil)
	}
	return m
}()

// metricSink sends const metrics to a Collect channel.
type metricSink struct {
	ch   chan<- prometheus.Metric
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func (m *metricSink) begin(f *family) {
	m.desc = descs[f]
	m.typ = prometheus.GaugeValue
	if f.typ == counterType {
		m.typ = prometheus.CounterValue
	}
}

func (m *metricSink) value(l labels, v uint64) { m.float(l, float64(v)) }

func (m *metricSink) float(l labels, v float64) {
	m.ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, l.values()...)
}
