package topo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Generate builds a topology from a generator spec, the GENERATOR of a
// `sim:GENERATOR` fabric URI: a generator name, a colon and comma-separated
// key=value parameters.
//
//	fattree:k=4,n=3[,hcaports=2,routers=1]
//	leafspine:leaves=4,spines=2,hosts=8,uplinks=4[,seed=1,hcaports=2,routers=1]
//	dragonfly:a=4,p=2,h=2[,hcaports=2,routers=1]
//	random:switches=16,radix=12,hosts=40[,extra=8,seed=1,hcaports=2,routers=1]
//
// Every generator also takes width=1|2|4|8|12 and speed=SDR|...|NDR|XDR.
// Sizes are checked before anything is built: a fabric beyond MaxNodes or
// MaxPorts is refused with a *SizeError that estimates the memory it would
// need.
func Generate(spec string) (*Topology, error) {
	name, params, _ := strings.Cut(spec, ":")
	kv := map[string]string{}
	if params != "" {
		for _, p := range strings.Split(params, ",") {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("generator %q: parameter %q is not key=value", spec, p)
			}
			kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	used := map[string]bool{}
	var bad error
	num := func(k string, def int) int {
		used[k] = true
		v, ok := kv[k]
		if !ok {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil && bad == nil {
			bad = fmt.Errorf("generator %q: %s=%q is not a number", spec, k, v)
		}
		return n
	}
	seed := func() uint64 {
		v := num("seed", 1)
		if v < 0 && bad == nil {
			bad = fmt.Errorf("generator %q: seed=%d is negative", spec, v)
		}
		return uint64(v)
	}
	link := LinkSpec{Lanes: num("width", 4)}
	used["speed"] = true
	link.Speed = strings.ToUpper(kv["speed"])
	hp, rt := num("hcaports", 1), num("routers", 0)
	var t *Topology
	var err error
	switch strings.ToLower(name) {
	case "fattree", "fat-tree":
		t, err = FatTree(FatTreeConfig{K: num("k", 4), N: num("n", 2), HCAPorts: hp, Routers: rt, Link: link})
	case "leafspine", "leaf-spine":
		t, err = LeafSpine(LeafSpineConfig{Leaves: num("leaves", 4), Spines: num("spines", 2), HostsPerLeaf: num("hosts", 8),
			Uplinks: num("uplinks", 4), Seed: seed(), HCAPorts: hp, Routers: rt, Link: link})
	case "dragonfly":
		t, err = Dragonfly(DragonflyConfig{A: num("a", 4), P: num("p", 2), H: num("h", 2), HCAPorts: hp, Routers: rt, Link: link})
	case "random":
		t, err = Random(RandomConfig{Switches: num("switches", 8), Radix: num("radix", 8), Hosts: num("hosts", 16),
			ExtraLinks: num("extra", 0), Seed: seed(), HCAPorts: hp, Routers: rt, Link: link})
	default:
		return nil, fmt.Errorf("generator %q: unknown generator %q (fattree, leafspine, dragonfly or random)", spec, name)
	}
	if bad != nil {
		return nil, bad
	}
	for k := range kv {
		if !used[k] {
			return nil, fmt.Errorf("generator %q: unknown parameter %q", spec, k)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("generator %q: %w", spec, err)
	}
	return t, nil
}

// Load reads the FILE or GENERATOR of a `sim:` fabric URI: a topology file
// when one exists at that path, a generator spec otherwise.
func Load(spec string) (*Topology, error) {
	if _, err := os.Stat(spec); err == nil {
		return ParseFile(spec)
	}
	if name, _, _ := strings.Cut(spec, ":"); !strings.ContainsAny(name, "/.") {
		return Generate(spec)
	}
	return nil, fmt.Errorf("loading topology %q: no such file, and not a generator spec", spec)
}
