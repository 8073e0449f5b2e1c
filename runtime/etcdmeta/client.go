// Package etcdmeta is the metadata store of the real runtime: an embedded
// etcd (or an external one by endpoint) and a small client with the
// operations a TiCDC-like coordinator and capture need.
//
// Key layout (TiCDC's pkg/etcd/etcd.go, section A.2 of
// shared/reference/ticdc-protocol.md), built by Keys:
//
//	/tidb/cdc/<cluster>/<keyspace>/changefeed/info/<name>    ChangeFeedInfo JSON (state, error, epoch, ...)
//	/tidb/cdc/<cluster>/<keyspace>/changefeed/status/<name>  {checkpoint-ts, progress}
//	/tidb/cdc/<cluster>/__cdc_meta__/capture/<capture id>    CaptureInfo JSON, on the capture's session lease
//	/tidb/cdc/<cluster>/__cdc_meta__/owner/<lease id hex>    election key; the lowest create revision is the owner
//
// Operations: Get (value plus mod/create revision and the store revision),
// GetPrefix, Put, Delete, Txn-style compare-and-swap on mod revisions
// (CompareAndSwap for one key, CAS for several; mod revision 0 means "key
// absent"), Watch of a prefix from a revision, capture sessions on a lease
// (Session, with Expire to simulate session loss by revoking the lease:
// the capture key vanishes and Done fires, as when etcd expires it), and
// owner election (Election: Campaign, Resign, Leader, Observe; the owner
// key's revision is the coordinator version).
//
// Values are opaque bytes; the caller owns their JSON shape. Every error
// names the operation and key.
package etcdmeta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// Keys builds TiCDC's etcd keys for one cluster and keyspace.
type Keys struct {
	Cluster  string // default "default"
	Keyspace string // default "default"
}

func (k Keys) cluster() string {
	if k.Cluster == "" {
		return "default"
	}
	return k.Cluster
}

func (k Keys) keyspace() string {
	if k.Keyspace == "" {
		return "default"
	}
	return k.Keyspace
}

// MetaPrefix is /tidb/cdc/<cluster>/__cdc_meta__.
func (k Keys) MetaPrefix() string { return "/tidb/cdc/" + k.cluster() + "/__cdc_meta__" }

// CapturePrefix is /tidb/cdc/<cluster>/__cdc_meta__/capture/.
func (k Keys) CapturePrefix() string { return k.MetaPrefix() + "/capture/" }

// Capture is the key of one capture.
func (k Keys) Capture(id string) string { return k.CapturePrefix() + id }

// OwnerPrefix is the election prefix /tidb/cdc/<cluster>/__cdc_meta__/owner
// (election keys are <OwnerPrefix>/<lease id hex>).
func (k Keys) OwnerPrefix() string { return k.MetaPrefix() + "/owner" }

// ChangefeedInfoPrefix is /tidb/cdc/<cluster>/<keyspace>/changefeed/info/.
func (k Keys) ChangefeedInfoPrefix() string {
	return "/tidb/cdc/" + k.cluster() + "/" + k.keyspace() + "/changefeed/info/"
}

// ChangefeedStatusPrefix is /tidb/cdc/<cluster>/<keyspace>/changefeed/status/.
func (k Keys) ChangefeedStatusPrefix() string {
	return "/tidb/cdc/" + k.cluster() + "/" + k.keyspace() + "/changefeed/status/"
}

// ChangefeedInfo is the info key of a changefeed.
func (k Keys) ChangefeedInfo(name string) string { return k.ChangefeedInfoPrefix() + name }

// ChangefeedStatus is the status key of a changefeed.
func (k Keys) ChangefeedStatus(name string) string { return k.ChangefeedStatusPrefix() + name }

// KV is one key-value with its revisions.
type KV struct {
	Key            string
	Value          []byte
	CreateRevision int64
	ModRevision    int64
	Version        int64
	Lease          int64
}

func fromPB(kv interface {
	GetKey() []byte
	GetValue() []byte
	GetCreateRevision() int64
	GetModRevision() int64
	GetVersion() int64
	GetLease() int64
}) KV {
	return KV{Key: string(kv.GetKey()), Value: kv.GetValue(), CreateRevision: kv.GetCreateRevision(),
		ModRevision: kv.GetModRevision(), Version: kv.GetVersion(), Lease: kv.GetLease()}
}

