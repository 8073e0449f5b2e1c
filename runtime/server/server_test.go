package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/impl/upstream"
	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/kafkasink"
	"cdcspec/spec"
)

func collect(u *Upstream, s spec.Span, from, to uint64) []kafkasink.Row {
	var out []kafkasink.Row
	u.Rows(s, from, to, "d", func(r kafkasink.Row) { out = append(out, r) })
	return out
}

func TestRowsDeterministicAndSplittable(t *testing.T) {
	cfg := UpstreamConfig{Seed: 3, Tables: 2, RowsPerSec: 2500, Keys: 64, GenesisMs: 1000}
	a, b := NewUpstream(cfg), NewUpstream(cfg)
	ra, rb := collect(a, spec.WholeTable(1), 1000, 3000), collect(b, spec.WholeTable(1), 1000, 3000)
	if len(ra) < 4000 || len(ra) > 6000 {
		t.Fatalf("2 s at 2500 rows/s gave %d rows", len(ra))
	}
	if len(ra) != len(rb) {
		t.Fatalf("two upstreams with one config differ: %d vs %d rows", len(ra), len(rb))
	}
	seen := map[string]bool{}
	for i := range ra {
		if ra[i] != rb[i] {
			t.Fatalf("row %d differs: %+v vs %+v", i, ra[i], rb[i])
		}
		if i > 0 && ra[i].CommitTs < ra[i-1].CommitTs {
			t.Fatalf("rows not in commit-ts order at %d", i)
		}
		id := fmt.Sprintf("%s@%d", ra[i].Key, ra[i].CommitTs)
		if seen[id] {
			t.Fatalf("two changes of key %s at one commit ts", ra[i].Key)
		}
		seen[id] = true
	}
	// Two consecutive ranges are the whole range; a split span's halves
	// partition the table's rows.
	if n := len(collect(a, spec.WholeTable(1), 1000, 2000)) + len(collect(a, spec.WholeTable(1), 2000, 3000)); n != len(ra) {
		t.Fatalf("ranges do not add up: %d vs %d", n, len(ra))
	}
	lo := collect(a, spec.Span{Table: 1, End: "n"}, 1000, 3000)
	hi := collect(a, spec.Span{Table: 1, Start: "n"}, 1000, 3000)
	if len(lo) == 0 || len(hi) == 0 || len(lo)+len(hi) != len(ra) {
		t.Fatalf("split halves %d + %d != %d", len(lo), len(hi), len(ra))
	}
	if r := collect(a, spec.WholeTable(9), 1000, 3000); len(r) != 0 {
		t.Fatalf("rows of a missing table: %d", len(r))
	}
	if r := collect(a, spec.WholeTable(1), 0, 1000); len(r) != 0 {
		t.Fatalf("rows before genesis: %d", len(r))
	}
	var n int
	_ = a.Source(1000, 3000).ForEach(func(kafkasink.Row) error { n++; return nil })
	if want := len(ra) + len(collect(a, spec.WholeTable(2), 1000, 3000)); n != want {
		t.Fatalf("source has %d rows, want %d", n, want)
	}
}

func TestSharedUpstreamAndMetaStore(t *testing.T) {
	emb, err := etcdmeta.StartEmbedded(etcdmeta.EmbedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := etcdmeta.Dial(ctx, etcdmeta.ClientConfig{Endpoints: emb.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := LoadUpstream(ctx, c); err == nil {
		t.Fatal("loading an unpublished upstream succeeded")
	}
	if _, err := PublishUpstream(ctx, c, UpstreamConfig{Seed: 1, Tables: 2, RowsPerSec: 10}); err != nil {
		t.Fatal(err)
	}
	u, rev, err := LoadUpstream(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	go u.Follow(fctx, c, rev+1)
	id, ts, err := CreateTable(ctx, c)
	if err != nil || id != 3 {
		t.Fatalf("create table: %d %v", id, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(u.DDLsBetween(0, ts)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := u.DDLsBetween(0, ts); len(d) != 1 || d[0].Table != 3 || d[0].CommitTs != ts {
		t.Fatalf("follower did not see the DDL: %v", d)
	}
	if got := u.TablesAt(ts - 1); len(got) != 2 {
		t.Fatalf("tables before the DDL: %v", got)
	}
	// Blocking DDLs: committed above every DDL so far, seen by followers
	// with impl/upstream's event shape; a kind the runtime cannot commit
	// is refused.
	rnd := rand.New(rand.NewPCG(1, 2))
	ev, err := CommitBlockDDL(ctx, c, upstream.DDLNormal, rnd)
	require.NoError(t, err)
	require.Greater(t, ev.CommitTs, ts)
	require.Len(t, ev.BlockTables, 2)
	db, err := CommitBlockDDL(ctx, c, upstream.DDLDB, rnd)
	require.NoError(t, err)
	require.Greater(t, db.CommitTs, ev.CommitTs)
	_, err = CommitBlockDDL(ctx, c, upstream.DDLDrop, rnd)
	require.ErrorContains(t, err, `blocking DDL kind "drop" is not one the runtime commits`)
	require.Eventually(t, func() bool { return len(u.BlockEvents()) == 2 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []core.BlockEvent{ev}, u.BlockEventsBetween(ev.CommitTs-1, ev.CommitTs))
	hist := BlockDDLs(u)
	require.Len(t, hist, 2)
	require.Equal(t, spec.TSO(ev.CommitTs), hist[0].CommitTs)
	require.ElementsMatch(t, []string{TableName(ev.BlockTables[0]), TableName(ev.BlockTables[1])}, hist[0].Tables)
	require.Nil(t, hist[1].Tables, "a DB-level DDL blocks every table")
	if err := SetStall(ctx, c, true, u.Config().LagMs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	r1 := u.GlobalResolvedTs()
	time.Sleep(300 * time.Millisecond)
	if r2 := u.GlobalResolvedTs(); r2 != r1 {
		t.Fatalf("resolved ts moved while stalled: %d -> %d", r1, r2)
	}
	_ = SetStall(ctx, c, false, 0)
	time.Sleep(300 * time.Millisecond)
	if r3 := u.GlobalResolvedTs(); r3 <= r1 {
		t.Fatalf("resolved ts did not resume: %d", r3)
	}

	m := &MetaStore{C: c}
	res := m.Txn(core.MetaTxn{Token: 1, Ops: []core.MetaOp{{Kind: core.MetaPut, Key: "/k", Value: []byte("a"), ExpectModRev: 0}}})
	if !res.OK || res.Revs[0] == 0 {
		t.Fatalf("create-if-absent: %+v", res)
	}
	if r := m.Txn(core.MetaTxn{Token: 2, Ops: []core.MetaOp{{Kind: core.MetaPut, Key: "/k", Value: []byte("b"), ExpectModRev: 0}}}); r.OK {
		t.Fatal("create-if-absent on an existing key succeeded")
	}
	r := m.Txn(core.MetaTxn{Token: 3, Ops: []core.MetaOp{{Kind: core.MetaPut, Key: "/k", Value: []byte("c"), ExpectModRev: res.Revs[0]},
		{Kind: core.MetaDelete, Key: "/other", ExpectModRev: -1}}})
	if !r.OK || r.Token != 3 || r.Revs[1] != 0 {
		t.Fatalf("CAS on the right revision: %+v", r)
	}
	if kv, ok := m.Get("/k"); !ok || string(kv.Value) != "c" {
		t.Fatalf("get: %+v %v", kv, ok)
	}
}
