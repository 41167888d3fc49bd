package subnet

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/rdmakit/rdmakit/sim/topo"
)

var big struct {
	once      sync.Once
	own, ibnd []byte
	nodes     int
}

// bigCaches builds a 102,251-node subnet (1 root, 250 aggregation and
// 2000 leaf switches, 100,000 CAs) through the fill API and writes it in
// both cache formats.
func bigCaches(b *testing.B) ([]byte, []byte, int) {
	big.once.Do(func() {
		f, start := treeFabric(250, 8, 50)
		s := f.discover(b, start, 1)
		var own, ibnd bytes.Buffer
		if err := s.WriteCache(&own); err != nil {
			b.Fatal(err)
		}
		if err := s.WriteIBNDCache(&ibnd); err != nil {
			b.Fatal(err)
		}
		big.own, big.ibnd, big.nodes = own.Bytes(), ibnd.Bytes(), s.Len()
	})
	return big.own, big.ibnd, big.nodes
}

// BenchmarkLoadCache100k loads our cache of a 100k-node subnet.
func BenchmarkLoadCache100k(b *testing.B) {
	own, _, nodes := bigCaches(b)
	b.SetBytes(int64(len(own)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := ParseCache(own)
		if err != nil || s.Len() != nodes {
			b.Fatalf("%v, %d nodes", err, s.Len())
		}
	}
}

// BenchmarkLoadIBNDCache100k loads the libibnetdisc cache of the same.
func BenchmarkLoadIBNDCache100k(b *testing.B) {
	_, ibnd, nodes := bigCaches(b)
	b.SetBytes(int64(len(ibnd)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := ParseIBNDCache(ibnd)
		if err != nil || s.Len() != nodes {
			b.Fatalf("%v", err)
		}
	}
}

// BenchmarkWriteCache100k writes our cache of the same.
func BenchmarkWriteCache100k(b *testing.B) {
	own, _, _ := bigCaches(b)
	s, err := ParseCache(own)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var w bytes.Buffer
		if err := s.WriteCache(&w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscover discovers a 2,130-node leaf-spine (100 leaves of 20
// hosts, 30 spines, 15 uplinks per leaf) through the in-process simulator
// from a CA, answering probes of known switch-to-switch links from them
// (known-links) or sending every probe as libibnetdisc does (probe-all).
// The simulator's own CPU is in the time; smps/op is what was sent,
// fromlinks/op what was answered from links instead.
func BenchmarkDiscover(b *testing.B) {
	tp, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 100, Spines: 30, HostsPerLeaf: 20, Uplinks: 15, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	_, mc, _ := simFabric(b, tp)
	for _, probeAll := range []bool{false, true} {
		name := "known-links"
		if probeAll {
			name = "probe-all"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var sent, fromLinks, queries int
			for i := 0; i < b.N; i++ {
				s, rep, err := Discover(context.Background(), mc, DiscoverOptions{ProbeKnownLinks: probeAll})
				if err != nil || s.Len() != 2130 || len(rep.Failures) != 0 {
					b.Fatalf("%v: %d nodes, %d failures", err, s.Len(), len(rep.Failures))
				}
				sent, fromLinks, queries = rep.Sent, rep.FromLinks, rep.Queries
			}
			b.ReportMetric(float64(sent), "smps/op")
			b.ReportMetric(float64(fromLinks), "fromlinks/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*queries), "ns/query")
		})
	}
}
