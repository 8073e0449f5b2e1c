package cluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/kafkasink"
)

// deadAddr is a local address nothing listens on.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestPreflight: live endpoints pass; a dead --kafka or --etcd is named
// with its flag and address within PreflightTimeout; a listener that
// accepts but never answers (a black hole) is caught by the deadline; an
// interrupt is not blamed on the endpoints.
func TestPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and Kafka; skipped with -short")
	}
	kf, err := kafkasink.StartKfake(kafkasink.KfakeConfig{})
	require.NoError(t, err)
	defer kf.Close()
	emb, err := etcdmeta.StartEmbedded(etcdmeta.EmbedConfig{})
	require.NoError(t, err)
	defer emb.Close()
	ctx := context.Background()
	require.NoError(t, Preflight(ctx, emb.Endpoints(), kf.Addrs()))

	dead := deadAddr(t)
	hole, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hole.Close()
	go func() {
		for {
			c, err := hole.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, never answer
		}
	}()
	for _, c := range []struct {
		etcd, kafka []string
		flag, addr  string
		quick       bool
	}{
		{nil, []string{dead}, "--kafka", dead, true},
		{[]string{dead}, kf.Addrs(), "--etcd", dead, false},
		{emb.Endpoints(), append(kf.Addrs(), hole.Addr().String()), "--kafka", hole.Addr().String(), false},
	} {
		start := time.Now()
		err := Preflight(ctx, c.etcd, c.kafka)
		took := time.Since(start)
		var pe *PreflightError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, c.flag, pe.Flag)
		require.Equal(t, c.addr, pe.Addr)
		require.Contains(t, err.Error(), c.flag+" "+c.addr+" does not answer within 5s")
		require.Less(t, took, PreflightTimeout+time.Second)
		if c.quick {
			require.Less(t, took, time.Second, "a refused connection is known at once")
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err = Preflight(cctx, nil, []string{hole.Addr().String()})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Second)
}
