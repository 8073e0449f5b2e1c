// Package tikv is the runtime's upstream below TiCDC's puller: TiKV stores
// that hold the regions of every table and serve TiKV's ChangeData
// EventFeed over TCP, a PD that places region leaders on stores and moves
// them, and a kv-client per capture that subscribes to the regions of the
// tables its dispatchers replicate and turns the stores' per-region
// resolved ts into each span's resolved ts (the dispatchers' watermark
// source).
//
// The kv-client follows tiflow's cdc/kv at v7.4.0-alpha (the code of seed
// 004, pingcap/tiflow#9595): an event feed session with a range lock per
// region, a region router, one stream per store with a region worker and a
// receive loop, pending regions moved into the worker by their first
// response, region errors handled by re-requesting the region. The bug
// stuck-after-upstream-failure restores tiflow#9519's placement of
// evictAllRegions in the region worker's own exit (tiflow#9597 moved it
// after both goroutines of the stream exited): a region whose first
// response the receive loop handles after the worker has exited and evicted
// is in neither set any cleanup scans, keeps its range lock, is never
// re-requested, and its resolved ts never moves again.
//
// Row changes do not travel through the kv-client: the sink generates them
// from the shared upstream (runtime/server), a pure function of the ts
// range. What the kv-client decides is how far each span is resolved.
package tikv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// PDKey is the etcd key holding the PD state (State JSON). A capture runs a
// kv-client when the key exists at its start.
const PDKey = "/cdcspec/pd/state"

// StoreInfo is one TiKV store as PD knows it.
type StoreInfo struct {
	ID   uint64 `json:"id"`
	Addr string `json:"addr"`
}

// Region is one region as PD knows it: its key range inside a table (in the
// span key space of spec.Span: "" is the table's start or end), its epoch
// version and its leader's store (0: no leader known, an election runs).
type Region struct {
	ID     uint64 `json:"id"`
	Table  int64  `json:"table"`
	Start  string `json:"start"`
	End    string `json:"end"`
	Ver    uint64 `json:"ver"`
	Leader uint64 `json:"leader"`
}

// State is PD's view: the stores and the regions.
type State struct {
	Stores  []StoreInfo `json:"stores"`
	Regions []Region    `json:"regions"`
}

// Store returns the store with id.
func (s State) Store(id uint64) (StoreInfo, bool) {
	for _, st := range s.Stores {
		if st.ID == id {
			return st, true
		}
	}
	return StoreInfo{}, false
}

// ChangeDataRequest registers a region on a store's event feed (cdcpb
// ChangeDataRequest: region, request ID, epoch, checkpoint ts, key range).
type ChangeDataRequest struct {
	RegionID     uint64 `json:"region_id"`
	RequestID    uint64 `json:"request_id"`
	Ver          uint64 `json:"ver"`
	CheckpointTs uint64 `json:"checkpoint_ts"`
	Start        string `json:"start"`
	End          string `json:"end"`
}

// RegionError is cdcpb's Event_Error: why a region's feed stopped.
type RegionError struct {
	// NotLeader: the store does not lead the region; Leader is the leader
	// it knows (0: none, an election runs).
	NotLeader *NotLeader `json:"not_leader,omitempty"`
	// EpochNotMatch: the request's region epoch is stale.
	EpochNotMatch bool `json:"epoch_not_match,omitempty"`
	// RegionNotFound: the store has no peer of the region.
	RegionNotFound bool `json:"region_not_found,omitempty"`
}

// NotLeader carries the leader the store knows.
type NotLeader struct {
	Leader uint64 `json:"leader"`
}

func (e *RegionError) String() string {
	switch {
	case e.NotLeader != nil:
		return "not_leader:<leader:<store_id:" + strconv.FormatUint(e.NotLeader.Leader, 10) + "> >"
	case e.EpochNotMatch:
		return "epoch_not_match:<>"
	case e.RegionNotFound:
		return "region_not_found:<>"
	}
	return "<>"
}

// Event is one region's event in a ChangeDataEvent: INITIALIZED (the
// incremental scan finished) or an error.
type Event struct {
	RegionID    uint64       `json:"region_id"`
	RequestID   uint64       `json:"request_id"`
	Initialized bool         `json:"initialized,omitempty"`
	Error       *RegionError `json:"error,omitempty"`
}

// ResolvedTs is cdcpb's batched resolved ts: every listed region is
// resolved to Ts.
type ResolvedTs struct {
	Regions []uint64 `json:"regions"`
	Ts      uint64   `json:"ts"`
}

// ChangeDataEvent is one message of the event feed stream from a store.
type ChangeDataEvent struct {
	Events     []Event     `json:"events,omitempty"`
	ResolvedTs *ResolvedTs `json:"resolved_ts,omitempty"`
}

// The wire format: one JSON value per line, requests from the client,
// ChangeDataEvents from the store.

func writeMsg(w *bufio.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return err
	}
	return w.Flush()
}

func readMsg(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("tikv: bad message: %w", err)
	}
	return nil
}

// RegionsOf divides table into n regions over the key space of the
// runtime's upstream (8 lower-case letters): boundaries at letters, the
// first region starting at the table's start and the last ending at its
// end. Region IDs are table*1000 + index + 1.
func RegionsOf(table int64, n int) []Region {
	if n < 1 {
		n = 1
	}
	out := make([]Region, 0, n)
	start := ""
	for i := 0; i < n; i++ {
		end := ""
		if i < n-1 {
			end = string(rune('a' + 26*(i+1)/n))
		}
		out = append(out, Region{ID: uint64(table)*1000 + uint64(i) + 1, Table: table, Start: start, End: end, Ver: 1})
		start = end
	}
	return out
}

// overlaps reports whether [s1, e1) and [s2, e2) intersect ("" as end is
// +inf, "" as start is -inf).
func overlaps(s1, e1, s2, e2 string) bool {
	return (e2 == "" || s1 < e2) && (e1 == "" || s2 < e1)
}
