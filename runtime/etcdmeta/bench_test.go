package etcdmeta

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCompareAndSwap: sequential CAS bumps of one changefeed status key
// on the embedded etcd (no fsync), the coordinator's checkpoint-write path.
//
//	go test -run XXX -bench . ./runtime/etcdmeta/
func BenchmarkCompareAndSwap(b *testing.B) {
	c, err := Dial(context.Background(), ClientConfig{Endpoints: shared.Endpoints(), Keys: Keys{Cluster: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	key := c.ChangefeedStatus("cf")
	c.Delete(ctx, key)
	var rev int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		ok, cur, _, err := c.CompareAndSwap(ctx, key, rev, []byte(`{"checkpoint-ts":1,"progress":1}`))
		if err != nil || !ok {
			b.Fatalf("cas %d: ok=%v err=%v", i, ok, err)
		}
		rev = cur.ModRevision
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cas/s")
}

// BenchmarkStartEmbedded: time to a serving embedded etcd (and Close).
func BenchmarkStartEmbedded(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e, err := StartEmbedded(EmbedConfig{})
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
