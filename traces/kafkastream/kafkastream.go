// Package kafkastream runs the streaming trace checker (traces.LineParser,
// traces.StreamChecker) on Kafka with sarama consumer groups (issue 30):
//
//   - stage one (ParseStage) consumes the raw topic: one message per log
//     line, keyed by the capture that wrote it, as log shippers write it.
//     It parses each capture's lines in order and publishes the items to
//     the events topic, keyed by changefeed so that every event of one
//     changefeed is in one partition. An item of no changefeed (a node
//     joined or left, a capture exited) goes to every partition: every
//     changefeed's checker sees the cluster.
//   - stage two (CheckStage) consumes the events topic, one
//     traces.StreamChecker per partition. When a partition has been idle
//     for Config.Idle it finishes the checker, publishes the findings to
//     the findings topic keyed by traces.Finding.ID (the cluster's findings
//     from partition 0 only), and only then commits the partition's
//     offsets. An instance that dies before that commit loses nothing: the
//     partition's next owner re-reads it from the last commit and rebuilds
//     the same checker. A finding whose ID the findings topic already holds
//     is not published again.
//
// What this does not do yet: a partition's checker starts afresh after each
// idle commit (no monitor state crosses it), and a rebalance re-reads from
// the committed offset, not a bounded window before it.
package kafkastream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"cdcspec/traces"
)

// Config configures both stages.
type Config struct {
	Brokers []string
	// Raw, Events and Findings are the topics: raw log lines, the items
	// stage one publishes, the findings stage two publishes.
	Raw, Events, Findings string
	// Group names the consumer groups: Group+"-parse" and Group+"-check".
	Group string
	// Idle is how long a partition of the events topic stays quiet before
	// stage two finishes its checker and publishes; default 2s.
	Idle time.Duration
	// Options are the checker's (as the file mode's).
	Options traces.Options
	// Sources, if set, orders the captures whose records have equal times
	// (the file mode orders them by its arguments); others come after, in
	// arrival order.
	Sources []string
	// OnFinding, if set, gets every finding stage two publishes.
	OnFinding func(traces.Finding)
}

func (c *Config) saramaConfig() *sarama.Config {
	sc := sarama.NewConfig()
	sc.ClientID = "cdcspec-trace"
	sc.Version = sarama.V2_8_0_0
	sc.Producer.RequiredAcks = sarama.WaitForAll
	sc.Producer.Return.Successes = true
	sc.Producer.Partitioner = sarama.NewManualPartitioner
	sc.Consumer.Offsets.Initial = sarama.OffsetOldest
	sc.Consumer.Offsets.AutoCommit.Enable = false
	sc.Consumer.MaxWaitTime = 50 * time.Millisecond
	sc.Consumer.Group.Session.Timeout = 6 * time.Second
	sc.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	sc.Consumer.Group.Rebalance.Timeout = 6 * time.Second
	sc.Metadata.Retry.Backoff = 100 * time.Millisecond
	return sc
}

func (c *Config) idle() time.Duration {
	if c.Idle <= 0 {
		return 2 * time.Second
	}
	return c.Idle
}

// wireEvent is one message of the events topic.
type wireEvent struct {
	Source string          `json:"source"`
	Item   traces.WireItem `json:"item"`
}

// partitionOf is the events partition of a changefeed ("keyspace/name" and
// the bare "name" are one changefeed: keyed by the name).
func partitionOf(cf string, n int32) int32 {
	if i := strings.LastIndexByte(cf, '/'); i >= 0 {
		cf = cf[i+1:]
	}
	h := fnv.New32a()
	h.Write([]byte(cf))
	return int32(h.Sum32() % uint32(n))
}

// RunParse runs stage one until ctx ends.
func RunParse(ctx context.Context, cfg Config) error {
	sc := cfg.saramaConfig()
	// offsets are marked only once their lines' items are published;
	// committing the marked ones every second is then safe
	sc.Consumer.Offsets.AutoCommit.Enable = true
	sc.Consumer.Offsets.AutoCommit.Interval = time.Second
	client, err := sarama.NewClient(cfg.Brokers, sc)
	if err != nil {
		return fmt.Errorf("stage one: %w", err)
	}
	defer client.Close()
	parts, err := client.Partitions(cfg.Events)
	if err != nil {
		return fmt.Errorf("stage one: topic %s: %w", cfg.Events, err)
	}
	prod, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return fmt.Errorf("stage one: %w", err)
	}
	defer prod.Close()
	group, err := sarama.NewConsumerGroupFromClient(cfg.Group+"-parse", client)
	if err != nil {
		return fmt.Errorf("stage one: %w", err)
	}
	defer group.Close()
	h := &parseHandler{cfg: &cfg, prod: prod, parts: int32(len(parts))}
	return consume(ctx, group, cfg.Raw, h)
}

