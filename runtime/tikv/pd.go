package tikv

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"cdcspec/impl/logging"
)

// PDConfig configures the stores and PD.
type PDConfig struct {
	Stores          int // TiKV stores (default 3)
	Tables          int // tables 1..Tables have regions from the start
	RegionsPerTable int // default 4
	Seed            uint64
	// Resolved is the upstream resolved ts every store reports for the
	// regions it leads (the runtime's shared upstream: now - lag, frozen
	// while stalled).
	Resolved func() uint64
	// Publish stores PD's state where kv-clients read it (etcd PDKey in
	// the runtime); called after every change, never concurrently.
	Publish func(State) error
	// Log receives PD's lines (nil: none). It is used under PD's lock.
	Log *logging.Logger
	// DetectDelay: a store down this long is marked down and its leaders
	// are elected elsewhere (PD needs 10 s+ and Raft another election
	// timeout in TiKV; default 1 s here).
	DetectDelay time.Duration
	// RecoveryWindow: after a store comes back, leaders are transferred to
	// balance for this long (default 5 s).
	RecoveryWindow time.Duration
}

func (c PDConfig) withDefaults() PDConfig {
	if c.Stores == 0 {
		c.Stores = 3
	}
	if c.RegionsPerTable == 0 {
		c.RegionsPerTable = 4
	}
	if c.DetectDelay == 0 {
		c.DetectDelay = time.Second
	}
	if c.RecoveryWindow == 0 {
		c.RecoveryWindow = 5 * time.Second
	}
	return c
}

type regionMeta struct {
	Region
	readyAt time.Time // the leader leads from here on (election, transfer)
}

// PD places region leaders on stores: round-robin at start, elsewhere when
// a store goes down, and back by leader transfers when it returns.
type PD struct {
	cfg    PDConfig
	stores []*Store

	mu      sync.Mutex
	regions map[uint64]*regionMeta
	rng     *rand.Rand
	pubMu   sync.Mutex
	closed  bool
	gen     map[uint64]int // per store: bumps on every down/up, stops stale timers
}

// StartPD starts the stores and publishes PD's first state.
func StartPD(cfg PDConfig) (*PD, error) {
	cfg = cfg.withDefaults()
	if cfg.Resolved == nil {
		return nil, fmt.Errorf("tikv: PDConfig.Resolved is required")
	}
	pd := &PD{cfg: cfg, regions: map[uint64]*regionMeta{}, rng: rand.New(rand.NewPCG(cfg.Seed, 0x7064)), gen: map[uint64]int{}}
	for i := 1; i <= cfg.Stores; i++ {
		s, err := newStore(uint64(i), pd, cfg.Seed)
		if err != nil {
			pd.Close()
			return nil, err
		}
		pd.stores = append(pd.stores, s)
	}
	for t := 1; t <= cfg.Tables; t++ {
		pd.addTableLocked(int64(t))
	}
	if err := pd.publish(); err != nil {
		pd.Close()
		return nil, err
	}
	return pd, nil
}

// Stores returns the stores.
func (pd *PD) Stores() []*Store { return pd.stores }

// Close stops every store.
func (pd *PD) Close() {
	pd.mu.Lock()
	pd.closed = true
	pd.mu.Unlock()
	for _, s := range pd.stores {
		s.down()
	}
}

func (pd *PD) resolved() uint64 { return pd.cfg.Resolved() }

// leaderOf is what a store asks PD (its Raft state, here): the region's
// leader, epoch version, whether the leader leads already, and whether the
// region exists.
func (pd *PD) leaderOf(region uint64) (leader, ver uint64, ready, ok bool) {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	r := pd.regions[region]
	if r == nil {
		return 0, 0, false, false
	}
	return r.Leader, r.Ver, !time.Now().Before(r.readyAt), true
}

func (pd *PD) addTableLocked(table int64) {
	n := 0
	for _, r := range pd.regions {
		if r.Table == table {
			return
		}
	}
	up := pd.upStoresLocked()
	for _, r := range RegionsOf(table, pd.cfg.RegionsPerTable) {
		if len(up) > 0 {
			r.Leader = up[(int(table)+n)%len(up)]
		}
		n++
		pd.regions[r.ID] = &regionMeta{Region: r}
	}
}

// AddTable places the regions of a table created by DDL.
func (pd *PD) AddTable(table int64) error {
	pd.mu.Lock()
	pd.addTableLocked(table)
	pd.mu.Unlock()
	return pd.publish()
}

func (pd *PD) upStoresLocked() []uint64 {
	var out []uint64
	for _, s := range pd.stores {
		if s.Up() {
			out = append(out, s.ID)
		}
	}
	return out
}

// State returns PD's current state.
func (pd *PD) State() State {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	return pd.stateLocked()
}

func (pd *PD) stateLocked() State {
	var st State
	for _, s := range pd.stores {
		st.Stores = append(st.Stores, StoreInfo{ID: s.ID, Addr: s.Addr})
	}
	for _, r := range pd.regions {
		st.Regions = append(st.Regions, r.Region)
	}
	sort.Slice(st.Regions, func(i, j int) bool { return st.Regions[i].ID < st.Regions[j].ID })
	return st
}

