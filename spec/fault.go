package spec

import (
	"fmt"
	"strings"
)

// Fault names one fault a driver can inject into a TiCDC cluster. It is the
// one fault vocabulary of cdcspec: proptest's steps, the simulation's
// random faults (impl/sim RunChaos) and scenario files, `cdcspec run
// --faults` and `cdcspec sim -faults`, and the model's fault actions use
// these names and no others. Names are stable interface (CLI flags,
// scenario files, recorded stories and counterexamples).
//
// A driver that cannot inject a fault says why in its own table
// (UnsupportedFaults in impl/sim, proptest, runtime/cluster and model), and
// a test in each keeps that table complete, so a fault cannot be added to
// one place only. `cdcspec faults` prints the whole matrix.
type Fault string

// The faults, grouped as in Faults; FaultDoc says what each does in TiCDC
// terms.
const (
	// a capture's process and its etcd session
	FaultKillCapture               Fault = "kill-capture"
	FaultKillMaintainerCapture     Fault = "kill-maintainer-capture"
	FaultKillOwnerCapture          Fault = "kill-owner-capture"
	FaultKillMoveDestination       Fault = "kill-move-destination"
	FaultKillMaintainerInflight    Fault = "kill-maintainer-inflight"
	FaultKillMaintainerStaleCreate Fault = "kill-maintainer-stale-create"
	FaultKillCaptureDuringDDL      Fault = "kill-capture-during-ddl"
	FaultExpireSession             Fault = "expire-session"
	FaultFreezeCapture             Fault = "freeze-capture"
	FaultExpireFrozenSession       Fault = "expire-frozen-session"
	FaultRestartCapture            Fault = "restart-capture"
	FaultAddCapture                Fault = "add-capture"
	// control messages between captures
	FaultMoveWriterDuringDDL Fault = "move-writer-during-ddl"
	FaultDropAddTableStatus  Fault = "drop-add-table-status"
	FaultDropMessages        Fault = "drop-messages"
	FaultDuplicateMessages   Fault = "duplicate-messages"
	FaultDelayMessages       Fault = "delay-messages"
	FaultRandomMessageFaults Fault = "random-message-faults"
	FaultPartition           Fault = "partition"
	FaultHealNetwork         Fault = "heal-network"
	// the sink and the upstream
	FaultSinkError      Fault = "sink-error"
	FaultFastFailError  Fault = "fast-fail-error"
	FaultStallUpstream  Fault = "stall-upstream"
	FaultResumeUpstream Fault = "resume-upstream"
	FaultStore          Fault = "store"
	// TiCDC's failpoints
	FaultBlockCreateDispatcher Fault = "block-create-dispatcher"
	FaultSlowCloseDispatcher   Fault = "slow-close-dispatcher"
	// the end of every fault
	FaultHeal Fault = "heal"
)

