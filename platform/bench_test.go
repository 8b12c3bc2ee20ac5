package platform

import (
	"testing"

	"kairos/internal/testenv"
)

// BenchmarkLoadCrossbar measures reading SimGrid's 65536-host cluster.
func BenchmarkLoadCrossbar(b *testing.B) {
	path := testenv.Shared(b, "simgrid-replay-tests/examples/platforms/cluster_crossbar.xml")
	for i := 0; i < b.N; i++ {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRoutes measures Route on a large cluster: "cold" computes routes
// without the cache (what the first call for a pair costs), "cached"
// repeats calls on known pairs.
func benchRoutes(b *testing.B, spec string) {
	p, err := ParseCluster(spec)
	if err != nil {
		b.Fatal(err)
	}
	n := len(p.Hosts)
	pair := func(i int) (*Host, *Host) {
		return p.Hosts[(i*7919)%n], p.Hosts[(i*104729+13)%n]
	}
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, d := pair(i)
			if c := p.computeRoute(s, d); c.err != nil || len(c.links) == 0 {
				b.Fatal("no route", c.err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "routes/s")
	})
	b.Run("cached", func(b *testing.B) {
		for i := 0; i < 1024; i++ {
			p.Route(pair(i))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, d := pair(i % 1024)
			p.Route(s, d)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "routes/s")
	})
}

func BenchmarkRouteTorus16x16x16(b *testing.B) {
	benchRoutes(b, "4096x1Gf,10GBps,1us,topo=torus:16,16,16,limiter=20GBps")
}

func BenchmarkRouteFatTree4096(b *testing.B) {
	benchRoutes(b, "4096x1Gf,10GBps,1us,topo=fat_tree:3;16,16,16;1,16,16;1,1,1")
}

func BenchmarkRouteDragonfly(b *testing.B) {
	benchRoutes(b, "4320x1Gf,10GBps,1us,topo=dragonfly:9,4;6,3;16,1;5")
}

func BenchmarkRouteFlat65536(b *testing.B) {
	benchRoutes(b, "65536x1Gf,125MBps,50us,bb=10GBps,1us")
}
