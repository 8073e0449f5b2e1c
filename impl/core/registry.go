package core

import (
	"fmt"
	"reflect"

	"cdcspec/spec"
)

// MessageKind is everything about one control-plane message type except
// its handlers: the one place a message type is declared. The codec, the
// simulation's routes, the chaos and proptest draw lists, the component
// topic and the model <-> implementation name maps all read it.
//
// Only New, ModelKinds and Periodic are written per entry; the rest is
// derived: the name from the type's TypeName, the route and where it may
// wait from its spec.MessageWaits row (SPEC.md 8.6), the topic from the
// receiving queue.
type MessageKind struct {
	// Name is the TypeName (heartbeatpb's name).
	Name string
	// New returns an empty *T for the message type T (the codec decodes
	// into it).
	New func() Message
	// Topic routes the message inside its receiving node (pkg/messaging
	// topics), derived from Wait.RecvQueue.
	Topic Topic
	// Wait is the type's row of spec.MessageWaits: its sending queue, its
	// receiving queue, where it may be delayed.
	Wait spec.MessageWait
	// ModelKinds are the model's message kinds (model/net.go msgNames) this
	// type carries; a HeartBeatRequest carries three. The model stays pure
	// and cannot import this table: TestRegistryMatchesModelKinds ties the
	// two in both directions.
	ModelKinds []string
	// Periodic: a periodic report, sent on a timer whether or not anything
	// changed, so that a lost or overtaken one is superseded by the next
	// (HEAD: maintainer/maintainer_manager.go:136-149 sends
	// MaintainerHeartbeat every tick; downstreamadapter/dispatchermanager/
	// task.go:55-66 the HeartBeatRequest every 200 ms).
	Periodic bool

	feed int // index of the struct's Changefeed field; -1: node-wide
}

// Delayable reports whether the message may wait somewhere on its way
// (spec.MessageWaits WaitAt: its stream or its receiving queue).
func (k MessageKind) Delayable() bool { return len(k.Wait.WaitAt) > 0 }

// Lossy reports whether the message may be lost (SPEC.md 8.1, Loss).
func (k MessageKind) Lossy() bool { return k.Wait.MayBeLost() }

// Changefeed returns the changefeed m (of this kind) belongs to; "" for a
// type without one (the coordinator's bootstrap and the maintainer manager's
// heartbeat are node-wide).
func (k MessageKind) Changefeed(m Message) ChangefeedID {
	if k.feed < 0 {
		return ""
	}
	return ChangefeedID(reflect.ValueOf(m).Elem().Field(k.feed).String())
}

// entry declares one message type: the written part of its MessageKind.
type entry struct {
	new        func() Message
	modelKinds []string
	periodic   bool
}

// entries is the registry, in spec.MessageWaits' order. Adding a message
// type: its struct and TypeName in messages.go, a row in spec.MessageWaits,
// an entry here, its handlers, its model rule.
var entries = []entry{
	{func() Message { return &CoordinatorBootstrapRequest{} }, []string{"CoordinatorBootstrapRequest"}, false},
	{func() Message { return &AddMaintainerRequest{} }, []string{"AddMaintainerRequest"}, false},
	{func() Message { return &RemoveMaintainerRequest{} }, []string{"RemoveMaintainerRequest"}, false},
	{func() Message { return &CoordinatorBootstrapResponse{} }, []string{"CoordinatorBootstrapResponse"}, false},
	{func() Message { return &MaintainerHeartbeat{} }, []string{"MaintainerStatus"}, true},
	{func() Message { return &MaintainerBootstrapRequest{} }, []string{"MaintainerBootstrapRequest"}, false},
	{func() Message { return &MaintainerCloseRequest{} }, []string{"MaintainerCloseRequest"}, false},
	{func() Message { return &MaintainerBootstrapResponse{} }, []string{"MaintainerBootstrapResponse"}, false},
	{func() Message { return &MaintainerCloseResponse{} }, []string{"MaintainerCloseResponse"}, false},
	{func() Message { return &HeartBeatRequest{} }, []string{"HeartBeatRequest(watermark)", "HeartBeatRequest(status)", "HeartBeatRequest(err)"}, true},
	{func() Message { return &BlockStatusRequest{} }, []string{"BlockStatusRequest(NONE)", "BlockStatusRequest"}, false},
	{func() Message { return &ScheduleDispatcherRequest{} }, []string{"ScheduleDispatcherRequest"}, false},
	{func() Message { return &HeartBeatResponse{} }, []string{"HeartBeatResponse(ACK)", "HeartBeatResponse(action)"}, false},
	{func() Message { return &MergeDispatcherRequest{} }, []string{"MergeDispatcherRequest"}, false},
}

