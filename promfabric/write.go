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
	w   *bufio.Writer
	f   *family
	buf []byte
}

func (t *textSink) begin(f *family) {
	t.f = f
	b := t.buf[:0]
	b = append(b, "# HELP "...)
	b = append(b, Namespace...)
	b = append(b, '_')
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.help...)
	b = append(b, "\n# TYPE "...)
	b = append(b, Namespace...)
	b = append(b, '_')
	b = append(b, f.name...)
	b = append(b, ' ')
	b = append(b, f.typ.String()...)
	b = append(b, '\n')
	t.buf = b
	_, _ = t.w.Write(b)
}

func (t *textSink) start(s *series) []byte {
	b := t.buf[:0]
	b = append(b, Namespace...)
	b = append(b, '_')
	b = append(b, t.f.name...)
	b = append(b, s.text...)
	return append(b, ' ')
}

func (t *textSink) value(s *series, v uint64) {
	b := strconv.AppendUint(t.start(s), v, 10)
	t.buf = append(b, '\n')
	_, _ = t.w.Write(t.buf)
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
	default:
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	t.buf = append(b, '\n')
	_, _ = t.w.Write(t.buf)
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
