package traces

import "strings"

// headWarnings classifies TiCDC HEAD's (pingcap/ticdc b813e76f9) WARN, ERROR
// and PANIC messages of the control-plane packages that carry no spec event
// of their own: one line per message, "class<TAB>caller files<TAB>message".
// The class is a symptom name (symNames): "context" is benign (TiCDC handles
// it: a stale or duplicate message dropped, a retry, a skipped restore);
// every other class feeds the finding its symptom names (see
// symptomFindings). The message strings are TiCDC's (facts, matched
// exactly); the classification is cdcspec's reading of the code around each
// call. testdata/ticdc-head-log-messages.tsv pins the full list, and
// TestCatalogueClassifiesHEAD fails when one of its WARN, ERROR or PANIC
// messages is missing here and from the catalogue.
const headWarnings = `
bootstrap-failure	dispatcher_orchestrator.go	Receive post bootstrap request but the table trigger event dispatcher id is not match
bootstrap-failure	dispatcher_orchestrator.go	Receive post bootstrap request but there is no table trigger event dispatcher
bootstrap-failure	dispatcher_orchestrator.go	failed to create new dispatcher manager
bootstrap-failure	dispatcher_orchestrator.go	failed to create table trigger dispatcher
bootstrap-failure	dispatcher_orchestrator.go	failed to handle bootstrap request
bootstrap-failure	dispatcher_orchestrator.go	failed to handle post bootstrap request
bootstrap-failure	dispatcher_orchestrator.go	failed to initialize table trigger event dispatcher
bootstrap-failure	dispatcher_orchestrator.go	failed to initialize table trigger redo dispatcher
bootstrap-failure	dispatcher_orchestrator.go	receive post bootstrap request but there is no table trigger event dispatcher
bootstrap-failure	dispatcher_orchestrator.go	table trigger dispatcher id mismatch during bootstrap
bootstrap-failure	dispatcher_orchestrator.go	table trigger dispatcher present during nil trigger bootstrap
bootstrap-failure	maintainer.go	maintainer post bootstrap failed
bootstrap-failure	maintainer_controller_bootstrap.go	add operator failed when dealing current working operators in bootstrap, should not happen
bootstrap-failure	maintainer_controller_bootstrap.go	can not determine the startTs from the bootstrap response
bootstrap-failure	maintainer_controller_bootstrap.go	load table from scheme store failed
checkpoint-blocked	maintainer.go	can not advance redoTs since not bootstrapped
checkpoint-blocked	maintainer.go	redo checkpointTs can not be advanced, since missing capture heartbeat
context	barrier.go	no dispatcher status to send
context	barrier_event.go	dispatcher not found, ignore
context	barrier_event.go	writer dispatcher not found
context	basic.go	available size for scheduler is negative
context	basic.go	available size for scheduler on node is negative
context	basic_dispatcher.go	Receive handshake event unexpectedly
context	basic_dispatcher.go	Received a stale event, should ignore it
context	basic_dispatcher.go	dispatcher is removing
context	basic_dispatcher.go	handle events slowly
context	changefeed_db.go	changefeed is not stopped, can not be updated
context	cleaner.go	failed to delete changefeed gc safepoint
context	cleaner.go	failed to delete create changefeed gc safepoint
context	cleaner.go	failed to delete resume changefeed gc safepoint
context	cleaner.go	unknown gc service tag, skip
context	controller.go	changefeed is in scheduling, wait a moment
context	controller.go	changefeed not found, skip updating epoch
context	controller.go	failed to request resolved ts from log coordinator
context	controller.go	refuse to resume the changefeed
context	controller.go	timeout waiting for log coordinator resolved ts
context	controller.go,dispatcher_orchestrator.go,heartbeat_collector.go,maintainer.go,maintainer_manager.go	unknown message type, ignore it
context	coordinator.go	Failed to send state change event to stateChangedCh since context timeout, there may be a lot of state need to be handled. Try next time
context	coordinator.go	changefeed info is nil, skip state change
context	coordinator.go	changefeed not found
context	coordinator.go	failed to delete global gc safepoint after removing last changefeed
context	coordinator.go	update keyspace gc barrier failed
context	default_span_split_checker.go	default span split checker: replica not found
context	dispatcher_manager.go	failed to cleanup removed changefeed
context	dispatcher_manager.go	heartbeat collector is not available when stopping dispatcher manager write path
context	dispatcher_manager.go	heartbeat collector is not available when stopping redo write path
context	dispatcher_manager.go	ignore update only columns is configured but does not take effect for this sink
context	dispatcher_manager_merge.go	ignore merge operator with invalid merged dispatcher ID
context	dispatcher_manager_redo.go	should not reach here. only update redo meta on the tableTriggerRedoDispatcher
context	dispatcher_orchestrator.go	drop stale maintainer bootstrap request after trigger validation
context	dispatcher_orchestrator.go	drop stale maintainer post bootstrap request
context	dispatcher_orchestrator.go	unknown message type, drop message
context	etcd_backend.go	failed to load change feed Status, add a new one
context	etcd_backend.go	failed to marshal change feed Info, ignore
context	etcd_backend.go	failed to marshal change feed Status, ignore
context	etcd_backend.go	failed to save change feed Status, ignore
context	etcd_backend.go	failed to unmarshal change feed Info, ignore
context	etcd_backend.go	failed to unmarshal change feed Status, ignore
context	etcd_backend.go	load a old version change feed Info, migrate it to new version
context	event_dispatcher.go	dispatcher has removed
context	event_dispatcher.go	get table info failed, just ignore
context	event_dispatcher.go	register table to schemaStore failed
context	helper.go	scheduleDispatcherRequest config is nil, skip
context	helper.go	scheduleDispatcherRequest has no valid operator key, skip
context	helper.go	scheduleDispatcherRequest is nil, skip
context	maintainer.go	drop unexpected maintainer close response
context	maintainer.go	maintainer is stopped, stop handling event
context	maintainer_controller_bootstrap.go	bootstrap operator config is nil, skip restoring it
context	maintainer_controller_bootstrap.go	bootstrap operator has invalid dispatcher id, skip restoring it
context	maintainer_controller_bootstrap.go	bootstrap operator missing span, skip restoring it
context	maintainer_controller_bootstrap.go	bootstrap remove operator missing span info, skip restoring it
context	maintainer_controller_bootstrap.go	failed to add cleanup operator for unexpected bootstrap dispatcher
context	maintainer_controller_bootstrap.go	found a redo working table that is not in initial table map, just ignore it
context	maintainer_controller_bootstrap.go	merge operator has insufficient dispatcher IDs
context	maintainer_controller_bootstrap.go	merge replica set not found when restoring merge
context	maintainer_controller_bootstrap.go	skip restoring merge operator because merged span is missing
context	maintainer_controller_bootstrap.go	skip restoring merge operator because merged table is missing from schema snapshot
context	maintainer_controller_bootstrap.go	skip restoring merge operator because source table is missing from schema snapshot
context	maintainer_controller_bootstrap.go	skip restoring merge operator due to invalid merge spans
context	maintainer_controller_bootstrap.go	skip restoring merge operator due to invalid merged dispatcher ID
context	maintainer_controller_bootstrap.go	skip restoring merge operator due to missing source dispatchers
context	maintainer_controller_bootstrap.go	skip restoring merge operator due to unavailable mode
context	maintainer_controller_bootstrap.go	skip restoring merge operator due to uninitialized controller
context	maintainer_controller_bootstrap.go	skip restoring stale merge operator due to conflicting bootstrap operator
context	maintainer_controller_bootstrap.go	skip stale merge operator that cannot be restored
context	maintainer_manager.go	ignore invalid coordinator version
context	maintainer_manager_maintainers.go	ignore remove maintainer request, 
context	maintainer_manager_maintainers.go	unknown message type
context	maintainer_manager_node.go	ignore set dispatcher drain target request from non coordinator
context	maintainer_manager_node.go	ignore set node liveness request from non coordinator
context	message_center.go	Add a local target, ignore it
context	message_center.go	failed to unmarshal handshake message
context	module_node_manager.go	get coordinator id failed, will retry in next tick
context	node_set_checksum_manager.go	dispatcher already exists in expected set, ignore it
context	node_set_checksum_manager.go	dispatcher exists in another node, override expected node
context	node_set_checksum_manager.go	node set checksum state not ok for a long time
context	operator_add.go	dispatcher report unexpected stopped status, ignore
context	operator_controller.go	add operator failed, changefeed changed after epoch bump
context	operator_controller.go	add operator failed, changefeed not found
context	operator_controller.go	add operator failed, changefeed not found after epoch bump
context	operator_split.go	skip post finish because split target nodes are not aligned with actual split result
context	operator_stop.go	failed to delete changefeed
context	operator_stop.go	failed to set changefeed progress
context	region_count_refresher.go	load regions failed, just continue
context	region_count_splitter.go	load regions failed, skip split span
context	region_count_splitter.go	schedulerv3: list region out of order detected
context	remote_target.go	Received unexpected connection from node with higher ID
context	replication_span.go	invalid span range
context	router.go	slow message handling detected
context	split_span_checker.go	split span checker: replica not found
context	task.go	dispatcher not found when do merge, skip remove
context	write_bytes_splitter.go	scan regions failed, skip split span
error-discarded	basic_dispatcher.go,dispatcher_manager.go	error channel is full, discard error
impossible-value	maintainer_manager_maintainers.go	ignore add maintainer request with invalid checkpointTs
impossible-value	replication_span.go	add replica with invalid checkpoint ts
impossible-value	task.go	pending ddl has zero commit ts, fallback to min checkpoint ts
internal-error	barrier.go	handle block status failed, event is nil
internal-error	basic_dispatcher.go	InitializeTableSchemaStore should only be received by table trigger dispatcher
internal-error	basic_dispatcher.go	Wrong Schema ID
internal-error	basic_dispatcher.go	invalid event type
internal-error	basic_dispatcher.go	remove dispatcher from dynamic stream failed
internal-error	basic_dispatcher.go	unexpected event type for table mode compatibility check
internal-error	basic_dispatcher.go	unsupported action type
internal-error	controller.go	RegisterKeyspace failed
internal-error	controller.go	get changefeed failed
internal-error	coordinator.go	failed to update changefeed state
internal-error	dispatcher_manager.go	remove dispatcher manager from heartbeat collector failed
internal-error	dispatcher_manager.go	remove redo message failed
internal-error	dispatcher_manager_helper.go	merge dispatcher failed, invalid dispatcherIDs
internal-error	dispatcher_manager_helper.go	merge dispatcher failed, the dispatcher is not found
internal-error	dispatcher_manager_helper.go	merge dispatcher failed, the dispatcher is not working
internal-error	dispatcher_manager_helper.go	merge dispatcher failed, the dispatcherIDs are not consecutive
internal-error	dispatcher_manager_helper.go	remove checkpointTs message failed
internal-error	dispatcher_manager_redo.go	should not reach here. only collect redo meta on the tableTriggerRedoDispatcher
internal-error	dispatcher_orchestrator.go	Dispatcher not found, this should not happen
internal-error	dispatcher_orchestrator.go	Redo dispatcher not found, this should not happen
internal-error	dispatcher_orchestrator.go	failed to handle close request
internal-error	helper.go	add dispatcher to dynamic stream failed
internal-error	helper.go	invalid remove dispatcher request count in one batch
internal-error	helper.go	schemaID not found
internal-error	maintainer_manager_maintainers.go	ignore add maintainer request with invalid config
internal-error	operator_controller.go	failed to add merge dispatcher operator
internal-error	operator_controller.go	failed to add merge dispatcher operator when restoring merge
internal-error	operator_controller.go	failed to add occupy dispatcher operator
internal-error	operator_split.go	post finish in split dispatcher operator failed, set the span absent
internal-error	redo_dispatcher.go	SetRedoMeta should be called by table trigger redo dispatcher
internal-error	table_progress.go	ElementList Pop called but no elements left
internal-error	task.go	get table recovery info for merge dispatcher failed
panic	barrier_event.go	influence type should be normal when writer dispatcher not found
panic	barrier_event.go	influence type should not be normal when range checker is nil
panic	barrier_event.go	invalid influence type meet drop dispatchers
panic	barrier_event.go	replications for this block event should not be empty
panic	barrier_helper.go	candidate is nil
panic	basic_dispatcher.go	Unexpected event type
panic	basic_dispatcher.go	ddl event should only be singly handled
panic	basic_dispatcher.go	should not call this
panic	basic_dispatcher.go	sync point event should only be singly handled
panic	changefeed.go	changefeed config is nil
panic	changefeed.go	changefeed info is nil
panic	changefeed.go	unable to marshal changefeed config
panic	changefeed.go	unable to parse sink-uri
panic	checker.go	unknown group type
panic	controller.go	load all changefeeds failed
panic	controller.go	maintainer runs on multiple node
panic	default_span_split_checker.go,split_span_checker.go	scheduler config is nil, please check the config
panic	dispatcher_orchestrator.go	failed to unmarshal changefeed config
panic	event_dispatcher.go	dispatcher cache events is full
panic	helper.go	unknown schedule action
panic	maintainer.go	marshal changefeed info failed
panic	message_center.go	Received unexpected message type, should be handshake
panic	message_center.go	Target ID is empty, cannot send message
panic	operator_add.go,operator_move.go,operator_stop.go	unreachable code
panic	region_count_splitter.go	Unexpected stepper step
panic	remote_target.go	Stream already exists
panic	span_controller.go	old replica set not found
panic	split_span_checker.go	unexpected error: diffTraffic is less than 0
panic	split_span_checker.go	unexpected error: span is not continuous
send-failed	controller.go	send request failed when bootstrapping initial node, will be resent later
send-failed	controller.go	send request failed when bootstrapping newly added node, will be resent later
send-failed	controller.go	send set node liveness command failed
send-failed	controller_drain.go	send set dispatcher drain target command failed
send-failed	coordinator.go	failed to send coordinator request
send-failed	dispatcher_manager_redo.go	failed to send redo request message
send-failed	dispatcher_orchestrator.go	failed to send response
send-failed	event_dispatcher.go	send bootstrap message failed
send-failed	heartbeat_collector.go	failed to send block status messages
send-failed	heartbeat_collector.go	failed to send block status request message
send-failed	heartbeat_collector.go	failed to send heartbeat messages
send-failed	heartbeat_collector.go	failed to send heartbeat request message
send-failed	maintainer_manager.go	send bootstrap response failed
send-failed	maintainer_manager.go	send command failed
send-failed	maintainer_manager_node.go	send node heartbeat failed
send-failed	maintainer_manager_node.go	send set node liveness response failed
send-failed	message_center.go	Failed to get remote target
send-failed	message_center.go	Target mismatch
send-failed	operator_controller.go	send command to maintainer failed
send-failed	remote_target.go	Error receiving message
send-failed	remote_target.go	Error sending message
send-failed	remote_target.go	Failed to collect error, channel is full
send-failed	remote_target.go	Failed to connect to remote target
send-failed	remote_target.go	Failed to decode message
send-failed	remote_target.go	Failed to marshal handshake message
send-failed	remote_target.go	marshal message failed 
send-failed	remote_target.go	remote target stream is not ready, wait and check again
send-failed	router.go	Handle message failed
`

