package datacheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config names the topic to check.
type Config struct {
	Brokers []string // host:port, required
	Topic   string   // required
	// Timeout bounds reading the topic; default 60s.
	Timeout time.Duration
	// DDLs is the upstream's blocking DDL history and Partitions the
	// topic's partition count, for the DDL ordering check (BlockDDL).
	DDLs       []BlockDDL
	Partitions int32
}

// Check reads cfg.Topic and analyzes it against src and the final
// checkpoint. Errors are about reading (or bad input), never about findings:
// findings are in the Report.
// The topic is streamed through an Analyzer; message values are not kept.
func Check(ctx context.Context, cfg Config, src Source, finalCheckpoint uint64) (Report, error) {
	a, err := NewAnalyzer(src, finalCheckpoint)
	if err != nil {
		return Report{}, err
	}
	a.SetDDLs(cfg.DDLs, cfg.Partitions)
	if err := ReadTopicFunc(ctx, cfg, a.Add); err != nil {
		return Report{}, err
	}
	rep := a.Finish()
	rep.Topic = cfg.Topic
	return rep, nil
}

// ReadTopic returns every record of cfg.Topic from the log start up to the
// end offsets (high watermarks) observed when it starts.
func ReadTopic(ctx context.Context, cfg Config) ([]Record, error) {
	var recs []Record
	err := ReadTopicFunc(ctx, cfg, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

// ReadTopicFunc calls fn for every record of cfg.Topic from the log start
// up to the end offsets observed when it starts, in offset order within
// each partition. An error from fn stops the read and is returned.
func ReadTopicFunc(ctx context.Context, cfg Config, fn func(Record) error) error {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return errors.New("datacheck: Config needs Brokers and Topic")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	if err != nil {
		return fmt.Errorf("datacheck: connect to %v: %w", cfg.Brokers, err)
	}
	ends, err := endOffsets(ctx, admin, cfg.Topic)
	admin.Close()
	if err != nil {
		return err
	}
	remaining := 0
	offsets := map[int32]kgo.Offset{}
	for p, end := range ends {
		if end > 0 {
			remaining++
			offsets[p] = kgo.NewOffset().AtStart()
		}
	}
	if remaining == 0 {
		return nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: offsets}),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return fmt.Errorf("datacheck: consumer for %v: %w", cfg.Brokers, err)
	}
	defer cl.Close()
	next := map[int32]int64{}
	for remaining > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("datacheck: read topic %q: %d of %d partitions not read to their end: %w", cfg.Topic, remaining, len(offsets), err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil {
				ferr = fmt.Errorf("datacheck: fetch %s partition %d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var cbErr error
		fs.EachRecord(func(r *kgo.Record) {
			end := ends[r.Partition]
			if cbErr != nil || r.Offset >= end || r.Offset < next[r.Partition] {
				return // after an error, written after the check started, or seen
			}
			cbErr = fn(Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value})
			before := next[r.Partition]
			next[r.Partition] = r.Offset + 1
			if before < end && r.Offset+1 >= end {
				remaining--
			}
		})
		if cbErr != nil {
			return cbErr
		}
	}
	return nil
}

// endOffsets returns each partition's high watermark.
func endOffsets(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int64, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	mreq.Topics = append(mreq.Topics, mt)
	mresp, err := mreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("datacheck: metadata of topic %q: %w", topic, err)
	}
	if len(mresp.Topics) != 1 {
		return nil, fmt.Errorf("datacheck: metadata of topic %q: %d topics in the answer", topic, len(mresp.Topics))
	}
	if err := kerr.ErrorForCode(mresp.Topics[0].ErrorCode); err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return map[int32]int64{}, nil // never written: an empty topic, so everything is lost
		}
		return nil, fmt.Errorf("datacheck: metadata of topic %q: %w", topic, err)
	}
	lreq := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	for _, p := range mresp.Topics[0].Partitions {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition = p.Partition
		lp.Timestamp = -1 // latest
		lt.Partitions = append(lt.Partitions, lp)
	}
	lreq.Topics = append(lreq.Topics, lt)
	lresp, err := lreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("datacheck: end offsets of topic %q: %w", topic, err)
	}
	ends := map[int32]int64{}
	for _, t := range lresp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("datacheck: end offset of %s partition %d: %w", topic, p.Partition, err)
			}
			ends[p.Partition] = p.Offset
		}
	}
	if len(ends) != len(mresp.Topics[0].Partitions) {
		return nil, fmt.Errorf("datacheck: end offsets of topic %q: got %d partitions, metadata has %d", topic, len(ends), len(mresp.Topics[0].Partitions))
	}
	return ends, nil
}
