// Package codec turns control-plane messages (core.Envelope with any
// concrete message of impl/core/messages.go) into bytes for the TCP
// transport and back.
//
// The wire form is JSON with a type tag:
//
//	{"from":"<node>","to":"<node>","type":"<TypeName>","msg":{...}}
//
// where "type" is the message's TypeName (heartbeatpb's names) and "msg" the
// message struct encoded by encoding/json. Decode returns a pointer to the
// concrete type (components switch on *core.X). JSON keeps the frames
// readable in a packet capture and needs no registration beyond the message
// registry (core.MessageKinds); an unknown type name is an error naming it.
package codec

import (
	"encoding/json"
	"fmt"

	"cdcspec/impl/core"
)

// TypeNames lists every message type the codec knows: the registry's
// (core.MessageKinds), in its order.
func TypeNames() []string {
	kinds := core.MessageKinds()
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Name
	}
	return out
}

// New returns an empty message of the given TypeName (its registry
// factory, core.MessageKind.New).
func New(typeName string) (core.Message, bool) {
	k, ok := core.KindNamed(typeName)
	if !ok {
		return nil, false
	}
	return k.New(), true
}

type wire struct {
	From string          `json:"from"`
	To   string          `json:"to"`
	Type string          `json:"type"`
	Msg  json.RawMessage `json:"msg"`
}

// Encode returns the bytes of env.
func Encode(env core.Envelope) ([]byte, error) {
	if env.Msg == nil {
		return nil, fmt.Errorf("codec: envelope %s->%s has no message", env.From, env.To)
	}
	name := env.Msg.TypeName()
	if _, ok := core.KindNamed(name); !ok {
		return nil, fmt.Errorf("codec: unknown message type %q", name)
	}
	body, err := json.Marshal(env.Msg)
	if err != nil {
		return nil, fmt.Errorf("codec: encoding %s: %w", name, err)
	}
	return json.Marshal(wire{From: string(env.From), To: string(env.To), Type: name, Msg: body})
}

// Decode parses bytes written by Encode. Any other input (truncated,
// garbage, an unknown type, a frame without sender, receiver or message
// object) is an error, never a panic; FuzzDecode checks it.
func Decode(b []byte) (core.Envelope, error) {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return core.Envelope{}, fmt.Errorf("codec: bad frame (%d bytes): %w", len(b), err)
	}
	m, ok := New(w.Type)
	if !ok {
		return core.Envelope{}, fmt.Errorf("codec: unknown message type %q from %s", w.Type, w.From)
	}
	if len(w.Msg) == 0 || w.Msg[0] != '{' {
		return core.Envelope{}, fmt.Errorf("codec: %s from %s has no message object", w.Type, w.From)
	}
	if w.From == "" || w.To == "" {
		return core.Envelope{}, fmt.Errorf("codec: %s frame without sender or receiver (from %q, to %q)", w.Type, w.From, w.To)
	}
	if err := json.Unmarshal(w.Msg, m); err != nil {
		return core.Envelope{}, fmt.Errorf("codec: decoding %s from %s: %w", w.Type, w.From, err)
	}
	return core.Envelope{From: core.NodeID(w.From), To: core.NodeID(w.To), Msg: m}, nil
}
