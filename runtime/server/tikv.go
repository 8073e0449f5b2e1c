package server

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/tikv"
)

// startKVClient runs a kv-client over the TiKV stores when PD's state is in
// etcd (the run driver started stores, runtime/tikv) and makes the
// upstream's table spans resolve through it; otherwise it does nothing.
func (s *Server) startKVClient(ctx context.Context) error {
	_, ok, _, err := s.etcd.Get(ctx, tikv.PDKey)
	if err != nil {
		return fmt.Errorf("server: reading %s: %w", tikv.PDKey, err)
	}
	if !ok {
		return nil
	}
	kv := tikv.NewClient(EtcdPD(s.etcd), s.lg, s.opts.Bugs)
	s.kv = kv
	s.up.SetPuller(kv)
	go func() { _ = kv.Run(ctx) }()
	s.lg.Info("client.go", 1, "kv client started", zap.String("pd", tikv.PDKey))
	return nil
}

// KVClientRecvDelay is the kv-client's failpoint (tikv.Client.SetRecvDelay):
// on, the receive loop holds each message with region events 5 ms.
const KVClientRecvDelay = "KVClientRecvDelay"

// setKVFailpoint switches a kv-client failpoint; known is false for
// another name, err set when this capture runs no kv-client.
func (s *Server) setKVFailpoint(name string, on bool) (known bool, err error) {
	if name != KVClientRecvDelay {
		return false, nil
	}
	if s.kv == nil {
		return true, fmt.Errorf("failpoint %s: this capture runs no kv-client (no TiKV stores at %s)", name, tikv.PDKey)
	}
	d := time.Duration(0)
	if on {
		d = 5 * time.Millisecond
	}
	s.kv.SetRecvDelay(d)
	return true, nil
}

// EtcdPD reads PD's state from etcd (a region cache reload).
func EtcdPD(c *etcdmeta.Client) tikv.PDSource {
	return tikv.PDFunc(func(ctx context.Context) (tikv.State, error) {
		kv, ok, _, err := c.Get(ctx, tikv.PDKey)
		if err != nil {
			return tikv.State{}, err
		}
		if !ok {
			return tikv.State{}, fmt.Errorf("no PD state at %s", tikv.PDKey)
		}
		return tikv.DecodeState(kv.Value)
	})
}