// headEntries turns headWarnings into catalogue entries. Their fields: the
// changefeed, the node the line names and the error.
// headProgress classifies the rest of TiCDC HEAD's control-plane messages:
// the INFO and DEBUG lines that carry no spec event and feed no finding. One
// line per message, "reason<TAB>caller files<TAB>message"; the reason (a
// key of progressReasons) says why the checker reads nothing in it. Each is
// recognised as benign context: it is counted in the coverage, not listed
// among the unknown messages, and its timestamp fields get the
// impossible-value check like every recognised line's (impossibleTs). With
// headWarnings, the catalogue and barrierEntries this classifies all 576
// messages of testdata/ticdc-head-log-messages.tsv
// (TestCatalogueClassifiesHEAD).
const headProgress = `
bootstrap-step	controller.go	all new nodes bootstrap response received
bootstrap-step	controller.go	coordinator bootstrap initial nodes
bootstrap-step	controller.go	stop changefeed when bootstrapping
bootstrap-step	event_dispatcher.go	send bootstrap messages finished
bootstrap-step	event_dispatcher.go	start to send bootstrap messages
bootstrap-step	maintainer.go	create table event trigger dispatcher bootstrap message
bootstrap-step	maintainer.go	received maintainer post bootstrap response
bootstrap-step	maintainer_controller_bootstrap.go	abort incomplete merge from uncommitted merged dispatcher
bootstrap-step	maintainer_controller_bootstrap.go	continue merge from existing merged dispatcher after source loss
bootstrap-step	maintainer_controller_bootstrap.go	dispatcher already exists, skip restoring add operator
bootstrap-step	maintainer_controller_bootstrap.go	dispatcher already scheduled, skip restoring add operator
bootstrap-step	maintainer_controller_bootstrap.go	maintainer already bootstrapped, may a new node join the cluster
bootstrap-step	maintainer_controller_bootstrap.go	merge already finished during bootstrap
bootstrap-step	maintainer_controller_bootstrap.go	table already reported by bootstrap snapshots
bootstrap-step	maintainer_controller_bootstrap.go	table spans already exist in span controller during bootstrap
checkpoint-step	basic_dispatcher.go	skip DML event at startTs+1 due to skipDMLAsStartTs
checkpoint-step	maintainer.go	can advance checkpointTs
checkpoint-step	maintainer.go	checkpointTs can not be advanced, since global checkpoint is invalid
checkpoint-step	replication_span.go	clamp dispatcher start ts to committed checkpoint
drain	controller.go	send set node liveness command
drain	controller_drain.go	dispatcher drain clear acknowledged by all nodes
drain	controller_drain.go	dispatcher drain clear completed after pending nodes were removed
drain	controller_drain.go	dispatcher drain target activated
drain	controller_drain.go	dispatcher drain target cleared
drain	controller_drain.go	drain completion not yet observed
drain	controller_drain.go	drain completion observed for removed active target
drain	controller_drain.go	drain completion observed, waiting for node removal to clear drain target
drain	controller_drain.go	drain waiting for cluster drain capability observation
drain	controller_drain.go	drain waiting for coordinator bootstrap
drain	controller_drain.go	drain waiting for previous drain target to clear
drain	controller_drain.go	observed dispatcher drain epoch
drain	controller_drain.go	removed active drain target completion not yet observed
drain	controller_drain.go	stale dispatcher drain target clear started
drain	drain.go	drain scheduler created move operators
drain	drain.go	drain scheduler initialized fixed move limit
drain	drain.go	no alive destination node for drain
drain	maintainer_manager_node.go	dispatcher drain target updated
drain	maintainer_manager_node.go	node liveness transition applied
drain	maintainer_manager_node.go	reject set node liveness request due to epoch mismatch
lifecycle	basic_dispatcher.go	dispatcher is not ready to close
lifecycle	basic_dispatcher.go	tableSchemaStore has already been initialized
lifecycle	controller.go	load all changefeeds
lifecycle	dispatcher_manager.go	closed all event dispatchers
lifecycle	dispatcher_manager.go	shared info closed
lifecycle	dispatcher_manager.go	sink closed
lifecycle	dispatcher_manager.go	stopping dispatcher manager write path
lifecycle	dispatcher_orchestrator.go	dispatcher manager write path closed while creating dispatcher manager
lifecycle	dispatcher_orchestrator.go	dispatcher manager write path closed while creating table trigger dispatcher
lifecycle	dispatcher_orchestrator.go	dispatcher manager write path closed while initializing table trigger event dispatcher
lifecycle	dispatcher_orchestrator.go	dispatcher orchestrator closed
lifecycle	dispatcher_orchestrator.go	dispatcher orchestrator closed while creating table trigger dispatcher
lifecycle	dispatcher_orchestrator.go	dispatcher orchestrator is closing
lifecycle	dispatcher_orchestrator.go	dispatcher orchestrator is running
lifecycle	etcd_watcher.go	start to run etcd worker
lifecycle	heartbeat_collector.go	heartbeat collector is closed
lifecycle	heartbeat_collector.go	heartbeat collector is closing
lifecycle	heartbeat_collector.go	heartbeat collector is running
lifecycle	heartbeat_collector.go	heartbeat collector is shutting down, exit sendBlockStatusMessages
lifecycle	heartbeat_collector.go	heartbeat collector is shutting down, exit sendHeartBeatMessages
lifecycle	maintainer.go	start to initialize changefeed maintainer
lifecycle	maintainer_manager_maintainers.go	reject add maintainer request because node is stopping
lifecycle	task.go	dispatcher is still not closed
lifecycle	task.go	still retrying dispatcher close
operator-step	controller.go	wait for stop changefeed operator finished
operator-step	dispatcher_manager.go	delete current working remove operator
operator-step	dispatcher_manager_helper.go	merge dispatcher is ready
operator-step	dispatcher_manager_merge.go	cleanup finished merge operator
operator-step	dispatcher_manager_merge.go	cleanup merge operator because merged dispatcher not found
operator-step	helper.go	delete current working add operator
operator-step	helper.go	dispatcher manager write path closed, keep add operators
operator-step	helper.go	dispatcher not found, skip remove operator store
operator-step	helper.go	store current working add operator
operator-step	helper.go	store current working remove operator
operator-step	maintainer_controller.go	remove terminal span covered by merged span
operator-step	operator_controller.go	add merge operator
operator-step	operator_controller.go	add operator failed, epoch bump already in progress
operator-step	operator_controller.go	add operator failed, operator already exists after epoch bump
operator-step	operator_controller.go	affectedReplicaSets is less than 2, skip merge
operator-step	operator_controller.go	affectedReplicaSets is not consecutive, skip merge
operator-step	operator_controller.go	affectedReplicaSets is not in the same node, skip merge
operator-step	operator_controller.go	changefeed is in removing progress, skip the stop operator
operator-step	operator_controller.go	changefeed is not scheduled, try stop maintainer using coordinator node
operator-step	operator_controller.go	changefeed is stopped, replace the old one
operator-step	operator_controller.go	replica set is removed, replace the old one
operator-step	operator_controller.go	send command to dispatcher
operator-step	operator_controller.go	skip operator while controller is quiescing
operator-step	operator_controller.go	skip remove operator while controller is quiescing
operator-step	operator_controller.go	span replication is nil
operator-step	operator_merge.go,operator_split.go	origin node is removed
operator-step	operator_merge.go,operator_split.go	task removed
operator-step	operator_move.go	changefeed removed, mark move changefeed operator finished
operator-step	operator_move.go	dest node is offline, abort move and reschedule span
operator-step	operator_move.go	destination node removed after origin maintainer stopped
operator-step	operator_move.go	destination node removed before origin maintainer stopped
operator-step	operator_move.go	move dispatcher operator finished
operator-step	operator_move.go	move dispatcher operator is finished, no need to handle node remove
operator-step	operator_move.go	origin and dest are the same, no need to move
operator-step	operator_move.go	origin node is stopped
operator-step	operator_move.go	replicaset is removed, mark move dispatcher operator finished
operator-step	operator_occupy.go	occupy dispatcher operator finished
operator-step	operator_remove.go	start remove dispatcher operator
operator-step	operator_split.go	split dispatcher operator begin post finish
operator-step	operator_stop.go	node is stopped during stop maintainer, schedule stop command to coordinator node
operator-step	operator_stop.go	start remove maintainer operator
operator-step	task.go	event dispatcher manager is doing merge, waiting for dispatchers to be closed
operator-step	task.go	get table recovery info for merge dispatcher
progress	basic_dispatcher.go	remove dispatcher
progress	changefeed_db.go	add an replicating maintainer
progress	changefeed_db.go	marking changefeed scheduling
progress	controller.go	coordinator is slow, handle a event takes too long
progress	dispatcher_manager.go	get table recovery info for dispatchers
progress	dispatcher_orchestrator.go	dispatcher orchestrator is fenced, drop pending message
progress	maintainer.go	maintainer is too slow
progress	replication_span.go	init groupID
redo	dispatcher_manager.go	closed all redo dispatchers
redo	dispatcher_manager_redo.go	batch create new redo dispatchers
redo	dispatcher_manager_redo.go	delete current working remove operator for redo dispatcher
redo	dispatcher_manager_redo.go	new redo dispatcher created
redo	dispatcher_manager_redo.go	new redo dispatcher created(merge dispatcher)
redo	dispatcher_manager_redo.go	redo dispatcher completely stopped, and delete it from event dispatcher manager
redo	dispatcher_manager_redo.go	table trigger redo dispatcher created
redo	dispatcher_orchestrator.go	dispatcher manager write path closed while initializing table trigger redo dispatcher
redo	helper.go	dispatcher manager write path closed, keep add operators for redo dispatchers
redo	helper.go	redo dispatcher not found, skip remove operator store
redo	helper.go	store current working add operator for redo dispatcher
redo	helper.go	store current working remove operator for redo dispatcher
redo	maintainer.go	can advance redo checkpointTs
redo	maintainer.go	handle redo message
redo	maintainer.go	redo checkpointTs can not be advanced, since redo global checkpoint is invalid
redo	redo_dispatcher.go	update redo meta
scheduling	balance_splits.go	here is some spans in the group is not in the replicating state; skip this balance check
scheduling	default_span_split_checker.go	default span split checker: replica not enabled to split, skip add
scheduling	default_span_split_checker.go	default span split checker: update status
scheduling	maintainer_controller_helper.go	Merge Table is finished; There is only one replication for this table, so no need to do merge
scheduling	maintainer_controller_helper.go	More then one replications; There is no need to do split
scheduling	maintainer_controller_helper.go	sorted replications in mergeTable
scheduling	maintainer_controller_helper.go	successfully merge table
scheduling	maintainer_controller_helper.go	successfully split table by region count
scheduling	maintainer_controller_helper.go	table is already on the target node
scheduling	maintainer_controller_helper.go	wait for existing operator finished before moving table
scheduling	maintainer_controller_helper.go	wait for existing operator finished before moving table in merge table
scheduling	maintainer_controller_helper.go	wait for merge table table operator finished
scheduling	maintainer_controller_helper.go	wait for move split table operator finished
scheduling	maintainer_controller_helper.go	wait for move table operator finished
scheduling	maintainer_controller_helper.go	wait for move table table operator finished
scheduling	maintainer_controller_helper.go	wait for split table operator finished
scheduling	region_count_refresher.go	refresh region count for all tables
scheduling	region_count_refresher.go	region count refresher exited
scheduling	region_count_splitter.go	skip split span because region count is less than region threshold or region threshold is 0
scheduling	region_count_splitter.go	skip split span because region count is less than target spans num
scheduling	region_count_splitter.go	split span by region count
scheduling	split_span_checker.go	SplitSpanChecker try to check
scheduling	split_span_checker.go	SplitSpanChecker try to choose split spans
scheduling	split_span_checker.go	checkBalanceTraffic move spans
scheduling	split_span_checker.go	checkBalanceTraffic split span
scheduling	split_span_checker.go	checkBalanceTraffic try to balance traffic
scheduling	split_span_checker.go	checkMergeWhole try to merge whole spans
scheduling	split_span_checker.go	chooseMergedSpans merge spans
scheduling	split_span_checker.go	chooseMergedSpans try to choose merge spans
scheduling	split_span_checker.go	chooseMoveSpans found multiple move plans
scheduling	split_span_checker.go	chooseMoveSpans try to choose move spans
scheduling	split_span_checker.go	chooseSplitSpans split span by region
scheduling	split_span_checker.go	chooseSplitSpans split span by traffic
scheduling	split_span_checker.go	should balance, thus update score
scheduling	split_span_checker.go	some task is not available, skip check
scheduling	split_span_checker.go	split span checker update status
scheduling	split_span_checker.go	split span checker: node id is empty, please check the node id
scheduling	split_span_checker.go	the lag for the group is too large, skip merge
scheduling	split_span_checker.go	the span count is proper, so we don't need merge spans
scheduling	split_span_checker.go	traffic node info
scheduling	split_span_checker.go	update traffic score
scheduling	write_bytes_splitter.go	split span by written keys
trace	basic_dispatcher.go	all events filtered
trace	basic_dispatcher.go	dispatcher handle dispatcher status
trace	basic_dispatcher.go	dispatcher receive all event
trace	controller.go	received log coordinator resolved ts
trace	coordinator.go	skip persisting unchanged changefeed runtime state
trace	dispatcher_manager.go	cancelled remove task for dispatcher
trace	dispatcher_manager_helper.go	dispatcher is initializing
trace	dispatcher_orchestrator.go	dispatcher orchestrator already closed, drop message
trace	event_dispatcher.go	cache events
trace	maintainer.go	failed to send maintainer request
transport	message.go	Unimplemented IOType, ignore the message
transport	message_center.go	Remote target changed, creating a new one
transport	message_center.go	Remote target not found
transport	message_center.go	Start running message center
transport	message_center.go	Start to receive messages from remote target
transport	message_center.go	create message center success.
transport	message_center.go	message center is closed
transport	message_center.go	message center is closing
transport	message_center.go	notify node changes
transport	node_set_checksum_manager.go	The ack seq value did not meet expectations.
transport	remote_target.go	Canceling old stream session
transport	remote_target.go	Cannot create grpc client
transport	remote_target.go	Cannot establish bidirectional grpc stream
transport	remote_target.go	Close remote target done
transport	remote_target.go	Closing remote target
transport	remote_target.go	Connected to remote target
transport	remote_target.go	Create remote target
transport	remote_target.go	Failed to send handshake
transport	remote_target.go	Initiating connection to remote target
transport	remote_target.go	Inject Drop Remote Message
transport	remote_target.go	Not initiating connection as remote has smaller ID
transport	remote_target.go	Start running remote target to process messages
transport	remote_target.go	Stream is nil, it might have been closed by new connection, exit
transport	remote_target.go	exit runReceiveMessages
transport	remote_target.go	exit runSendMessages
transport	remote_target.go	reset connection to remote target done
transport	remote_target.go	start to reset connection to remote target
transport	router.go	no handler for message, drop it
transport	router.go	router: close, since context done
`