// ClientConfig configures Dial.
type ClientConfig struct {
	Endpoints   []string // required, e.g. Embedded.Endpoints() or "127.0.0.1:2379"
	Keys        Keys
	DialTimeout time.Duration // default 5s
	Logger      *zap.Logger   // default none
}

// Client wraps a clientv3 client with TiCDC's key layout.
type Client struct {
	Keys
	cli *clientv3.Client
}

// Dial connects to etcd and checks that it answers.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcdmeta: no etcd endpoints")
	}
	dt := cfg.DialTimeout
	if dt <= 0 {
		dt = 5 * time.Second
	}
	lg := cfg.Logger
	if lg == nil {
		lg = zap.NewNop()
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: dt, Logger: lg})
	if err != nil {
		return nil, fmt.Errorf("etcdmeta: dial %v: %w", cfg.Endpoints, err)
	}
	cctx, cancel := context.WithTimeout(ctx, dt)
	defer cancel()
	if _, err := cli.Get(cctx, "/tidb/cdc/", clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcdmeta: etcd at %v does not answer: %w", cfg.Endpoints, err)
	}
	return &Client{Keys: cfg.Keys, cli: cli}, nil
}

// Raw exposes the clientv3 client.
func (c *Client) Raw() *clientv3.Client { return c.cli }

// Close closes the client (and its watches).
func (c *Client) Close() error { return c.cli.Close() }

// Get returns the key (found=false when absent) and the store revision
// at which it was read.
func (c *Client) Get(ctx context.Context, key string) (kv KV, found bool, rev int64, err error) {
	resp, err := c.cli.Get(ctx, key)
	if err != nil {
		return KV{}, false, 0, fmt.Errorf("etcdmeta: get %q: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return KV{}, false, resp.Header.Revision, nil
	}
	return fromPB(resp.Kvs[0]), true, resp.Header.Revision, nil
}

// GetPrefix returns every key under prefix, sorted by key, and the store
// revision (a consistent snapshot: watch from rev+1 to follow it).
func (c *Client) GetPrefix(ctx context.Context, prefix string) ([]KV, int64, error) {
	resp, err := c.cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, 0, fmt.Errorf("etcdmeta: get prefix %q: %w", prefix, err)
	}
	kvs := make([]KV, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		kvs[i] = fromPB(kv)
	}
	return kvs, resp.Header.Revision, nil
}

// Put writes key unconditionally and returns the new revision.
func (c *Client) Put(ctx context.Context, key string, value []byte) (int64, error) {
	resp, err := c.cli.Put(ctx, key, string(value))
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: put %q: %w", key, err)
	}
	return resp.Header.Revision, nil
}

// Delete removes key; deleted says whether it existed.
func (c *Client) Delete(ctx context.Context, key string) (deleted bool, rev int64, err error) {
	resp, err := c.cli.Delete(ctx, key)
	if err != nil {
		return false, 0, fmt.Errorf("etcdmeta: delete %q: %w", key, err)
	}
	return resp.Deleted > 0, resp.Header.Revision, nil
}

// Cond requires Key's mod revision to equal ModRevision; 0 means the key
// must be absent.
type Cond struct {
	Key         string
	ModRevision int64
}

// Op is a write inside a CAS: a Put of Value, or a Delete when Delete is set.
type Op struct {
	Key    string
	Value  []byte
	Delete bool
}

// CAS applies ops atomically if every cond holds. ok=false means a
// condition failed (a conflict, not an error); rev is the store revision
// after the transaction (or at the failed check).
func (c *Client) CAS(ctx context.Context, conds []Cond, ops []Op) (ok bool, rev int64, err error) {
	cmps := make([]clientv3.Cmp, len(conds))
	for i, cd := range conds {
		cmps[i] = clientv3.Compare(clientv3.ModRevision(cd.Key), "=", cd.ModRevision)
	}
	thens := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		if op.Delete {
			thens[i] = clientv3.OpDelete(op.Key)
		} else {
			thens[i] = clientv3.OpPut(op.Key, string(op.Value))
		}
	}
	resp, err := c.cli.Txn(ctx).If(cmps...).Then(thens...).Commit()
	if err != nil {
		return false, 0, fmt.Errorf("etcdmeta: txn on %s: %w", describeOps(conds, ops), err)
	}
	return resp.Succeeded, resp.Header.Revision, nil
}