// faultDocs is the vocabulary in order, one line per fault. A compound fault
// says which faults it combines.
var faultDocs = []struct {
	f   Fault
	doc string
}{
	{FaultKillCapture, "the capture's process is killed (kill -9): it stops at once; its etcd session lives until the TTL ends, then the others see it leave"},
	{FaultKillMaintainerCapture, "kill-capture of the capture that hosts a changefeed's bootstrapped maintainer (maintainer failover)"},
	{FaultKillOwnerCapture, "kill-capture of the owner, the capture that runs the coordinator (coordinator failover)"},
	{FaultKillMoveDestination, "compound: a table move (move-table), then kill-capture of the move's destination while the move runs"},
	{FaultKillMaintainerInflight, "compound (#3411): block-create-dispatcher and slow-close-dispatcher on two other captures, every table moved to the first, then kill-maintainer-capture"},
	{FaultKillMaintainerStaleCreate, "compound (#5083): delay-messages of ScheduleDispatcherRequest on a capture, a table moved to it, then kill-maintainer-capture: the old maintainer's Create lands late"},
	{FaultKillCaptureDuringDDL, "compound: the upstream commits a blocking DDL (blocking-ddl), delay-messages of BlockStatusRequest on the maintainer's capture holds its barrier open, then kill-capture while the dispatchers wait at it"},
	{FaultExpireSession, "the capture's etcd session expires: the others see it leave at once; the capture fences itself and exits with ErrCaptureSuicide (server/server.go at b813e76f9)"},
	{FaultFreezeCapture, "the capture's process is paused (SIGSTOP, as in a long GC pause): no heartbeat, its session still alive"},
	{FaultExpireFrozenSession, "compound: expire-session of every frozen capture, then it runs again (SIGCONT), finds its session gone and commits suicide"},
	{FaultRestartCapture, "a killed or expired capture starts again, with a fresh capture ID"},
	{FaultAddCapture, "a new capture joins the cluster"},
	{FaultMoveWriterDuringDDL, "compound (#3974's window): every capture holds the maintainer's HeartBeatResponses (the barrier's Write and Pass) for a while (delay-messages, a congested stream), the upstream commits a blocking DDL of two tables that does not block the table trigger (blocking-ddl), and once the writer reported DONE its table is moved (move-table) before its checkpoint passed the DDL: the moved dispatcher waits at the DDL again while the other's Pass is still held"},
	{FaultDropAddTableStatus, "compound (#3799's window): CREATE TABLE upstream (create-table), the maintainer's capture loses its inbound BlockStatusRequests (drop-messages, a broken stream) until just after the table trigger reported the CREATE TABLE (NONE), then a DB-level DDL commits (blocking-ddl), which the trigger reaches before its block status resend period re-sends the lost NONE"},
	{FaultDropMessages, "the next control messages of a type (from and to given captures) are lost"},
	{FaultDuplicateMessages, "the next control messages of a type are handled twice, the copy late (a stale replay); TiCDC's message center never duplicates on its own"},
	{FaultDelayMessages, "the next control messages of a type are held for a while (a congested stream)"},
	{FaultRandomMessageFaults, "every remote control message may be lost, duplicated or delayed at random"},
	{FaultPartition, "the captures are split into groups; no control message crosses a group boundary"},
	{FaultHealNetwork, "partitions and random message faults end"},
	{FaultSinkError, "the changefeed's Kafka sink fails with a retryable error (ErrKafkaAsyncSendMessage, i/o timeout)"},
	{FaultFastFailError, "a dispatcher of the changefeed fails with an unretryable error (a GC error such as ErrGCTTLExceeded, or one of changefeedUnRetryableErrors): the changefeed must fail at once (#5246)"},
	{FaultStallUpstream, "every TiKV store is unavailable: the upstream resolved ts stops"},
	{FaultResumeUpstream, "TiKV recovers: the upstream resolved ts advances again"},
	{FaultStore, "a TiKV store goes down (its event feed streams break) and comes back; PD elects its regions' leaders on other stores, then moves leaders back; kv-clients get region errors and request the regions again (tiflow#9595's fault is every store at once)"},
	{FaultBlockCreateDispatcher, "failpoint BlockCreateDispatcher on a capture: its dispatcher manager stores create requests but creates no dispatcher (dispatchermanager/helper.go at b813e76f9)"},
	{FaultSlowCloseDispatcher, "failpoint NotReadyToCloseDispatcher on a capture: its dispatchers never finish closing (dispatcher/basic_dispatcher.go TryClose at b813e76f9)"},
	{FaultHeal, "every fault ends: message faults, partitions, failpoints, the upstream stall; liveness is judged from here (FaultsHealed)"},
}

// Faults lists the vocabulary in a stable order.
func Faults() []Fault {
	out := make([]Fault, len(faultDocs))
	for i, d := range faultDocs {
		out[i] = d.f
	}
	return out
}

// FaultNames lists the vocabulary's names, in Faults order.
func FaultNames() []string {
	out := make([]string, len(faultDocs))
	for i, d := range faultDocs {
		out[i] = string(d.f)
	}
	return out
}

// Doc says in one line what the fault does, in TiCDC terms; "" for a name
// outside the vocabulary.
func (f Fault) Doc() string {
	for _, d := range faultDocs {
		if d.f == f {
			return d.doc
		}
	}
	return ""
}

