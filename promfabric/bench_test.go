package promfabric

import (
	"bufio"
	"context"
	"io"
	"testing"
	"time"
)

// The latency row's fabric, in process: a scrape (counter reads through
// the in-process simulator and the series written) and the writing alone.
const bench10k = "sim:leafspine:leaves=250,spines=20,hosts=40,uplinks=20"

func BenchmarkScrape10k(b *testing.B) {
	f := openSim(b, bench10k)
	e := newExporter(b, f, Options{ScrapeTimeout: time.Minute})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if err := e.WriteMetrics(ctx, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite10k(b *testing.B) {
	f := openSim(b, bench10k)
	e := newExporter(b, f, Options{ScrapeTimeout: time.Minute})
	sc := e.scrape(context.Background(), time.Minute)
	b.ResetTimer()
	for b.Loop() {
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		emit(&textSink{w: w}, sc)
		w.Flush()
	}
}