// topicOf is the pkg/messaging topic whose handler feeds each receiving
// queue (SPEC.md 8.1, the receiving-queue table).
var topicOf = map[string]Topic{
	spec.RecvCoordinator:     TopicCoordinator,
	spec.RecvManager:         TopicMaintainerManager,
	spec.RecvMaintainer:      TopicMaintainerManager,
	spec.RecvOrchestrator:    TopicDispatcherManagers,
	spec.RecvSchedule:        TopicHeartbeatCollector,
	spec.RecvHeartbeatResp:   TopicHeartbeatCollector,
	spec.RecvMergeDispatcher: TopicHeartbeatCollector,
}

var (
	messageKinds = mustBuildKinds()
	kindByName   = map[string]int{}
	kindByModel  = map[string]int{}
)

func init() {
	for i, k := range messageKinds {
		kindByName[k.Name] = i
		for _, mk := range k.ModelKinds {
			kindByModel[mk] = i
		}
	}
}

// mustBuildKinds derives the registry from entries. A declaration out of
// step (no spec.MessageWaits row, a queue without topic, a name twice) is a
// programming error that fails every test of every package importing core.
func mustBuildKinds() []MessageKind {
	out, err := buildKinds(entries)
	if err != nil {
		panic(err)
	}
	return out
}

func buildKinds(es []entry) ([]MessageKind, error) {
	seen := map[string]bool{}
	var out []MessageKind
	for _, e := range es {
		m := e.new()
		name := m.TypeName()
		if seen[name] {
			return nil, fmt.Errorf("core: message type %s is in the registry twice", name)
		}
		seen[name] = true
		w, ok := spec.MessageWaitOf(name)
		if !ok {
			return nil, fmt.Errorf("core: message type %s has no row in spec.MessageWaits (SPEC.md 8.6)", name)
		}
		topic, ok := topicOf[w.RecvQueue]
		if !ok {
			return nil, fmt.Errorf("core: message type %s: receiving queue %q has no topic", name, w.RecvQueue)
		}
		k := MessageKind{Name: name, New: e.new, Topic: topic, Wait: w, ModelKinds: e.modelKinds, Periodic: e.periodic, feed: -1}
		if f, ok := reflect.TypeOf(m).Elem().FieldByName("Changefeed"); ok && f.Type == reflect.TypeFor[ChangefeedID]() && len(f.Index) == 1 {
			k.feed = f.Index[0]
		}
		out = append(out, k)
	}
	return out, nil
}

// MessageKinds returns the registry, one row per message type, in
// spec.MessageWaits' order. The slice is a copy.
func MessageKinds() []MessageKind { return append([]MessageKind(nil), messageKinds...) }

// KindOf returns the registry row of m's type.
func KindOf(m Message) (MessageKind, bool) { return KindNamed(m.TypeName()) }

// KindNamed returns the registry row of a TypeName.
func KindNamed(name string) (MessageKind, bool) {
	i, ok := kindByName[name]
	if !ok {
		return MessageKind{}, false
	}
	return messageKinds[i], true
}

// KindOfModel returns the registry row of the type that carries the model's
// message kind modelKind (model/net.go msgNames).
func KindOfModel(modelKind string) (MessageKind, bool) {
	i, ok := kindByModel[modelKind]
	if !ok {
		return MessageKind{}, false
	}
	return messageKinds[i], true
}

// TopicOf routes m inside its receiving node; 0 for a type not in the
// registry.
func TopicOf(m Message) Topic {
	k, _ := KindOf(m)
	return k.Topic
}

// DrawOrder lists the names of the registry's types that keep accepts, for
// a consumer that draws one at random: first those named in order (the
// consumer's recorded draw order, kept so that recorded seeds replay the
// same draws), then every other accepted type in registry order, so that a
// new message type is drawn without touching the consumer. It fails when
// order names a type the registry does not have or keep refuses.
func DrawOrder(order []string, keep func(MessageKind) bool) ([]string, error) {
	in := map[string]bool{}
	out := make([]string, 0, len(messageKinds))
	for _, n := range order {
		k, ok := KindNamed(n)
		if !ok {
			return nil, fmt.Errorf("core: draw order names %q, which is not a message type of the registry", n)
		}
		if !keep(k) {
			return nil, fmt.Errorf("core: draw order names %s, which its filter excludes", n)
		}
		if in[n] {
			return nil, fmt.Errorf("core: draw order names %s twice", n)
		}
		in[n] = true
		out = append(out, n)
	}
	for _, k := range messageKinds {
		if !in[k.Name] && keep(k) {
			out = append(out, k.Name)
		}
	}
	return out, nil
}

// MustDrawOrder is DrawOrder for a package-level list: a list out of step
// with the registry panics at init, failing every test of its package.
func MustDrawOrder(order []string, keep func(MessageKind) bool) []string {
	out, err := DrawOrder(order, keep)
	if err != nil {
		panic(err)
	}
	return out
}
