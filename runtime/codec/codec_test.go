package codec

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
)

// all is one value per message type of the registry (core.MessageKinds);
// impl/core's TestRegistryCoversEveryMessageType ties the registry to the
// types messages.go defines.
var all = func() []core.Message {
	var out []core.Message
	for _, n := range TypeNames() {
		m, _ := New(n)
		out = append(out, m)
	}
	return out
}()

// TestCodecKnowsEveryRegisteredType: every registry type is encoded and
// decoded as itself (its TypeName is its Go type's name), and an unknown
// name has no factory.
func TestCodecKnowsEveryRegisteredType(t *testing.T) {
	require.Len(t, all, len(core.MessageKinds()))
	for _, m := range all {
		require.NotNil(t, m)
		assert.Equal(t, reflect.TypeOf(m).Elem().Name(), m.TypeName(), "%T.TypeName()", m)
	}
	_, ok := New("Nope")
	assert.False(t, ok, "a factory for an unknown type")
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