func (pd *PD) publish() error {
	if pd.cfg.Publish == nil {
		return nil
	}
	pd.pubMu.Lock()
	defer pd.pubMu.Unlock()
	return pd.cfg.Publish(pd.State())
}

func (pd *PD) store(id uint64) *Store {
	for _, s := range pd.stores {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func (pd *PD) log(msg string, fields ...zap.Field) {
	if pd.cfg.Log != nil {
		pd.cfg.Log.Info("pd.go", 1, msg, fields...)
	}
}

// StoreDown takes a store down: its streams break at once; after
// DetectDelay PD elects its regions' leaders on the stores still up.
func (pd *PD) StoreDown(id uint64) error {
	s := pd.store(id)
	if s == nil {
		return fmt.Errorf("tikv: no store %d", id)
	}
	pd.mu.Lock()
	pd.gen[id]++
	g := pd.gen[id]
	pd.log("store is down", zap.Uint64("storeID", id), zap.String("addr", s.Addr))
	pd.mu.Unlock()
	s.down()
	time.AfterFunc(pd.cfg.DetectDelay, func() {
		pd.mu.Lock()
		if pd.closed || pd.gen[id] != g {
			pd.mu.Unlock()
			return
		}
		pd.log("store is disconnected, elect its leaders elsewhere", zap.Uint64("storeID", id))
		pd.electLocked(func(r *regionMeta) bool { return r.Leader == id })
		pd.mu.Unlock()
		_ = pd.publish()
	})
	return nil
}

// electLocked starts an election for every region pick selects whose leader
// is down or that pick wants re-elected: a random store that is up wins,
// and leads after an election timeout. Regions with no store up keep their
// leader (unavailable).
func (pd *PD) electLocked(pick func(*regionMeta) bool) {
	up := pd.upStoresLocked()
	if len(up) == 0 {
		return
	}
	now := time.Now()
	for _, id := range pd.sortedRegionsLocked() {
		r := pd.regions[id]
		if !pick(r) {
			continue
		}
		r.Leader = up[pd.rng.IntN(len(up))]
		r.readyAt = now.Add(time.Duration(300+pd.rng.IntN(1200)) * time.Millisecond)
	}
}

func (pd *PD) sortedRegionsLocked() []uint64 {
	ids := make([]uint64, 0, len(pd.regions))
	for id := range pd.regions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// StoreUp brings a store back: regions whose leader is down (or on this
// store, restarted) elect a leader, then for RecoveryWindow PD transfers
// leaders between stores (balance-leader), each new leader leading after
// the transfer completes.
func (pd *PD) StoreUp(id uint64) error {
	s := pd.store(id)
	if s == nil {
		return fmt.Errorf("tikv: no store %d", id)
	}
	if s.Up() {
		return nil
	}
	if err := s.restart(); err != nil {
		return err
	}
	pd.mu.Lock()
	pd.gen[id]++
	g := pd.gen[id]
	pd.log("store is up", zap.Uint64("storeID", id), zap.String("addr", s.Addr))
	pd.electLocked(func(r *regionMeta) bool {
		ls := pd.store(r.Leader)
		return r.Leader == id || ls == nil || !ls.Up()
	})
	pd.mu.Unlock()
	if err := pd.publish(); err != nil {
		return err
	}
	go pd.balance(id, g)
	return nil
}

// balance transfers random region leaders, preferring the returned store
// while it leads fewer than its share, until RecoveryWindow ends.
func (pd *PD) balance(id uint64, g int) {
	end := time.Now().Add(pd.cfg.RecoveryWindow)
	for time.Now().Before(end) {
		time.Sleep(150 * time.Millisecond)
		pd.mu.Lock()
		if pd.closed || pd.gen[id] != g {
			pd.mu.Unlock()
			return
		}
		up := pd.upStoresLocked()
		ids := pd.sortedRegionsLocked()
		if len(up) < 2 || len(ids) == 0 {
			pd.mu.Unlock()
			continue
		}
		led := 0
		for _, rid := range ids {
			if pd.regions[rid].Leader == id {
				led++
			}
		}
		r := pd.regions[ids[pd.rng.IntN(len(ids))]]
		to := id
		if led*len(up) >= len(ids) || r.Leader == id {
			to = up[pd.rng.IntN(len(up))]
		}
		from := r.Leader
		if to == from {
			pd.mu.Unlock()
			continue
		}
		r.Leader = to
		r.readyAt = time.Now().Add(time.Duration(100+pd.rng.IntN(300)) * time.Millisecond)
		pd.log("transfer leader", zap.Uint64("regionID", r.ID), zap.Uint64("from", from), zap.Uint64("to", to))
		pd.mu.Unlock()
		if fs := pd.store(from); fs != nil {
			fs.leaderLost(r.ID, to)
		}
		_ = pd.publish()
	}
}
