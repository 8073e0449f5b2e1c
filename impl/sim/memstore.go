package sim

import (
	"errors"
	"sort"
	"strings"

	"cdcspec/impl/core"
)

// MemStore is the simulation's metadata store with etcd semantics: one
// global revision, create/mod revisions per key, atomic compare-and-swap
// txns, and leases whose expiry deletes their keys. It implements
// core.MetaStore.
type MemStore struct {
	rev    int64
	kv     map[string]*core.KV
	leases map[int64]map[string]bool
	nextID int64
	// Unavailable makes every txn fail (an etcd outage).
	Unavailable bool
}

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{kv: map[string]*core.KV{}, leases: map[int64]map[string]bool{}}
}

var errUnavailable = errors.New("etcdserver: request timed out")

// Revision returns the current revision.
func (s *MemStore) Revision() int64 { return s.rev }

// Get returns one key.
func (s *MemStore) Get(key string) (core.KV, bool) {
	kv, ok := s.kv[key]
	if !ok {
		return core.KV{}, false
	}
	return *kv, true
}

// GetPrefix returns keys with the prefix, sorted.
func (s *MemStore) GetPrefix(prefix string) []core.KV {
	var out []core.KV
	for k, kv := range s.kv {
		if strings.HasPrefix(k, prefix) {
			out = append(out, *kv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Txn applies t atomically if every compare holds.
func (s *MemStore) Txn(t core.MetaTxn) core.MetaResult {
	res := core.MetaResult{Token: t.Token}
	if s.Unavailable {
		res.Err = errUnavailable.Error()
		return res
	}
	for _, op := range t.Ops {
		if op.ExpectModRev < 0 {
			continue
		}
		cur, ok := s.kv[op.Key]
		if op.ExpectModRev == 0 && ok {
			return res
		}
		if op.ExpectModRev > 0 && (!ok || cur.ModRev != op.ExpectModRev) {
			return res
		}
	}
	s.rev++
	for _, op := range t.Ops {
		switch op.Kind {
		case core.MetaPut:
			cur, ok := s.kv[op.Key]
			if !ok {
				cur = &core.KV{Key: op.Key, CreateRev: s.rev}
				s.kv[op.Key] = cur
			}
			cur.Value = append([]byte(nil), op.Value...)
			cur.ModRev = s.rev
			res.Revs = append(res.Revs, s.rev)
		case core.MetaDelete:
			s.delete(op.Key)
			res.Revs = append(res.Revs, 0)
		}
	}
	res.OK = true
	return res
}

func (s *MemStore) delete(key string) {
	if kv, ok := s.kv[key]; ok {
		if kv.Lease != 0 {
			delete(s.leases[kv.Lease], key)
		}
		delete(s.kv, key)
	}
}

// Grant creates a lease.
func (s *MemStore) Grant(ttlMs int64) int64 {
	s.nextID++
	s.leases[s.nextID] = map[string]bool{}
	return s.nextID
}

// PutWithLease puts a key attached to a lease.
func (s *MemStore) PutWithLease(key string, value []byte, lease int64) (int64, error) {
	if s.Unavailable {
		return 0, errUnavailable
	}
	keys, ok := s.leases[lease]
	if !ok {
		return 0, errors.New("etcdserver: requested lease not found")
	}
	s.rev++
	kv, exists := s.kv[key]
	if !exists {
		kv = &core.KV{Key: key, CreateRev: s.rev}
		s.kv[key] = kv
	}
	kv.Value, kv.ModRev, kv.Lease = append([]byte(nil), value...), s.rev, lease
	keys[key] = true
	return s.rev, nil
}

// KeepAlive refreshes a lease (leases expire only by Revoke in simulation;
// the simulation revokes a crashed capture's lease after its TTL).
func (s *MemStore) KeepAlive(lease int64) error {
	if _, ok := s.leases[lease]; !ok {
		return errors.New("etcdserver: requested lease not found")
	}
	return nil
}

// Revoke deletes a lease and its keys.
func (s *MemStore) Revoke(lease int64) {
	keys := s.leases[lease]
	ks := make([]string, 0, len(keys))
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		s.rev++
		delete(s.kv, k)
	}
	delete(s.leases, lease)
}

// MemSink is the simulation's downstream: one sink instance per dispatcher
// manager (a Kafka producer). A broken instance fails every write until
// its DM is recreated with a new instance. It implements core.Sink.
type MemSink struct {
	broken map[uint64]*core.RunningError
	// Written counts acknowledged writes per changefeed.
	Written map[core.ChangefeedID]int
}

// NewMemSink returns a healthy sink.
func NewMemSink() *MemSink {
	return &MemSink{broken: map[uint64]*core.RunningError{}, Written: map[core.ChangefeedID]int{}}
}

// Break makes a sink instance fail every write with err.
func (s *MemSink) Break(instance uint64, err core.RunningError) { s.broken[instance] = &err }

// Write applies a write.
func (s *MemSink) Write(w core.SinkWrite) core.SinkResult {
	r := core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.ToTs}
	if e := s.broken[w.Sink]; e != nil {
		ec := *e
		r.Err = &ec
		return r
	}
	s.Written[w.Changefeed]++
	return r
}
