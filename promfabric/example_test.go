package promfabric_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/promfabric"
)

// An exporter on an in-process simulated fabric: discover the topology
// once, then write a scrape. A program serves e.Handler(registry) on
// /metrics and runs e.Run(ctx) beside it to keep the topology fresh.
func ExampleExporter() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Sim.Close()
	defer f.Close()
	e, err := promfabric.New(promfabric.Options{Fabric: f})
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Refresh(ctx); err != nil {
		log.Fatal(err)
	}
	// The first scrape reads each PMA's ClassPortInfo too; later ones
	// read counters only: PortCounters and PortCountersExtended per port.
	var b bytes.Buffer
	for range 2 {
		b.Reset()
		if err := e.WriteMetrics(ctx, &b); err != nil {
			log.Fatal(err)
		}
	}
	up, ports := 0, 0
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ibfabric_node_up{") && strings.HasSuffix(line, " 1"):
			up++
		case strings.HasPrefix(line, "ibfabric_port_symbol_errors_total{"):
			ports++
		case strings.HasPrefix(line, "ibfabric_scrape_reads "), strings.HasPrefix(line, "ibfabric_topology_links "):
			fmt.Println(line)
		}
	}
	fmt.Printf("%d nodes up, %d ports read\n", up, ports)
	// Output:
	// ibfabric_scrape_reads 160
	// ibfabric_topology_links 32
	// 24 nodes up, 80 ports read
}
