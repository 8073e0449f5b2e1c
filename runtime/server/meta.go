package server

import (
	"context"
	"fmt"
	"time"

	"cdcspec/impl/core"
	"cdcspec/runtime/etcdmeta"
)

// MetaStore is core.MetaStore over etcd: the capture executes the
// coordinator's Persist txns with it (etcd txns with mod-revision compares).
// Every call is bounded by Timeout; a store error becomes MetaResult.Err.
type MetaStore struct {
	C       *etcdmeta.Client
	Timeout time.Duration
}

var _ core.MetaStore = (*MetaStore)(nil)

func (m *MetaStore) ctx() (context.Context, context.CancelFunc) {
	t := m.Timeout
	if t == 0 {
		t = 5 * time.Second
	}
	return context.WithTimeout(context.Background(), t)
}

func toCore(kv etcdmeta.KV) core.KV {
	return core.KV{Key: kv.Key, Value: kv.Value, CreateRev: kv.CreateRevision, ModRev: kv.ModRevision, Lease: kv.Lease}
}

// Get implements core.MetaStore.
func (m *MetaStore) Get(key string) (core.KV, bool) {
	ctx, cancel := m.ctx()
	defer cancel()
	kv, ok, _, err := m.C.Get(ctx, key)
	if err != nil || !ok {
		return core.KV{}, false
	}
	return toCore(kv), true
}

// GetPrefix implements core.MetaStore.
func (m *MetaStore) GetPrefix(prefix string) []core.KV {
	kvs, _, err := m.Snapshot(prefix)
	if err != nil {
		return nil
	}
	return kvs
}

// Snapshot is GetPrefix with the read's revision and error.
func (m *MetaStore) Snapshot(prefix string) ([]core.KV, int64, error) {
	ctx, cancel := m.ctx()
	defer cancel()
	kvs, rev, err := m.C.GetPrefix(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	out := make([]core.KV, len(kvs))
	for i, kv := range kvs {
		out[i] = toCore(kv)
	}
	return out, rev, nil
}

// Txn implements core.MetaStore: all compares hold, then all ops apply.
func (m *MetaStore) Txn(t core.MetaTxn) core.MetaResult {
	var conds []etcdmeta.Cond
	ops := make([]etcdmeta.Op, 0, len(t.Ops))
	for _, op := range t.Ops {
		if op.ExpectModRev >= 0 {
			conds = append(conds, etcdmeta.Cond{Key: op.Key, ModRevision: op.ExpectModRev})
		}
		switch op.Kind {
		case core.MetaPut:
			ops = append(ops, etcdmeta.Op{Key: op.Key, Value: op.Value})
		case core.MetaDelete:
			ops = append(ops, etcdmeta.Op{Key: op.Key, Delete: true})
		default:
			return core.MetaResult{Token: t.Token, Err: fmt.Sprintf("meta txn %d: unknown op kind %d on %s", t.Token, op.Kind, op.Key)}
		}
	}
	ctx, cancel := m.ctx()
	defer cancel()
	ok, rev, err := m.C.CAS(ctx, conds, ops)
	if err != nil {
		return core.MetaResult{Token: t.Token, Err: err.Error()}
	}
	if !ok {
		return core.MetaResult{Token: t.Token}
	}
	revs := make([]int64, len(t.Ops))
	for i, op := range t.Ops {
		if op.Kind == core.MetaPut {
			revs[i] = rev
		}
	}
	return core.MetaResult{Token: t.Token, OK: true, Revs: revs}
}

// Grant implements core.MetaStore.
func (m *MetaStore) Grant(ttlMs int64) int64 {
	ctx, cancel := m.ctx()
	defer cancel()
	l, err := m.C.Grant(ctx, time.Duration(ttlMs)*time.Millisecond)
	if err != nil {
		return 0
	}
	return l
}

// PutWithLease implements core.MetaStore.
func (m *MetaStore) PutWithLease(key string, value []byte, lease int64) (int64, error) {
	ctx, cancel := m.ctx()
	defer cancel()
	return m.C.PutWithLease(ctx, key, value, lease)
}

// KeepAlive implements core.MetaStore.
func (m *MetaStore) KeepAlive(lease int64) error {
	ctx, cancel := m.ctx()
	defer cancel()
	return m.C.KeepAliveOnce(ctx, lease)
}

// Revoke implements core.MetaStore.
func (m *MetaStore) Revoke(lease int64) {
	ctx, cancel := m.ctx()
	defer cancel()
	_ = m.C.Revoke(ctx, lease)
}

// Revision implements core.MetaStore.
func (m *MetaStore) Revision() int64 {
	ctx, cancel := m.ctx()
	defer cancel()
	r, _ := m.C.Revision(ctx)
	return r
}
