package promfabric

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// ScrapeTimeoutHeader is the header in which Prometheus sends a scrape's
// timeout, in seconds.
const ScrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// Describe sends the description of every fabric family (prometheus.Collector).
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		ch <- descs[f]
	}
}

// Collect reads the fabric, bounded by Options.ScrapeTimeout, and sends
// its series (prometheus.Collector). Use it for fabrics of modest size: a
// registry holds and sorts every series; Handler streams them.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	sc := e.scrape(context.Background(), e.bound(0))
	emit(&metricSink{ch: ch}, sc)
}

// bound is the time a scrape's counter reads may take: ScrapeTimeout, or
// less when the scraper's own timeout (header) is shorter; a tenth of it
// (at most a second) is kept for writing the series.
func (e *Exporter) bound(header time.Duration) time.Duration {
	d := e.o.ScrapeTimeout
	if header > 0 && header < d {
		d = header
	}
	return d - min(d/10, time.Second)
}

// WriteMetrics reads the fabric, bounded by Options.ScrapeTimeout and ctx, and
// writes its series to w in the text exposition format (version 0.0.4).
func (e *Exporter) WriteMetrics(ctx context.Context, w io.Writer) error {
	sc := e.scrape(ctx, e.bound(0))
	bw := bufio.NewWriterSize(w, 64<<10)
	emit(&textSink{w: bw}, sc)
	return bw.Flush()
}

// Handler serves /metrics: the fabric's series, read for this request
// within Options.ScrapeTimeout and the scraper's timeout
// (ScrapeTimeoutHeader), written as they are made, then those g gathers
// (nil for none), in the text exposition format; gzipped when the client
// accepts it.
func (e *Exporter) Handler(g prometheus.Gatherer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var header time.Duration
		if v := r.Header.Get(ScrapeTimeoutHeader); v != "" {
			if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
				header = time.Duration(s * float64(time.Second))
			}
		}
		var mfs []*dto.MetricFamily
		var gerr error
		if g != nil {
			mfs, gerr = g.Gather()
			if gerr != nil {
				e.log.Warn("gathering the exporter's own metrics", "err", gerr)
			}
		}
		w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		var out io.Writer = w
		if acceptsGzip(r) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Add("Vary", "Accept-Encoding")
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			defer zw.Close()
			out = zw
		}
		bw := bufio.NewWriterSize(out, 64<<10)
		defer bw.Flush()
		sc := e.scrape(r.Context(), e.bound(header))
		emit(&textSink{w: bw}, sc)
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(bw, mf); err != nil {
				e.log.Warn("writing the exporter's own metrics", "err", err)
				return
			}
		}
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(enc, "gzip") {
			return true
		}
	}
	return false
}
