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
	value(s *series, v uint64)
	float(s *series, v float64)
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
func (t *textSink) start(s *series) []byte {
	if t.w.Available() < 512 {
		_ = t.w.Flush()
	}
	b := t.w.AvailableBuffer()
	b = append(b, t.name...)
	b = append(b, s.text...)
	return append(b, ' ')
}

func (t *textSink) value(s *series, v uint64) {
	b := strconv.AppendUint(t.start(s), v, 10)
	_, _ = t.w.Write(append(b, '\n'))
}

func (t *textSink) float(s *series, v float64) {
	b := t.start(s)
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

func (m *metricSink) value(s *series, v uint64) { m.float(s, float64(v)) }

func (m *metricSink) float(s *series, v float64) {
	m.ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, s.values...)
}
