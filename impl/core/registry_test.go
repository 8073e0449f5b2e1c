package core_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/model"
	"cdcspec/spec"
)

// messageTypesInSource parses messages.go and returns every type with a
// TypeName method.
func messageTypesInSource(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "messages.go", nil, 0)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name != "TypeName" {
			continue
		}
		rt := fd.Recv.List[0].Type
		if st, ok := rt.(*ast.StarExpr); ok {
			rt = st.X
		}
		if id, ok := rt.(*ast.Ident); ok {
			out[id.Name] = true
		}
	}
	require.NotEmpty(t, out, "no message types found in messages.go")
	return out
}

// TestRegistryCoversEveryMessageType: every message type messages.go
// defines has one registry row, named after its Go type, and every row is
// such a type.
func TestRegistryCoversEveryMessageType(t *testing.T) {
	src := messageTypesInSource(t)
	rows := map[string]bool{}
	for _, k := range core.MessageKinds() {
		rows[k.Name] = true
		m := k.New()
		assert.Equal(t, reflect.TypeOf(m).Elem().Name(), k.Name, "%s: TypeName is not the Go type's name", k.Name)
		assert.True(t, src[k.Name], "the registry has %s, which messages.go does not define", k.Name)
		got, ok := core.KindOf(m)
		assert.True(t, ok && got.Name == k.Name, "KindOf(%T)", m)
	}
	for name := range src {
		assert.True(t, rows[name], "message type %s has no registry entry (impl/core/registry.go entries)", name)
	}
}

// TestRegistryMatchesMessageWaits: the registry and spec.MessageWaits have
// the same message types, and each row's route is its type's row.
func TestRegistryMatchesMessageWaits(t *testing.T) {
	kinds := core.MessageKinds()
	require.Len(t, kinds, len(spec.MessageWaits), "a spec.MessageWaits row without registry entry, or the other way round")
	for i, w := range spec.MessageWaits {
		k, ok := core.KindNamed(w.Type)
		require.True(t, ok, "spec.MessageWaits row %s has no registry entry", w.Type)
		assert.Equal(t, w, k.Wait, "%s: route", w.Type)
		assert.Equal(t, w.Type, kinds[i].Name, "the registry is in spec.MessageWaits' order")
		assert.True(t, k.Delayable(), "%s: SPEC.md 8.6 lets every message wait", w.Type)
		assert.True(t, k.Lossy(), "%s: SPEC.md 8.1 lets every message be lost", w.Type)
		assert.NotZero(t, k.Topic, "%s: topic", w.Type)
	}
}

// TestRegistryMatchesModelKinds ties the registry to the model's message
// kinds in both directions: every model kind is carried by exactly one
// registry type, and every model kind a registry type names exists.
func TestRegistryMatchesModelKinds(t *testing.T) {
	kinds := map[string]bool{}
	for _, n := range model.MessageKindNames() {
		kinds[n] = true
	}
	carried := map[string]string{}
	for _, k := range core.MessageKinds() {
		require.NotEmpty(t, k.ModelKinds, "%s names no model kind: every TiCDC message the implementation sends has a model counterpart", k.Name)
		for _, mk := range k.ModelKinds {
			assert.True(t, kinds[mk], "%s names model kind %q, which model/net.go msgNames does not have", k.Name, mk)
			if prev, dup := carried[mk]; dup {
				t.Errorf("model kind %q is carried by both %s and %s", mk, prev, k.Name)
			}
			carried[mk] = k.Name
			got, ok := core.KindOfModel(mk)
			assert.True(t, ok && got.Name == k.Name, "KindOfModel(%q)", mk)
		}
	}
	for mk := range kinds {
		_, ok := carried[mk]
		assert.True(t, ok, "model kind %q is carried by no registry type: name it in its type's ModelKinds", mk)
	}
}

// TestRegistryChangefeed: a per-changefeed message reports its changefeed,
// a node-wide one none.
func TestRegistryChangefeed(t *testing.T) {
	hb := &core.HeartBeatRequest{Changefeed: "ks/cf"}
	k, ok := core.KindOf(hb)
	require.True(t, ok)
	assert.Equal(t, core.ChangefeedID("ks/cf"), k.Changefeed(hb))
	mh := &core.MaintainerHeartbeat{}
	k, ok = core.KindOf(mh)
	require.True(t, ok)
	assert.Equal(t, core.ChangefeedID(""), k.Changefeed(mh))
	assert.Equal(t, core.TopicCoordinator, core.TopicOf(mh))
	assert.Equal(t, core.TopicMaintainerManager, core.TopicOf(hb))
}

// TestDrawOrder: a recorded draw order comes first, the other accepted
// types follow in registry order, and an order naming an unknown or
// excluded type is an error naming it.
func TestDrawOrder(t *testing.T) {
	all := func(core.MessageKind) bool { return true }
	got, err := core.DrawOrder([]string{"HeartBeatResponse", "AddMaintainerRequest"}, all)
	require.NoError(t, err)
	require.Len(t, got, len(core.MessageKinds()))
	assert.Equal(t, []string{"HeartBeatResponse", "AddMaintainerRequest", "CoordinatorBootstrapRequest"}, got[:3])
	_, err = core.DrawOrder([]string{"Nope"}, all)
	assert.ErrorContains(t, err, `"Nope"`)
	_, err = core.DrawOrder([]string{"HeartBeatResponse"}, func(k core.MessageKind) bool { return k.Name != "HeartBeatResponse" })
	assert.ErrorContains(t, err, "HeartBeatResponse")
	_, err = core.DrawOrder([]string{"HeartBeatResponse", "HeartBeatResponse"}, all)
	assert.ErrorContains(t, err, "twice")
}
