package codec

import (
	"reflect"
	"testing"

	"cdcspec/impl/core"
)

// FuzzDecode: any inbound frame either decodes or is an error, never a
// panic; what decodes has a sender, a receiver and a known message, and
// survives an Encode/Decode round trip unchanged (so nothing a peer can
// send is half-understood).
func FuzzDecode(f *testing.F) {
	for i, m := range all {
		for _, zero := range []bool{true, false} {
			msg := reflect.New(reflect.TypeOf(m).Elem())
			if !zero {
				fill(msg, i+1)
			}
			b, err := Encode(core.Envelope{From: "n1", To: "n2", Msg: msg.Interface().(core.Message)})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, s := range []string{``, `{`, `null`, `{"type":"HeartBeatRequest","msg":null,"from":"a","to":"b"}`,
		`{"type":"MaintainerHeartbeat","msg":{"Statuses":[null]},"from":"a","to":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := Decode(b)
		if err != nil {
			return
		}
		if env.From == "" || env.To == "" || env.Msg == nil {
			t.Fatalf("decoded an envelope without sender, receiver or message: %#v", env)
		}
		again, err := Encode(env)
		if err != nil {
			t.Fatalf("a decoded frame does not encode: %v", err)
		}
		env2, err := Decode(again)
		if err != nil {
			t.Fatalf("a re-encoded frame does not decode: %v", err)
		}
		if !reflect.DeepEqual(env, env2) {
			t.Fatalf("round trip changed the message:\n%#v\n%#v", env.Msg, env2.Msg)
		}
	})
}
