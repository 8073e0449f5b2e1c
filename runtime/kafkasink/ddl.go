package kafkasink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/IBM/sarama"
)

// DDL is one blocking DDL written to the topic (a canal-json message with
// isDdl=true; FORMAT.md). As TiCDC's Kafka sink with partition rule "all"
// (the default for DDLs), it goes to every partition of the topic.
type DDL struct {
	Changefeed string // must equal the sink's changefeed when set
	Dispatcher string // the dispatcher that wrote it (the barrier's writer)
	Schema     string // DefaultSchema when empty
	Table      string // "" for a database-level DDL
	Type       string // canal-json event type: ALTER, RENAME, QUERY, ...
	Query      string // the DDL text (canal-json "sql")
	CommitTs   uint64 // TiDB commit ts (TSO), required (> 0)
}

// EncodeDDL appends the JSON value of d to dst (see FORMAT.md).
func EncodeDDL(dst []byte, d *DDL, encodeMillis int64) []byte {
	schema := d.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	typ := d.Type
	if typ == "" {
		typ = "QUERY"
	}
	dst = append(dst, `{"id":0,"database":`...)
	dst = appendJSONString(dst, schema)
	dst = append(dst, `,"table":`...)
	dst = appendJSONString(dst, d.Table)
	dst = append(dst, `,"pkNames":null,"isDdl":true,"type":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"es":`...)
	dst = strconv.AppendInt(dst, Physical(d.CommitTs), 10)
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, encodeMillis, 10)
	dst = append(dst, `,"sql":`...)
	dst = appendJSONString(dst, d.Query)
	dst = append(dst, `,"sqlType":null,"mysqlType":null,"data":null,"old":null,"_tidb":{"commitTs":`...)
	dst = strconv.AppendUint(dst, d.CommitTs, 10)
	if d.Changefeed != "" {
		dst = append(dst, `,"changefeed":`...)
		dst = appendJSONString(dst, d.Changefeed)
	}
	if d.Dispatcher != "" {
		dst = append(dst, `,"dispatcher":`...)
		dst = appendJSONString(dst, d.Dispatcher)
	}
	dst = append(dst, `}}`...)
	return dst
}

// DecodeAny decodes a message written by EncodeRow or EncodeDDL: exactly
// one of the results is non-nil on success.
func DecodeAny(value []byte) (*Row, *DDL, error) {
	if r, ok := decodeFast(value); ok {
		return &r, nil, nil
	}
	var probe struct {
		IsDDL bool `json:"isDdl"`
	}
	if err := json.Unmarshal(value, &probe); err != nil {
		return nil, nil, fmt.Errorf("kafkasink: message is not canal-json: %w", err)
	}
	if !probe.IsDDL {
		r, err := decodeSlow(value)
		if err != nil {
			return nil, nil, err
		}
		return &r, nil, nil
	}
	d, err := DecodeDDL(value)
	if err != nil {
		return nil, nil, err
	}
	return nil, &d, nil
}

// DecodeDDL parses a DDL message (isDdl=true) back into a DDL.
func DecodeDDL(value []byte) (DDL, error) {
	var m struct {
		Database string         `json:"database"`
		Table    string         `json:"table"`
		IsDDL    bool           `json:"isDdl"`
		Type     string         `json:"type"`
		SQL      string         `json:"sql"`
		TiDB     *TiDBExtension `json:"_tidb"`
	}
	if err := json.Unmarshal(value, &m); err != nil {
		return DDL{}, fmt.Errorf("kafkasink: message is not canal-json: %w", err)
	}
	if !m.IsDDL {
		return DDL{}, errors.New("kafkasink: message is a row change (isDdl=false), not a DDL")
	}
	if m.TiDB == nil || m.TiDB.CommitTs == 0 {
		return DDL{}, errors.New("kafkasink: DDL message has no _tidb.commitTs")
	}
	return DDL{Changefeed: m.TiDB.Changefeed, Dispatcher: m.TiDB.Dispatcher, Schema: m.Database, Table: m.Table,
		Type: m.Type, Query: m.SQL, CommitTs: m.TiDB.CommitTs}, nil
}

// WriteDDL writes d to every partition of the topic and returns once Kafka
// acknowledged every copy (TiCDC's ddlProducer.SendMessages with the
// partition rule "all"): a synchronous producer of its own, separate from
// the row producer. Ordering with rows is the caller's contract, as in
// TiCDC's dispatcher: every row below d.CommitTs of the blocked tables was
// flushed (OnFlushed) before the call, and no row above it is written
// until the call returned nil. The topic's partition count is
// Config.Partitions (the sink creates the topic with it). An error leaves
// the DDL in some partitions and not others; the caller retries it
// (at least once).
func (s *Sink) WriteDDL(ctx context.Context, d DDL) error {
	if d.CommitTs == 0 {
		return fmt.Errorf("kafkasink: DDL %q has commit ts 0", d.Query)
	}
	if d.Changefeed != "" && s.cfg.Changefeed != "" && d.Changefeed != s.cfg.Changefeed {
		return fmt.Errorf("kafkasink: DDL belongs to changefeed %q, sink is for %q", d.Changefeed, s.cfg.Changefeed)
	}
	select {
	case <-s.closing:
		return ErrSinkClosed
	default:
	}
	p, err := s.ddlProducer()
	if err != nil {
		return err
	}
	value := EncodeDDL(nil, &d, s.now().UnixMilli())
	msgs := make([]*sarama.ProducerMessage, s.cfg.Partitions)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: s.topic, Partition: int32(i), Value: sarama.ByteEncoder(value)}
	}
	done := make(chan error, 1)
	go func() { done <- p.SendMessages(msgs) }()
	select {
	case err := <-done:
		if err != nil {
			return &SendError{Err: err}
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ddlProducer starts the DDL producer on first use.
func (s *Sink) ddlProducer() (sarama.SyncProducer, error) {
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	if s.ddlClosed {
		return nil, ErrSinkClosed
	}
	if s.ddlProd != nil {
		return s.ddlProd, nil
	}
	cfg := s.cfg
	cfg.ClientID += "-ddl"
	sc, err := saramaConfig(&cfg)
	if err != nil {
		return nil, err
	}
	sc.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(cfg.Brokers, sc)
	if err != nil {
		return nil, fmt.Errorf("kafkasink: start DDL producer for brokers %v: %w", cfg.Brokers, err)
	}
	s.ddlProd = p
	return p, nil
}

// closeDDLProducer closes the DDL producer, if it was started.
func (s *Sink) closeDDLProducer() {
	s.ddlMu.Lock()
	p := s.ddlProd
	s.ddlProd, s.ddlClosed = nil, true
	s.ddlMu.Unlock()
	if p != nil {
		_ = p.Close()
	}
}
