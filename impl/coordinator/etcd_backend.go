package coordinator

import (
	"encoding/json"
	"strings"

	"go.uber.org/zap"

	"cdcspec/impl/core"
)

// Keys of pkg/etcd/etcd.go for cluster "default".
const (
	clusterPrefix   = "/tidb/cdc/default/"
	infoKeyPrefix   = "/changefeed/info/"
	statusKeyPrefix = "/changefeed/status/"
)

func splitID(id core.ChangefeedID) (keyspace, name string) {
	s := string(id)
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return "default", s
}

// InfoKey is the ChangeFeedInfo key of a changefeed.
func InfoKey(id core.ChangefeedID) string {
	ks, n := splitID(id)
	return clusterPrefix + ks + infoKeyPrefix + n
}

// StatusKey is the status key of a changefeed.
func StatusKey(id core.ChangefeedID) string {
	ks, n := splitID(id)
	return clusterPrefix + ks + statusKeyPrefix + n
}

// ChangefeedStatus is the status key's content.
type ChangefeedStatus struct {
	CheckpointTs uint64   `json:"checkpoint-ts"`
	Progress     Progress `json:"progress"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain structs are marshalled here.
		panic(err)
	}
	return b
}

func zapString(k, v string) zap.Field { return zap.String(k, v) }

// parseChangefeedKey returns the changefeed ID and whether the key is an
// info (true) or status (false) key.
func parseChangefeedKey(key string) (core.ChangefeedID, bool, bool) {
	if !strings.HasPrefix(key, clusterPrefix) {
		return "", false, false
	}
	rest := key[len(clusterPrefix):]
	for _, p := range []string{infoKeyPrefix, statusKeyPrefix} {
		if i := strings.Index(rest, p); i > 0 {
			return core.ChangefeedID(rest[:i] + "/" + rest[i+len(p):]), p == infoKeyPrefix, true
		}
	}
	return "", false, false
}

// txn builders; tokens identify the write in OnMetaResult.
type backend struct {
	nextToken uint64
	pending   map[uint64]pendingWrite
}

type pendingWrite struct {
	cf   core.ChangefeedID
	what string // "checkpoint", "info", "epoch", "create", "delete", "progress"
	// info: the txn's first op is the changefeed's info key; its new mod
	// revision is kept for the next CAS.
	info bool
	// commit, set for an API call's write, applies the call in memory once
	// the write succeeded; a failed write leaves everything unchanged and
	// its error goes to the caller (Coordinator.TakeAPIError).
	commit func(out *core.Effects)
}

// markInfo flags the last added txn as starting with the info key.
func (b *backend) markInfo() {
	pw := b.pending[b.nextToken]
	pw.info = true
	b.pending[b.nextToken] = pw
}

func (b *backend) add(out *core.Effects, cf core.ChangefeedID, what string, ops ...core.MetaOp) {
	b.nextToken++
	if b.pending == nil {
		b.pending = map[uint64]pendingWrite{}
	}
	b.pending[b.nextToken] = pendingWrite{cf: cf, what: what}
	out.Persist = append(out.Persist, core.MetaTxn{Token: b.nextToken, Ops: ops})
}

// addAPI adds an API call's txn; commit runs in OnMetaResult after it
// succeeded (HEAD's API calls write through the backend first and change
// nothing in memory when the write fails).
func (b *backend) addAPI(out *core.Effects, cf core.ChangefeedID, what string, commit func(out *core.Effects), ops ...core.MetaOp) {
	b.add(out, cf, what, ops...)
	pw := b.pending[b.nextToken]
	pw.commit = commit
	b.pending[b.nextToken] = pw
}

func putOp(key string, v any, expect int64) core.MetaOp {
	return core.MetaOp{Kind: core.MetaPut, Key: key, Value: mustJSON(v), ExpectModRev: expect}
}
