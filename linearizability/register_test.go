package linearizability

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// refStore is a TEST REFERENCE for the checkpoint register: a map of status
// keys standing in for etcd, written by several "coordinators" the way
// TiCDC's saveCheckpointTs does. Correct: an advance is a compare-and-set
// that only raises the stored value. Planted bug (blindAdvance): the writer
// compares against its own in-memory lastSaved and then writes blindly
// (TiCDC's actual scheme), so two writers can lower the stored value.
type refStore struct {
	blindAdvance bool

	mu   sync.Mutex
	keys map[string]uint64
}

func (s *refStore) put(cf string, ts uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[cf] = ts
}

func (s *refStore) delete(cf string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, cf)
}

func (s *refStore) load(cf string) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts, ok := s.keys[cf]
	return ts, ok
}

// advance raises cf's stored checkpoint to ts. lastSaved is the writer's
// in-memory view, used only by the blind variant.
func (s *refStore) advance(cf string, ts uint64, lastSaved map[string]uint64) {
	if s.blindAdvance {
		if ts <= lastSaved[cf] {
			return
		}
		jitter()
		s.mu.Lock()
		if _, ok := s.keys[cf]; ok {
			s.keys[cf] = ts // blind put
		}
		s.mu.Unlock()
		lastSaved[cf] = ts
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.keys[cf]; ok && ts > cur {
		s.keys[cf] = ts
	}
}

// runRegister drives store with writers (each with its own lastSaved, like
// coordinators across a failover), an admin goroutine doing puts and
// deletes, and readers; every call is recorded.
func runRegister(seed uint64, store *refStore) History {
	rec := NewRecorder()
	cfs := []string{"cf-0", "cf-1"}
	for _, cf := range cfs {
		call := rec.Begin(0, Input{Op: OpPut, Changefeed: cf, Ts: 100})
		store.put(cf, 100)
		call.Return(Output{})
	}
	var wg sync.WaitGroup
	const writers, readers, steps = 3, 3, 200
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(client int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(client)))
			lastSaved := map[string]uint64{}
			for i := 0; i < steps; i++ {
				cf := cfs[rng.IntN(len(cfs))]
				ts := 100 + uint64(i)*5 + uint64(rng.IntN(40))
				call := rec.Begin(client, Input{Op: OpAdvance, Changefeed: cf, Ts: ts})
				store.advance(cf, ts, lastSaved)
				call.Return(Output{})
			}
		}(1 + w)
	}
	wg.Add(1)
	go func() { // the admin: resume overwrites, rare remove + re-create
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 99))
		client := 1 + writers
		for i := 0; i < steps/10; i++ {
			time.Sleep(100 * time.Microsecond)
			cf := cfs[rng.IntN(len(cfs))]
			if rng.IntN(4) == 0 {
				call := rec.Begin(client, Input{Op: OpDelete, Changefeed: cf})
				store.delete(cf)
				call.Return(Output{})
			}
			ts := 100 + uint64(rng.IntN(500))
			call := rec.Begin(client, Input{Op: OpPut, Changefeed: cf, Ts: ts})
			store.put(cf, ts)
			call.Return(Output{})
		}
	}()
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func(client int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(client)))
			for i := 0; i < steps; i++ {
				cf := cfs[rng.IntN(len(cfs))]
				call := rec.Begin(client, Input{Op: OpLoad, Changefeed: cf})
				ts, ok := store.load(cf)
				if ok {
					call.Return(Output{CheckpointTs: ts})
				} else {
					call.Return(Output{Err: CodeNotFound})
				}
				jitter()
			}
		}(2 + writers + r)
	}
	wg.Wait()
	return rec.History(fmt.Sprintf("register-seed%d", seed))
}

// TestCheckpointRegisterReference: the CAS-max store is linearizable; the
// blind-put store (two writers, each guarding only with its own lastSaved)
// is caught as Illegal within a few seeds, with the HTML written.
func TestCheckpointRegisterReference(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h := runRegister(seed, &refStore{keys: map[string]uint64{}})
		res, err := CheckWith(CheckpointRegisterModel(), h, CheckOptions{Timeout: refCheckTimeout, Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if !res.Ok() {
			t.Fatalf("CAS-max store judged %s", res)
		}
	}
	for seed := uint64(1); seed <= 5; seed++ {
		h := runRegister(seed, &refStore{keys: map[string]uint64{}, blindAdvance: true})
		res, err := CheckWith(CheckpointRegisterModel(), h, CheckOptions{Timeout: refCheckTimeout, Name: "planted-blind-checkpoint-put", ArtifactRoot: expectedFailureRoot(t), Log: testLog{t}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("blind put, seed %d: %s", seed, res)
		if res.Verdict == porcupine.Illegal {
			assertArtifacts(t, res.ArtifactDir)
			return
		}
	}
	t.Fatal("blind checkpoint put (two writers) not caught in 5 seeds")
}
