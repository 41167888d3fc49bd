package subnet

import (
	"bytes"
	"sync"
	"testing"
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