func consume(ctx context.Context, g sarama.ConsumerGroup, topic string, h sarama.ConsumerGroupHandler) error {
	for ctx.Err() == nil {
		if err := g.Consume(ctx, []string{topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

type parseHandler struct {
	cfg   *Config
	prod  sarama.SyncProducer
	parts int32
}

func (h *parseHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *parseHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim parses one partition of raw lines. A capture's lines are in
// one partition (keyed by capture), so one parser per capture sees them in
// order. The items are published in batches (up to parseBatch lines, or
// what has arrived); a batch's offsets are marked once it is published, and
// sarama commits the marked offsets every second.
func (h *parseHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	parsers := map[string]*traces.LineParser{}
	nodes := map[string]*nodeFacts{}
	var items []traces.Item
	var out []*sarama.ProducerMessage
	var last *sarama.ConsumerMessage
	lines := 0
	flush := func() error {
		if last == nil {
			return nil
		}
		if len(out) > 0 {
			if err := h.prod.SendMessages(out); err != nil {
				return fmt.Errorf("stage one: publish: %w", err)
			}
		}
		sess.MarkMessage(last, "")
		out, last, lines = out[:0], nil, 0
		return nil
	}
	for {
		var msg *sarama.ConsumerMessage
		var ok bool
		select {
		case msg, ok = <-claim.Messages():
		default:
			// nothing more has arrived: publish what has
			if err := flush(); err != nil {
				return err
			}
			msg, ok = <-claim.Messages()
		}
		if !ok {
			return flush()
		}
		capture := string(msg.Key)
		p := parsers[capture]
		if p == nil {
			p = traces.NewLineParser(capture)
			parsers[capture] = p
			nodes[capture] = &nodeFacts{}
		}
		nf := nodes[capture]
		items = p.Parse(msg.Value, items[:0])
		for i := range items {
			b, err := json.Marshal(wireEvent{Source: capture, Item: items[i].Wire()})
			if err != nil {
				return err
			}
			cf := items[i].Event.Changefeed
			if cf == "" || nf.broadcast(&items[i]) {
				for k := range h.parts {
					out = append(out, &sarama.ProducerMessage{Topic: h.cfg.Events, Partition: k, Value: sarama.ByteEncoder(b)})
				}
				continue
			}
			out = append(out, &sarama.ProducerMessage{Topic: h.cfg.Events, Partition: partitionOf(cf, h.parts),
				Key: sarama.StringEncoder(cf), Value: sarama.ByteEncoder(b)})
		}
		last = msg
		if lines++; lines >= parseBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// parseBatch is the most raw lines stage one publishes at once.
const parseBatch = 1000

// nodeFacts is what stage one has sent every partition of one capture's
// node: a checker learns which nodes have logs of their own from events of
// any changefeed (a node with no log makes some findings insufficient
// evidence), so every partition gets the capture's lines that name its
// node, and its own-node events until one has followed such a line.
type nodeFacts struct{ self, marked bool }

// broadcast reports whether it goes to every partition.
func (n *nodeFacts) broadcast(it *traces.Item) bool {
	switch {
	case it.NamesSelf():
		n.self = true
		return true
	case it.OwnNode() && !n.marked:
		n.marked = n.self
		return true
	}
	return false
}

// RunCheck runs stage two until ctx ends.
func RunCheck(ctx context.Context, cfg Config) error {
	sc := cfg.saramaConfig()
	client, err := sarama.NewClient(cfg.Brokers, sc)
	if err != nil {
		return fmt.Errorf("stage two: %w", err)
	}
	defer client.Close()
	prod, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return fmt.Errorf("stage two: %w", err)
	}
	defer prod.Close()
	group, err := sarama.NewConsumerGroupFromClient(cfg.Group+"-check", client)
	if err != nil {
		return fmt.Errorf("stage two: %w", err)
	}
	defer group.Close()
	h := &checkHandler{cfg: &cfg, prod: prod, client: client}
	return consume(ctx, group, cfg.Events, h)
}

type checkHandler struct {
	cfg    *Config
	prod   sarama.SyncProducer
	client sarama.Client
	mu     sync.Mutex
}

func (h *checkHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *checkHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

// ConsumeClaim checks one partition of the events topic: its items into a
// StreamChecker until the partition is idle, then the findings out, then
// the commit.
func (h *checkHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	var sc *traces.StreamChecker
	var last *sarama.ConsumerMessage
	timer := time.NewTimer(h.cfg.idle())
	defer timer.Stop()
	for {
		select {
		case msg, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			if sc == nil {
				sc = traces.NewStreamChecker(h.cfg.Options)
				for _, s := range h.cfg.Sources {
					sc.Source(s)
				}
			}
			var ev wireEvent
			if err := json.Unmarshal(msg.Value, &ev); err != nil {
				return fmt.Errorf("stage two: %s/%d@%d: %w", msg.Topic, msg.Partition, msg.Offset, err)
			}
			sc.Add(ev.Item.Item())
			last = msg
			timer.Reset(h.cfg.idle())
		case <-timer.C:
			if sc != nil {
				if err := h.publish(sc.Finish(), claim.Partition()); err != nil {
					return err
				}
				sess.MarkMessage(last, "")
				sess.Commit()
				sc = nil
			}
			timer.Reset(h.cfg.idle())
		case <-sess.Context().Done():
			return nil
		}
	}
}

// publish sends the findings the partition owns (owns) that the findings
// topic does not hold yet.
func (h *checkHandler) publish(fs []traces.Finding, partition int32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen, err := publishedIDs(h.client, h.cfg.Findings)
	if err != nil {
		return err
	}
	evParts, err := h.client.Partitions(h.cfg.Events)
	if err != nil {
		return err
	}
	nparts := int32(len(evParts))
	var out []*sarama.ProducerMessage
	for i := range fs {
		f := &fs[i]
		if !h.owns(f, partition, nparts) || seen[f.ID()] {
			continue
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		id := f.ID()
		parts, err := h.client.Partitions(h.cfg.Findings)
		if err != nil {
			return err
		}
		p := int32(0)
		if len(parts) > 0 {
			p = partitionOf(id, int32(len(parts)))
		}
		out = append(out, &sarama.ProducerMessage{Topic: h.cfg.Findings, Partition: p, Key: sarama.StringEncoder(id), Value: sarama.ByteEncoder(b)})
	}
	if len(out) == 0 {
		return nil
	}
	if err := h.prod.SendMessages(out); err != nil {
		return fmt.Errorf("stage two: publish findings: %w", err)
	}
	if h.cfg.OnFinding != nil {
		for i := range fs {
			if h.owns(&fs[i], partition, nparts) && !seen[fs[i].ID()] {
				h.cfg.OnFinding(fs[i])
			}
		}
	}
	return nil
}

// owns reports whether a partition publishes the finding: the
// changefeed's own partition, and partition 0 for the cluster's findings
// (other partitions see some events of changefeeds they do not own: the
// node facts stage one sends everywhere).
func (h *checkHandler) owns(f *traces.Finding, partition, nparts int32) bool {
	if f.Changefeed == "" {
		return partition == 0
	}
	return partitionOf(f.Changefeed, nparts) == partition
}

// publishedIDs reads the IDs (keys) the findings topic holds.
func publishedIDs(client sarama.Client, topic string) (map[string]bool, error) {
	ids := map[string]bool{}
	err := ReadTopic(client, topic, func(m *sarama.ConsumerMessage) { ids[string(m.Key)] = true })
	return ids, err
}

// ReadTopic calls fn for every message a topic holds now.
func ReadTopic(client sarama.Client, topic string, fn func(*sarama.ConsumerMessage)) error {
	parts, err := client.Partitions(topic)
	if err != nil {
		return err
	}
	cons, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return err
	}
	defer cons.Close()
	for _, p := range parts {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return err
		}
		start, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		if err != nil {
			return err
		}
		if end <= start {
			continue
		}
		pc, err := cons.ConsumePartition(topic, p, start)
		if err != nil {
			return err
		}
		for m := range pc.Messages() {
			fn(m)
			if m.Offset >= end-1 {
				break
			}
		}
		pc.Close()
	}
	return nil
}
