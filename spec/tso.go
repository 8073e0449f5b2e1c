package spec

// TSOLogicalBits is the width of a TiDB TSO's logical part: a TSO is
// (physical Unix ms << 18) | logical, as PD hands it out and as TiCDC
// shows every ts (checkpoint, start ts, commit ts, resolved ts).
const TSOLogicalBits = 18

// TSO is the TiDB TSO of a ts in milliseconds (impl's unit: a TSO
// without the logical part). Every ts a user sees (the admin API, cdcspec
// cli, the runtime's logs and reports, the Kafka messages) is a TSO; impl
// and the model count in milliseconds inside.
func TSO(ms uint64) uint64 { return ms << TSOLogicalBits }

// PhysicalMs is a TSO's physical part, Unix milliseconds (the logical
// part is dropped).
func PhysicalMs(tso uint64) uint64 { return tso >> TSOLogicalBits }