func describeOps(conds []Cond, ops []Op) string {
	var keys []string
	seen := map[string]bool{}
	for _, c := range conds {
		if !seen[c.Key] {
			seen[c.Key] = true
			keys = append(keys, c.Key)
		}
	}
	for _, o := range ops {
		if !seen[o.Key] {
			seen[o.Key] = true
			keys = append(keys, o.Key)
		}
	}
	return fmt.Sprintf("%q", keys)
}

// CompareAndSwap writes key only if its mod revision is still modRev (0:
// only if absent). On a conflict it returns ok=false and the current value
// (found=false if the key is absent), so the caller can retry.
func (c *Client) CompareAndSwap(ctx context.Context, key string, modRev int64, value []byte) (ok bool, cur KV, found bool, err error) {
	resp, err := c.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return false, KV{}, false, fmt.Errorf("etcdmeta: compare-and-swap %q at mod revision %d: %w", key, modRev, err)
	}
	if resp.Succeeded {
		return true, KV{Key: key, Value: value, ModRevision: resp.Header.Revision}, true, nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return false, KV{}, false, nil
	}
	return false, fromPB(kvs[0]), true, nil
}

// EventType says what a watch event did.
type EventType int

const (
	// EventPut: the key was created or updated.
	EventPut EventType = iota
	// EventDelete: the key was deleted (or its lease ended).
	EventDelete
)

func (t EventType) String() string {
	if t == EventDelete {
		return "DELETE"
	}
	return "PUT"
}

// WatchEvent is one change under a watched prefix, or a terminal error.
type WatchEvent struct {
	Type EventType
	KV   KV // for a delete: Key and ModRevision (the deletion's revision)
	Err  error
}