// progressReasons are headProgress's reasons.
var progressReasons = map[string]string{
	"operator-step":   `an operator's intermediate step, or an operator skipped, replaced or waited for; its start and end are the catalogued "add operator to running queue" and "operator finished"`,
	"scheduling":      "a balance, split or merge decision of the span schedulers; the spec sees its result as operators",
	"transport":       "the message center's connections and streams; a lost message shows as a re-send (the protocol re-sends) or as message-send-failed",
	"lifecycle":       "a component starting, running or closing; the catalogued lines of its owner carry the protocol events",
	"drain":           "a node drain's progress; draining is not in the spec",
	"redo":            "the redo log's dispatchers and meta, which the spec does not model",
	"bootstrap-step":  `a step of a bootstrap whose outcome a catalogued line reports ("changefeed maintainer bootstrapped", the bootstrap-failure lines)`,
	"checkpoint-step": "a step of the checkpoint calculation; the checkpoint itself is read from the catalogued lines",
	"trace":           "a DEBUG trace of one event or message",
	"progress":        "progress with no protocol event and no symptom",
}

func headEntries() []entry {
	var out []entry
	for _, line := range strings.Split(headProgress, "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			panic("traces: bad headProgress line: " + line)
		}
		if _, ok := progressReasons[parts[0]]; !ok {
			panic("traces: unknown reason in headProgress: " + parts[0])
		}
		out = append(out, entry{msg: parts[2], files: strings.Split(parts[1], ","), sym: SymContext, v: "HEAD",
			keys: m("Changefeed", cfKeys)})
	}
	for _, line := range strings.Split(headWarnings, "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			panic("traces: bad headWarnings line: " + line)
		}
		sym, ok := symptomByName(parts[0])
		if !ok {
			panic("traces: unknown symptom in headWarnings: " + parts[0])
		}
		out = append(out, entry{msg: parts[2], files: strings.Split(parts[1], ","), sym: sym, v: "HEAD",
			keys: m("Changefeed", cfKeys, "Node", "nodeID,node,from,targetNode,target,captureID", "Err", "error,err")})
	}
	return out
}