// Known reports whether f is in the vocabulary.
func (f Fault) Known() bool { return f.Doc() != "" }

// ParseFault returns the named fault; the error lists the known names.
func ParseFault(s string) (Fault, error) {
	if f := Fault(strings.TrimSpace(s)); f.Known() {
		return f, nil
	}
	return "", fmt.Errorf("unknown fault %q (known: %s)", s, strings.Join(FaultNames(), ", "))
}

// ParseFaults parses a list of names (empty entries are skipped); the error
// names the first unknown one and lists the known names.
func ParseFaults(names []string) ([]Fault, error) {
	var out []Fault
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			continue
		}
		f, err := ParseFault(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// CheckUnsupported checks a driver's table of faults it cannot inject: every
// key is in the vocabulary and every reason is given. Drivers' tests call it
// and then check that they handle every other fault.
func CheckUnsupported(driver string, unsupported map[Fault]string) error {
	for f, why := range unsupported {
		if !f.Known() {
			return fmt.Errorf("%s: unsupported fault %q is not in the vocabulary", driver, f)
		}
		if strings.TrimSpace(why) == "" {
			return fmt.Errorf("%s: %s is listed as not supported without a reason", driver, f)
		}
	}
	return nil
}

// Action names a domain action that drivers interleave with faults: an
// operator's API call or a DDL upstream. Same rules as Fault: one name
// everywhere (proptest's steps, the simulation's scenario files and random
// actions, `cdcspec run --faults`).
type Action string

// The domain actions; ActionDoc says what each does.
const (
	ActionCreateChangefeed       Action = "create-changefeed"
	ActionPauseChangefeed        Action = "pause-changefeed"
	ActionResumeChangefeed       Action = "resume-changefeed"
	ActionRemoveChangefeed       Action = "remove-changefeed"
	ActionMoveMaintainer         Action = "move-maintainer"
	ActionCreateTable            Action = "create-table"
	ActionMoveTable              Action = "move-table"
	ActionSplitTable             Action = "split-table"
	ActionMergeTable             Action = "merge-table"
	ActionRemoveTableDispatchers Action = "remove-table-dispatchers"
	ActionAdvanceTime            Action = "advance-time"
	ActionBlockingDDL            Action = "blocking-ddl"
)

var actionDocs = []struct {
	a   Action
	doc string
}{
	{ActionCreateChangefeed, "an operator creates a changefeed at the upstream resolved ts (API create)"},
	{ActionPauseChangefeed, "an operator pauses a changefeed (API pause)"},
	{ActionResumeChangefeed, "an operator resumes a paused changefeed (API resume)"},
	{ActionRemoveChangefeed, "an operator removes a changefeed (API remove)"},
	{ActionMoveMaintainer, "the coordinator moves a changefeed's maintainer to a capture"},
	{ActionCreateTable, "CREATE TABLE upstream: a DDL the table trigger dispatcher must pass"},
	{ActionMoveTable, "the maintainer moves a table's spans to a capture (API move_table)"},
	{ActionSplitTable, "the maintainer splits a table's spans (API split_table)"},
	{ActionMergeTable, "the maintainer merges adjacent spans of a table on one capture (the merge scheduler)"},
	{ActionRemoveTableDispatchers, "the maintainer removes a table's dispatchers; its scheduler adds them again"},
	{ActionAdvanceTime, "time passes and nothing else is done (the model's upstream-advance)"},
	{ActionBlockingDDL, "the upstream commits a blocking DDL (alter, drop, truncate or rename table, a DB-level DDL) or a syncpoint falls due: the barrier must pass it"},
}

// Actions lists the domain actions in a stable order.
func Actions() []Action {
	out := make([]Action, len(actionDocs))
	for i, d := range actionDocs {
		out[i] = d.a
	}
	return out
}

// Doc says in one line what the action does; "" for an unknown name.
func (a Action) Doc() string {
	for _, d := range actionDocs {
		if d.a == a {
			return d.doc
		}
	}
	return ""
}

// Known reports whether a is a domain action.
func (a Action) Known() bool { return a.Doc() != "" }
