package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"cdcspec/runtime/server"
	"cdcspec/runtime/tikv"
	"cdcspec/spec"
)

// kvState is the cluster's TiKV stores and PD (runtime/tikv), when
// Config.Stores > 0.
type kvState struct {
	pd    *tikv.PD
	mu    sync.Mutex
	down  map[uint64]bool
	heals []storeHealAt
	slow  bool // KVClientRecvDelay is on in the captures
}

type storeHealAt struct {
	at     time.Time
	stores []uint64
	target uint64
}

// StoreHeal is one return of TiKV stores: when, which, and how long the
// changefeed's checkpoint took to pass the upstream resolved ts of that
// moment.
type StoreHeal struct {
	Stores []uint64 `json:"stores"`
	AtMs   int64    `json:"at_ms"` // since the fault phase began
	Target uint64   `json:"target"`
	// CaughtUpMs: from the return to the first stored checkpoint >= Target
	// (-1: never).
	CaughtUpMs int64 `json:"caught_up_ms"`
}

func init() {
	faultInjectors[spec.FaultStore] = func(c *Cluster, _ context.Context, st Step) (string, error) {
		if st.SlowReceive {
			if err := c.slowReceive(true); err != nil {
				return "", err
			}
		}
		return c.StoreFailure(st.AllStores, st.window())
	}
}

// slowReceive switches failpoint KVClientRecvDelay in every capture.
func (c *Cluster) slowReceive(on bool) error {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	for id := range c.Members() {
		if err := c.setFailpoint(ctx, id, server.KVClientRecvDelay, on); err != nil {
			return fmt.Errorf("failpoint %s on %s: %w", server.KVClientRecvDelay, id, err)
		}
	}
	c.kv.mu.Lock()
	c.kv.slow = on
	c.kv.mu.Unlock()
	return nil
}

func usesStores(steps []Step) bool {
	for _, st := range steps {
		if st.Fault == spec.FaultStore {
			return true
		}
	}
	return false
}

// startStores starts the stores and PD and publishes PD's state for the
// captures' kv-clients (before any capture starts).
func (c *Cluster) startStores(ctx context.Context) error {
	if c.cfg.Stores <= 0 {
		// An external etcd may hold an earlier run's PD state: without it
		// the captures run no kv-client.
		if _, _, err := c.Etcd.Delete(ctx, tikv.PDKey); err != nil {
			return fmt.Errorf("cluster: clearing %s: %w", tikv.PDKey, err)
		}
		return nil
	}
	pd, err := tikv.StartPD(tikv.PDConfig{Stores: c.cfg.Stores, Tables: c.cfg.Tables, Seed: c.cfg.Seed,
		Resolved: c.Up.GlobalResolvedTs, Log: c.lg,
		Publish: func(st tikv.State) error {
			b, err := json.Marshal(st)
			if err != nil {
				return err
			}
			pctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
			defer cancel()
			_, err = c.Etcd.Put(pctx, tikv.PDKey, b)
			return err
		}})
	if err != nil {
		return fmt.Errorf("cluster: tikv stores: %w", err)
	}
	c.kv.pd = pd
	c.kv.down = map[uint64]bool{}
	var addrs []string
	for _, s := range pd.Stores() {
		addrs = append(addrs, s.Addr)
	}
	c.progress("%d TiKV stores (%s), %d regions per table", len(addrs), strings.Join(addrs, ","), 4)
	return nil
}

// StoreFailure takes one random store (or every store) down for d, then
// brings it back.
func (c *Cluster) StoreFailure(all bool, d time.Duration) (string, error) {
	if c.kv.pd == nil {
		return "", fmt.Errorf("no TiKV stores (the cluster runs without Config.Stores)")
	}
	var ids []uint64
	c.kv.mu.Lock()
	for _, s := range c.kv.pd.Stores() {
		if !c.kv.down[s.ID] {
			ids = append(ids, s.ID)
		}
	}
	c.kv.mu.Unlock()
	if len(ids) == 0 {
		return "", fmt.Errorf("every store is down already")
	}
	if !all {
		ids = []uint64{ids[c.intn(len(ids))]}
	}
	c.kv.mu.Lock()
	for _, id := range ids {
		c.kv.down[id] = true
	}
	c.kv.mu.Unlock()
	for _, id := range ids {
		c.lg.Warn("tikv_chaos.go", 1, "Inject TiKV failure", zap.Uint64("storeID", id), zap.Duration("duration", d))
		if err := c.kv.pd.StoreDown(id); err != nil {
			return "", err
		}
	}
	time.AfterFunc(d, func() { c.storesUp(ids) })
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatUint(id, 10)
	}
	return fmt.Sprintf("store %s down %s", strings.Join(names, ","), d), nil
}

// storesUp brings the given stores back (those still down) and records the
// return.
func (c *Cluster) storesUp(ids []uint64) {
	c.kv.mu.Lock()
	var back []uint64
	for _, id := range ids {
		if c.kv.down[id] {
			back = append(back, id)
			delete(c.kv.down, id)
		}
	}
	c.kv.mu.Unlock()
	if len(back) == 0 || c.ctx.Err() != nil {
		return
	}
	target := c.Up.GlobalResolvedTs()
	for _, id := range back {
		if err := c.kv.pd.StoreUp(id); err != nil {
			c.progress("store %d: %v", id, err)
		}
	}
	c.lg.Info("tikv_chaos.go", 1, "TiKV failure recovered", zap.Uint64s("stores", back), zap.Uint64("resolvedTs", target))
	c.progress("TiKV store %v back; upstream resolved-ts %d", back, spec.TSO(target))
	c.kv.mu.Lock()
	c.kv.heals = append(c.kv.heals, storeHealAt{at: time.Now(), stores: back, target: target})
	c.kv.mu.Unlock()
}

// healStores brings every store that is down back.
func (c *Cluster) healStores() {
	if c.kv.pd == nil {
		return
	}
	var ids []uint64
	c.kv.mu.Lock()
	for id := range c.kv.down {
		ids = append(ids, id)
	}
	c.kv.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	c.storesUp(ids)
	c.kv.mu.Lock()
	slow := c.kv.slow
	c.kv.mu.Unlock()
	if slow {
		if err := c.slowReceive(false); err != nil {
			c.progress("%v", err)
		}
	}
}

func (c *Cluster) addTableRegions(table int64) error {
	if c.kv.pd == nil {
		return nil
	}
	return c.kv.pd.AddTable(table)
}

func (c *Cluster) closeStores() {
	if c.kv.pd != nil {
		c.kv.pd.Close()
	}
}

// storeHeals measures each store return against the stored-checkpoint
// timeline.
func (c *Cluster) storeHeals(begin time.Time) []StoreHeal {
	c.kv.mu.Lock()
	heals := append([]storeHealAt(nil), c.kv.heals...)
	c.kv.mu.Unlock()
	if len(heals) == 0 {
		return nil
	}
	tl := c.Timeline()
	sort.Slice(tl, func(i, j int) bool { return tl[i].At < tl[j].At })
	out := make([]StoreHeal, 0, len(heals))
	for _, h := range heals {
		sh := StoreHeal{Stores: h.stores, AtMs: h.at.Sub(begin).Milliseconds(), Target: h.target, CaughtUpMs: -1}
		for _, s := range tl {
			if s.At >= h.at.UnixMilli() && s.Checkpoint >= h.target {
				sh.CaughtUpMs = s.At - h.at.UnixMilli()
				break
			}
		}
		out = append(out, sh)
	}
	return out
}
