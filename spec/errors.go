package spec

import "strings"

// fastFailCodes are the RFC error codes that fail a changefeed at once,
// whatever its checkpoint does: the GC errors
// (IsChangefeedGCFastFailErrorCode) and changefeedUnRetryableErrors
// (pkg/errors/helper.go:104-127 at b813e76f9, by their RFC codes).
// Backoff.checkFailedStatus looks for them in every accepted status before
// the BootstrapDone toggle and before checkpoint progress (#5424, ref
// #5246).
var fastFailCodes = []string{
	"CDC:ErrGCTTLExceeded", "CDC:ErrSnapshotLostByGC", "CDC:ErrStartTsBeforeGC",
	"CDC:ErrExpressionColumnNotFound", "CDC:ErrInvalidFilterExpression", "CDC:ErrSchemaSnapshotNotFound",
	"CDC:ErrSyncRenameTableFailed", "CDC:ErrChangefeedUnretryable", "CDC:ErrCorruptedDataMutation",
	"CDC:ErrDispatcherFailed", "CDC:ErrColumnSelectorFailed", "CDC:ErrSinkURIInvalid",
	"CDC:ErrKafkaInvalidConfig", "CDC:ErrMySQLInvalidConfig", "CDC:ErrStorageSinkInvalidConfig",
	"CDC:ErrInvalidTableRoutingRule", "CDC:ErrTableRoutingFailed", "CDC:ErrTableRouteConflict",
	"CDC:ErrTableAfterNotSplitable",
}

// IsFastFailCode reports whether an RFC error code fails a changefeed at once.
func IsFastFailCode(code string) bool {
	for _, c := range fastFailCodes {
		if c == code {
			return true
		}
	}
	return false
}

// IsFastFailError reports whether an error message carries a fast-fail
// code in TiCDC's "[CODE]message" form.
func IsFastFailError(msg string) bool {
	if !strings.HasPrefix(msg, "[") {
		return false
	}
	end := strings.IndexByte(msg, ']')
	return end > 1 && IsFastFailCode(msg[1:end])
}

// FastFailErrText is the unretryable error the model and the simulation
// inject (fault fast-fail-error).
const FastFailErrText = "[CDC:ErrGCTTLExceeded]the changefeed's checkpoint lags behind the GC safepoint for longer than gc-ttl"