func symptomByName(name string) (Symptom, bool) {
	for i, n := range symNames {
		if n == name && i > 0 {
			return Symptom(i), true
		}
	}
	return SymNone, false
}

// barrierEntries: the barrier's and the dispatchers' block-status lines
// (maintainer/barrier.go, barrier_event.go; dispatcher/helper.go,
// basic_dispatcher.go). A block event (a DDL or syncpoint at commitTs) is
// created when the first dispatcher reports it WAITING, and removed when
// every dispatcher reported it done; meanwhile the maintainer warns every
// 10 s that it is not resolved, and each dispatcher re-sends its WAITING
// status every 5 s ("resend task periodic resend" every 10th re-send) until
// the maintainer's action cancels the task. OpID carries the barrier's
// commitTs (maintainer side) or the dispatcher ID (dispatcher side).
// "new block event is created" (SymBarrierCreated) and "all dispatchers
// reported event done, remove event" (SymBarrierDone) are in the
// catalogue with their spec events.
var barrierEntries = []entry{
	{msg: "barrier event is not resolved", files: files("barrier_event.go"), sym: SymBarrierStuck, v: "HEAD",
		keys: m("Changefeed", cfKeys), conv: barrierKey("commitTs")},
	{msg: "barrier event is not being selected", files: files("barrier_event.go"), sym: SymBarrierStuck, v: "HEAD",
		keys: m("Changefeed", cfKeys), conv: barrierKey("commitTs")},
	{msg: "set resend task", files: files("helper.go"), sym: SymBlockWaiting, v: "HEAD",
		keys: m("Dispatcher", "taskDispatcherID"), conv: blockStatusKey},
	{msg: "resend task periodic resend", files: files("helper.go"), sym: SymBlockWaiting, v: "HEAD",
		keys: m("Dispatcher", "dispatcherID"), conv: blockStatusKey},
	{msg: "cancel resend task", files: files("basic_dispatcher.go"), sym: SymBlockDone, v: "HEAD",
		keys: m("Dispatcher", "dispatcherID"), conv: blockStatusKey},
	// The maintainer schedules a DDL's table changes (scheduleBlockEvent):
	// "remove table" names the dropped tables (or the schema, for a DB
	// DDL), "add new table" each added one; mode tells the redo barrier's
	// lines from the sink's.
	{msg: "add new table", files: files("barrier_event.go"), sym: SymDDLScheduled, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Checkpoint", "commitTs", "Tables", "table"), conv: barrierMode},
	{msg: "remove table", files: files("barrier_event.go"), sym: SymDDLScheduled, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Checkpoint", "commitTs", "Tables", "table"), conv: barrierMode},
	// The rest of the barrier's INFO lines: how a block event is built,
	// scheduled and passed (context; counted in coverage).
	{msg: "Get block status from unexisted dispatcher, ignore it", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "Get block status from unreplicating dispatcher, ignore it", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "the block event is sent by ddl dispatcher", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "event trySchedule", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "no candidate here, skip", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "event waits for a smaller commitTs before scheduling", files: files("barrier.go"), sym: SymContext, v: "HEAD"},
	{msg: "handle block status", files: files("barrier.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "create range checker for block event", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "use table trigger event as the writer dispatcher", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "update schemaID for table", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "unexisted dispatcher, remove it from barrier event", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "unreplicating dispatcher, remove it from barrier event", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "one related dispatcher has forward checkpointTs, means the block event can be advanced", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher receive ddl event", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher receive sync point event", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher hold block event", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher pop the holding block event", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "cancel resend task before remove dispatcher", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "resendTask not found; fast resend path cannot be executed.", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "ignore DDL by NotSync", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "merge dispatcher uses pending block event to calculate start ts", files: files("task.go"), sym: SymContext, v: "HEAD"},
	// and its DEBUG lines
	{msg: "No block event found, ignore the event done message", files: files("barrier.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "the block event already selected, ignore the block event", files: files("barrier.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "discard db/all block event from ddl dispatcher due to pending schedule events, wait next resend", files: files("barrier.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "suppress duplicate maintainer block statuses", files: files("block_status_dedupe.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "use committed checkpoint for stale ddl barrier", files: files("replication_span.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "pending event is nil, and the action's commit is larger than dispatchers resolvedTs", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "pending event's commitTs is smaller than the action's commitTs, just ignore it", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "resend task", files: files("helper.go"), sym: SymContext, v: "HEAD (DEBUG)"},
	{msg: "dispatcher handle ddl event finish", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD (DEBUG)"},
}

// barrierMode keys a scheduled table change by the barrier's mode (the
// sink's and the redo log's barriers schedule independently).
func barrierMode(r *Record, it *Item, out []Item) []Item {
	it.OpID = string(fieldOr(r, "mode"))
	return out
}

func barrierKey(field string) func(r *Record, it *Item, out []Item) []Item {
	return func(r *Record, it *Item, out []Item) []Item {
		it.OpID = string(fieldOr(r, field))
		return out
	}
}
