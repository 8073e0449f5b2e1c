package etcdmeta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

var shared *Embedded

func TestMain(m *testing.M) {
	var err error
	shared, err = StartEmbedded(EmbedConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// dial connects to the shared etcd with a cluster name private to the test.
func dial(t *testing.T) *Client {
	t.Helper()
	c, err := Dial(context.Background(), ClientConfig{Endpoints: shared.Endpoints(), Keys: Keys{Cluster: t.Name()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Start clean when the test runs again (-count > 1) on the shared etcd.
	if _, err := c.Raw().Delete(context.Background(), "/tidb/cdc/"+t.Name()+"/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestKeys(t *testing.T) {
	k := Keys{}
	for got, want := range map[string]string{
		k.ChangefeedInfo("cf-1"):                             "/tidb/cdc/default/default/changefeed/info/cf-1",
		k.ChangefeedStatus("cf-1"):                           "/tidb/cdc/default/default/changefeed/status/cf-1",
		k.Capture("c1"):                                      "/tidb/cdc/default/__cdc_meta__/capture/c1",
		k.OwnerPrefix():                                      "/tidb/cdc/default/__cdc_meta__/owner",
		Keys{"cl", "ks"}.ChangefeedInfo("x"):                 "/tidb/cdc/cl/ks/changefeed/info/x",
		Keys{Cluster: "cl"}.ChangefeedStatusPrefix():         "/tidb/cdc/cl/default/changefeed/status/",
		Keys{Cluster: "cl", Keyspace: "k"}.Capture("") + "z": "/tidb/cdc/cl/__cdc_meta__/capture/z",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
}

func TestCompareAndSwapConflict(t *testing.T) {
	c, ctx := dial(t), ctxT(t)
	key := c.ChangefeedInfo("cf")
	ok, _, _, err := c.CompareAndSwap(ctx, key, 0, []byte(`{"epoch":1}`))
	if err != nil || !ok {
		t.Fatalf("create: ok=%v err=%v", ok, err)
	}
	kv, found, _, err := c.Get(ctx, key)
	if err != nil || !found || string(kv.Value) != `{"epoch":1}` || kv.ModRevision == 0 || kv.CreateRevision != kv.ModRevision {
		t.Fatalf("get after create: %+v found=%v err=%v", kv, found, err)
	}
	// A second creator loses and sees the winner's value.
	ok, cur, found, err := c.CompareAndSwap(ctx, key, 0, []byte(`{"epoch":9}`))
	if err != nil || ok || !found || string(cur.Value) != `{"epoch":1}` || cur.ModRevision != kv.ModRevision {
		t.Fatalf("second create: ok=%v cur=%+v found=%v err=%v", ok, cur, found, err)
	}
	// Two writers read the same revision; only the first CAS wins.
	ok1, _, _, err1 := c.CompareAndSwap(ctx, key, kv.ModRevision, []byte(`{"epoch":2}`))
	ok2, cur2, _, err2 := c.CompareAndSwap(ctx, key, kv.ModRevision, []byte(`{"epoch":3}`))
	if err1 != nil || err2 != nil || !ok1 || ok2 || string(cur2.Value) != `{"epoch":2}` || cur2.ModRevision <= kv.ModRevision {
		t.Fatalf("concurrent bump: ok1=%v ok2=%v cur2=%+v errs %v %v", ok1, ok2, cur2, err1, err2)
	}
	// Multi-key CAS: create info+status only if both are absent (TiCDC's
	// CreateChangefeed); the info key exists, so nothing is written.
	status := c.ChangefeedStatus("cf")
	ok, _, err = c.CAS(ctx, []Cond{{key, 0}, {status, 0}}, []Op{{Key: key, Value: []byte("x")}, {Key: status, Value: []byte(`{"checkpoint-ts":1}`)}})
	if err != nil || ok {
		t.Fatalf("multi-key create over an existing key: ok=%v err=%v", ok, err)
	}
	if _, found, _, _ := c.Get(ctx, status); found {
		t.Fatal("failed CAS wrote the status key")
	}
	ok, rev, err := c.CAS(ctx, []Cond{{key, cur2.ModRevision}, {status, 0}}, []Op{{Key: status, Value: []byte(`{"checkpoint-ts":1}`)}, {Key: key, Delete: true}})
	if err != nil || !ok || rev <= cur2.ModRevision {
		t.Fatalf("multi-key CAS: ok=%v rev=%d err=%v", ok, rev, err)
	}
	if _, found, _, _ := c.Get(ctx, key); found {
		t.Fatal("CAS delete did not delete")
	}
	deleted, _, err := c.Delete(ctx, status)
	if err != nil || !deleted {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	deleted, _, err = c.Delete(ctx, status)
	if err != nil || deleted {
		t.Fatalf("second delete: %v %v", deleted, err)
	}
}

func TestWatchPrefixInRevisionOrder(t *testing.T) {
	c, ctx := dial(t), ctxT(t)
	pre := c.ChangefeedStatusPrefix()
	if _, err := c.Put(ctx, pre+"a", []byte("0")); err != nil {
		t.Fatal(err)
	}
	kvs, rev, err := c.GetPrefix(ctx, pre)
	if err != nil || len(kvs) != 1 {
		t.Fatalf("get prefix: %v %v", kvs, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := c.Watch(wctx, pre, rev+1)
	// Written before and after the watch is established: nothing is missed
	// because the watch starts at rev+1.
	c.Put(ctx, pre+"a", []byte("1"))
	c.Put(ctx, pre+"b", []byte("2"))
	c.Put(ctx, c.ChangefeedInfo("a"), []byte("not watched"))
	c.Delete(ctx, pre+"a")
	want := []string{"PUT " + pre + "a=1", "PUT " + pre + "b=2", "DELETE " + pre + "a="}
	var last int64
	for i, w := range want {
		select {
		case ev := <-ch:
			if ev.Err != nil {
				t.Fatal(ev.Err)
			}
			got := fmt.Sprintf("%s %s=%s", ev.Type, ev.KV.Key, ev.KV.Value)
			if got != w || ev.KV.ModRevision <= last {
				t.Fatalf("event %d: %q (rev %d), want %q after rev %d", i, got, ev.KV.ModRevision, w, last)
			}
			last = ev.KV.ModRevision
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d (%s) not seen", i, w)
		}
	}
	cancel()
	for range ch {
	}
}

func TestSessionExpiryRemovesCaptureAndFiresDone(t *testing.T) {
	c, ctx := dial(t), ctxT(t)
	s1, err := c.NewSession(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := c.NewSession(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := c.RegisterCapture(ctx, s1, CaptureInfo{ID: "c1", AdvertiseAddr: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterCapture(ctx, s2, CaptureInfo{ID: "c2", AdvertiseAddr: "127.0.0.1:2"}); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterCapture(ctx, s2, CaptureInfo{ID: "c1"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate capture registration: %v", err)
	}
	_, rev, err := c.Captures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := c.Watch(wctx, c.CapturePrefix(), rev+1)

	// Keep-alive works: after more than the TTL both captures are still there.
	time.Sleep(2500 * time.Millisecond)
	caps, _, err := c.Captures(ctx)
	if err != nil || len(caps) != 2 {
		t.Fatalf("captures after more than a TTL with keep-alive: %+v %v", caps, err)
	}
	select {
	case <-s1.Done():
		t.Fatal("session done while kept alive")
	default:
	}

	start := time.Now()
	if err := s1.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Err != nil || ev.Type != EventDelete || ev.KV.Key != c.Capture("c1") {
			t.Fatalf("watch after expiry: %+v", ev)
		}
		if id, ok := c.CaptureIDFromKey(ev.KV.Key); !ok || id != "c1" {
			t.Fatalf("CaptureIDFromKey(%q) = %q %v", ev.KV.Key, id, ok)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("capture key did not vanish")
	}
	select {
	case <-s1.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("session Done did not fire after the lease was revoked")
	}
	t.Logf("session Done fired %v after Expire", time.Since(start))
	if err := s1.Err(); !errors.Is(err, ErrEtcdSessionDone) || err.Error() != "[CDC:ErrEtcdSessionDone]etcd session is done" {
		t.Fatalf("Err() after expiry = %v", err)
	}
	if err := s2.Err(); err != nil {
		t.Fatalf("live session Err() = %v", err)
	}
	if ttl, err := s1.TTL(ctx); err != nil || ttl != -1 {
		t.Fatalf("TTL after expiry = %d, %v; want -1", ttl, err)
	}
	caps, _, err = c.Captures(ctx)
	if err != nil || len(caps) != 1 || caps[0].ID != "c2" || caps[0].AdvertiseAddr != "127.0.0.1:2" {
		t.Fatalf("captures after expiry: %+v %v", caps, err)
	}
	select {
	case <-s2.Done():
		t.Fatal("the other session ended too")
	default:
	}
}

// waitCandidates waits until n election keys exist under the owner prefix.
func waitCandidates(t *testing.T, c *Client, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		kvs, _, err := c.GetPrefix(context.Background(), c.OwnerPrefix()+"/")
		if err != nil {
			t.Fatal(err)
		}
		if len(kvs) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d election keys, want %d", len(kvs), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestElectionHandsOverOnResignAndExpiry(t *testing.T) {
	c, ctx := dial(t), ctxT(t)
	if _, _, err := c.Owner(ctx); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("owner before any campaign: %v", err)
	}
	newCandidate := func() (*Session, *Election) {
		s, err := c.NewSession(ctx, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, c.NewElection(s)
	}
	_, ea := newCandidate()
	sb, eb := newCandidate()
	_, ec := newCandidate()

	octx, ocancel := context.WithCancel(ctx)
	defer ocancel()
	observed := ea.Observe(octx)

	if err := ea.Campaign(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	won := make(chan string, 2)
	go func() {
		if err := eb.Campaign(ctx, "B"); err == nil {
			won <- "B"
		}
	}()
	waitCandidates(t, c, 2) // B is queued behind A
	go func() {
		if err := ec.Campaign(ctx, "C"); err == nil {
			won <- "C"
		}
	}()
	waitCandidates(t, c, 3)
	id, revA, err := c.Owner(ctx)
	if err != nil || id != "A" || revA != ea.Rev() {
		t.Fatalf("owner %q rev %d (A's rev %d), %v", id, revA, ea.Rev(), err)
	}
	select {
	case w := <-won:
		t.Fatalf("%s won while A owns", w)
	default:
	}

	if err := ea.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-won:
		if w != "B" {
			t.Fatalf("%s won after A resigned; B campaigned first", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nobody took over after A resigned")
	}
	id, revB, err := c.Owner(ctx)
	if err != nil || id != "B" || revB <= revA {
		t.Fatalf("owner after resign %q rev %d (A's %d), %v", id, revB, revA, err)
	}

	if err := sb.Expire(ctx); err != nil { // B loses its session
		t.Fatal(err)
	}
	select {
	case w := <-won:
		if w != "C" {
			t.Fatalf("%s won after B expired", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nobody took over after B's session expired")
	}
	id, revC, err := c.Owner(ctx)
	if err != nil || id != "C" || revC <= revB {
		t.Fatalf("owner after expiry %q rev %d (B's %d), %v", id, revC, revB, err)
	}

	// Observe may skip a short-lived owner (B) but never goes backwards.
	var seen []string
	deadline := time.After(5 * time.Second)
	for len(seen) == 0 || seen[len(seen)-1] != "C" {
		select {
		case o := <-observed:
			if len(seen) == 0 || seen[len(seen)-1] != o {
				seen = append(seen, o)
			}
		case <-deadline:
			t.Fatalf("observed owners %v, want A, (B,) C", seen)
		}
	}
	if got := strings.Join(seen, ","); got != "A,B,C" && got != "A,C" {
		t.Fatalf("observed owners %v, want A, (B,) C", seen)
	}
}

func TestBareLeaseExpires(t *testing.T) {
	c, ctx := dial(t), ctxT(t)
	rev0, err := c.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := c.Grant(ctx, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := c.PutWithLease(ctx, c.Capture("bare"), []byte("{}"), lease)
	if err != nil || rev <= rev0 {
		t.Fatalf("put with lease: rev %d (before %d), %v", rev, rev0, err)
	}
	if err := c.KeepAliveOnce(ctx, lease); err != nil {
		t.Fatal(err)
	}
	kv, found, _, _ := c.Get(ctx, c.Capture("bare"))
	if !found || kv.Lease != lease {
		t.Fatalf("key %+v found=%v, want lease %x", kv, found, lease)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, found, _, _ := c.Get(ctx, c.Capture("bare")); !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("key of an unrenewed 1s lease still there after 5s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.KeepAliveOnce(ctx, lease); err == nil {
		t.Fatal("keep-alive of an expired lease succeeded")
	}
	lease2, _ := c.Grant(ctx, time.Second)
	c.PutWithLease(ctx, c.Capture("bare2"), []byte("{}"), lease2)
	if err := c.Revoke(ctx, lease2); err != nil {
		t.Fatal(err)
	}
	if _, found, _, _ := c.Get(ctx, c.Capture("bare2")); found {
		t.Fatal("revoked lease's key still there")
	}
}

func TestExternalEndpointAndBadEndpoint(t *testing.T) {
	// An external etcd is given as host:port, without a scheme.
	hostPort := strings.TrimPrefix(shared.Endpoints()[0], "http://")
	c, err := Dial(context.Background(), ClientConfig{Endpoints: []string{hostPort}})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	start := time.Now()
	_, err = Dial(context.Background(), ClientConfig{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("dial to a dead endpoint: %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("dial to a dead endpoint took %v", time.Since(start))
	}
	if _, err := Dial(context.Background(), ClientConfig{}); err == nil {
		t.Fatal("dial without endpoints succeeded")
	}
}

func TestEmbeddedCloseRemovesTempDir(t *testing.T) {
	e, err := StartEmbedded(EmbedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	dir := e.Dir()
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dir %s still there: %v", dir, err)
	}
	if _, err := StartEmbedded(EmbedConfig{ClientAddr: "nonsense"}); err == nil {
		t.Fatal("bad client address accepted")
	}
}
