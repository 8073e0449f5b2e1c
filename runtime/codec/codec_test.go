package codec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"cdcspec/impl/core"
)

// all lists one value per concrete message type. Adding a message type to
// impl/core without listing it here (and in factories) fails
// TestEveryMessageTypeCovered.
var all = []core.Message{
	&core.CoordinatorBootstrapRequest{},
	&core.CoordinatorBootstrapResponse{},
	&core.MaintainerHeartbeat{},
	&core.AddMaintainerRequest{},
	&core.RemoveMaintainerRequest{},
	&core.MaintainerBootstrapRequest{},
	&core.MaintainerBootstrapResponse{},
	&core.MaintainerCloseRequest{},
	&core.MaintainerCloseResponse{},
	&core.ScheduleDispatcherRequest{},
	&core.HeartBeatRequest{},
	&core.BlockStatusRequest{},
	&core.HeartBeatResponse{},
	&core.MergeDispatcherRequest{},
}

// messageTypesInSource parses impl/core/messages.go and returns every type
// with a TypeName method.
func messageTypesInSource(t *testing.T) map[string]bool {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, "../../impl/core/messages.go", nil, 0)
	if err != nil {
		t.Fatalf("parsing impl/core/messages.go: %v", err)
	}
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
	if len(out) == 0 {
		t.Fatal("no message types found in impl/core/messages.go")
	}
	return out
}

func TestEveryMessageTypeCovered(t *testing.T) {
	src := messageTypesInSource(t)
	listed := map[string]bool{}
	for _, m := range all {
		listed[reflect.TypeOf(m).Elem().Name()] = true
		if m.TypeName() != reflect.TypeOf(m).Elem().Name() {
			t.Errorf("%T.TypeName() = %q, want the type's name", m, m.TypeName())
		}
	}
	for name := range src {
		if !listed[name] {
			t.Errorf("message type %s is missing from the test list", name)
		}
		if _, ok := factories[name]; !ok {
			t.Errorf("message type %s is missing from codec factories", name)
		}
	}
	for name := range factories {
		if !src[name] {
			t.Errorf("codec knows %s, which impl/core does not define", name)
		}
	}
}

// fill sets every field of v to a non-zero value derived from seed.
func fill(v reflect.Value, seed int) {
	switch v.Kind() {
	case reflect.Ptr:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), seed+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fill(v.Field(i), seed*7+i+1)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			fill(s.Index(i), seed+i+3)
		}
		v.Set(s)
	case reflect.String:
		v.SetString("s" + string(rune('a'+seed%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(seed%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(seed%3 + 1))
	}
}

func TestRoundTripEveryType(t *testing.T) {
	for i, m := range all {
		for _, zero := range []bool{true, false} {
			msg := reflect.New(reflect.TypeOf(m).Elem())
			if !zero {
				fill(msg, i+1)
			}
			env := core.Envelope{From: "n1", To: "n2", Msg: msg.Interface().(core.Message)}
			b, err := Encode(env)
			if err != nil {
				t.Fatalf("%T: encode: %v", m, err)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("%T: decode: %v", m, err)
			}
			if !reflect.DeepEqual(got, env) {
				t.Errorf("%T (zero=%v): round trip\n got %#v\nwant %#v", m, zero, got.Msg, env.Msg)
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"type":"Nope","msg":{}}`, `{"type":"HeartBeatRequest"}`, `{"type":"HeartBeatRequest","msg":[1]}`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) succeeded, want an error", in)
		}
	}
	if _, err := Encode(core.Envelope{From: "a", To: "b"}); err == nil {
		t.Error("Encode without message succeeded")
	}
}