// Watch streams changes under prefix from revision fromRev (0: from now),
// in revision order. The channel closes when ctx ends or the watch fails;
// a failure (e.g. the revision was compacted) is sent as a final event
// with Err set.
func (c *Client) Watch(ctx context.Context, prefix string, fromRev int64) <-chan WatchEvent {
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV()}
	if fromRev > 0 {
		opts = append(opts, clientv3.WithRev(fromRev))
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	wch := c.cli.Watch(wctx, prefix, opts...)
	out := make(chan WatchEvent, 64)
	go func() {
		defer close(out)
		defer cancel()
		for resp := range wch {
			if err := resp.Err(); err != nil {
				select {
				case out <- WatchEvent{Err: fmt.Errorf("etcdmeta: watch %q: %w", prefix, err)}:
				case <-ctx.Done():
				}
				return
			}
			for _, ev := range resp.Events {
				we := WatchEvent{KV: fromPB(ev.Kv)}
				if ev.Type == clientv3.EventTypeDelete {
					we.Type = EventDelete
				}
				select {
				case out <- we:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

// Revision returns the store's current revision.
func (c *Client) Revision(ctx context.Context) (int64, error) {
	resp, err := c.cli.Get(ctx, "/tidb/cdc/", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: read revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// Grant creates a lease of ttl (rounded up to whole seconds) that nobody
// keeps alive: the caller calls KeepAliveOnce (impl's MetaStore shape).
// Prefer NewSession, which keeps its lease alive in the background.
func (c *Client) Grant(ctx context.Context, ttl time.Duration) (int64, error) {
	resp, err := c.cli.Grant(ctx, ttlSeconds(ttl))
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: grant lease (ttl %v): %w", ttl, err)
	}
	return int64(resp.ID), nil
}

// KeepAliveOnce renews a lease once; it fails if the lease is gone.
func (c *Client) KeepAliveOnce(ctx context.Context, lease int64) error {
	if _, err := c.cli.KeepAliveOnce(ctx, clientv3.LeaseID(lease)); err != nil {
		return fmt.Errorf("etcdmeta: keep lease %x alive: %w", lease, err)
	}
	return nil
}

// Revoke ends a lease and deletes its keys.
func (c *Client) Revoke(ctx context.Context, lease int64) error {
	if _, err := c.cli.Revoke(ctx, clientv3.LeaseID(lease)); err != nil {
		return fmt.Errorf("etcdmeta: revoke lease %x: %w", lease, err)
	}
	return nil
}

// PutWithLease writes key attached to lease (it vanishes with the lease).
func (c *Client) PutWithLease(ctx context.Context, key string, value []byte, lease int64) (int64, error) {
	resp, err := c.cli.Put(ctx, key, string(value), clientv3.WithLease(clientv3.LeaseID(lease)))
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: put %q with lease %x: %w", key, lease, err)
	}
	return resp.Header.Revision, nil
}

func ttlSeconds(ttl time.Duration) int64 {
	secs := int64((ttl + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

// Session is a lease kept alive in the background (concurrency.Session).
// Keys written with it vanish when the lease ends.
type Session struct {
	c *Client
	s *concurrency.Session
}

// NewSession grants a lease with the given TTL (rounded up to whole
// seconds; etcd may raise it to its minimum) and keeps it alive for as long
// as ctx lives: pass the capture's lifetime context, not a setup timeout
// (when ctx ends, keep-alives stop and Done fires; the lease then expires
// after its TTL).
func (c *Client) NewSession(ctx context.Context, ttl time.Duration) (*Session, error) {
	secs := int(ttlSeconds(ttl))
	s, err := concurrency.NewSession(c.cli, concurrency.WithTTL(secs), concurrency.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("etcdmeta: new session (ttl %ds): %w", secs, err)
	}
	return &Session{c: c, s: s}, nil
}

// Lease returns the session's lease id.
func (s *Session) Lease() int64 { return int64(s.s.Lease()) }

// Done is closed when the session ends: its lease expired or was revoked
// (etcd answered a keep-alive with TTL -1), or it was closed. TiCDC's
// capture fences itself and exits (capture suicide) when this fires.
func (s *Session) Done() <-chan struct{} { return s.s.Done() }

// ErrEtcdSessionDone is TiCDC's error for a lost session
// (`[CDC:ErrEtcdSessionDone]etcd session is done`), logged with "session is
// disconnected" before the capture fences itself and exits.
var ErrEtcdSessionDone = errors.New("[CDC:ErrEtcdSessionDone]etcd session is done")

// Err is nil while the session lives and ErrEtcdSessionDone after Done.
func (s *Session) Err() error {
	select {
	case <-s.s.Done():
		return ErrEtcdSessionDone
	default:
		return nil
	}
}

// TTL asks etcd for the lease's remaining TTL in seconds; -1 once the lease
// is gone (TiCDC's second session-loss signal).
func (s *Session) TTL(ctx context.Context) (int64, error) {
	resp, err := s.c.cli.TimeToLive(ctx, s.s.Lease())
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: ttl of lease %x: %w", s.Lease(), err)
	}
	return resp.TTL, nil
}

// Expire ends the session on purpose, as a lost session would end: the
// lease is revoked in etcd, so every key on it vanishes at once for all
// watchers, and Done fires when the keep-alive loop sees the lease gone
// (within about TTL/3). Use it to simulate a capture's etcd session loss.
func (s *Session) Expire(ctx context.Context) error {
	if _, err := s.c.cli.Revoke(ctx, s.s.Lease()); err != nil {
		return fmt.Errorf("etcdmeta: revoke lease %x: %w", s.Lease(), err)
	}
	return nil
}

// Close revokes the lease (a graceful capture exit) and stops keep-alives.
func (s *Session) Close() error { return s.s.Close() }

// CaptureInfo is the value of a capture key (TiCDC's model.CaptureInfo
// JSON field names).
type CaptureInfo struct {
	ID             string `json:"id"`
	AdvertiseAddr  string `json:"address"`
	Version        string `json:"version"`
	StartTimestamp int64  `json:"start-timestamp"`
}

// RegisterCapture writes the capture key on the session's lease. It fails
// if the key already exists (a capture id is fresh at every start).
func (c *Client) RegisterCapture(ctx context.Context, s *Session, info CaptureInfo) error {
	if info.ID == "" {
		return errors.New("etcdmeta: register capture: empty capture id")
	}
	v, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("etcdmeta: register capture %q: %w", info.ID, err)
	}
	key := c.Capture(info.ID)
	resp, err := c.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(v), clientv3.WithLease(s.s.Lease()))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcdmeta: register capture %q: %w", info.ID, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("etcdmeta: register capture %q: key %s already exists", info.ID, key)
	}
	return nil
}

// Captures lists the registered captures and the revision of the read.
func (c *Client) Captures(ctx context.Context) ([]CaptureInfo, int64, error) {
	kvs, rev, err := c.GetPrefix(ctx, c.CapturePrefix())
	if err != nil {
		return nil, 0, err
	}
	out := make([]CaptureInfo, 0, len(kvs))
	for _, kv := range kvs {
		var ci CaptureInfo
		if err := json.Unmarshal(kv.Value, &ci); err != nil {
			return nil, 0, fmt.Errorf("etcdmeta: capture key %s: bad value %q: %w", kv.Key, kv.Value, err)
		}
		out = append(out, ci)
	}
	return out, rev, nil
}

// CaptureIDFromKey returns the capture id of a capture key, or false.
func (c *Client) CaptureIDFromKey(key string) (string, bool) {
	id, ok := strings.CutPrefix(key, c.CapturePrefix())
	return id, ok && id != ""
}

// Election is the owner (coordinator) election on OwnerPrefix.
type Election struct {
	c *Client
	e *concurrency.Election
}

// NewElection prepares a campaign tied to the session: if the session
// ends, the candidacy (or ownership) ends with it.
func (c *Client) NewElection(s *Session) *Election {
	return &Election{c: c, e: concurrency.NewElection(s.s, c.OwnerPrefix())}
}

// Campaign blocks until this candidate is the owner (or ctx ends, or the
// session is lost). value is the capture id, as in TiCDC.
func (e *Election) Campaign(ctx context.Context, captureID string) error {
	if err := e.e.Campaign(ctx, captureID); err != nil {
		return fmt.Errorf("etcdmeta: campaign for owner (%s) as %q: %w", e.c.OwnerPrefix(), captureID, err)
	}
	return nil
}

// Resign gives up ownership (or candidacy); the next candidate wins.
func (e *Election) Resign(ctx context.Context) error {
	if err := e.e.Resign(ctx); err != nil {
		return fmt.Errorf("etcdmeta: resign owner: %w", err)
	}
	return nil
}

// Rev is the revision of this candidate's owner key once elected: the
// coordinator "version", which only increases across owners.
func (e *Election) Rev() int64 { return e.e.Rev() }

// Key is this candidate's election key once it campaigned.
func (e *Election) Key() string { return e.e.Key() }

// ErrNoOwner is returned by Owner when nobody holds the election.
var ErrNoOwner = errors.New("etcdmeta: no owner elected")

// Owner returns the current owner's capture id and its owner-key create
// revision (the coordinator version). ErrNoOwner when there is none.
func (c *Client) Owner(ctx context.Context) (captureID string, rev int64, err error) {
	resp, err := c.cli.Get(ctx, c.OwnerPrefix()+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", 0, fmt.Errorf("etcdmeta: get owner under %s: %w", c.OwnerPrefix(), err)
	}
	if len(resp.Kvs) == 0 {
		return "", 0, ErrNoOwner
	}
	return string(resp.Kvs[0].Value), resp.Kvs[0].CreateRevision, nil
}

// Observe streams the owner's capture id each time ownership changes
// (it is concurrency.Election.Observe; nothing is sent while there is no
// owner). The channel closes when ctx ends.
func (e *Election) Observe(ctx context.Context) <-chan string {
	in := e.e.Observe(ctx)
	out := make(chan string, 1)
	go func() {
		defer close(out)
		for resp := range in {
			if len(resp.Kvs) == 0 {
				continue
			}
			select {
			case out <- string(resp.Kvs[0].Value):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
