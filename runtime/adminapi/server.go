package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

const forwardedHeader = "X-Cdcspec-Forwarded"

// ErrorBody is the JSON of an error answer.
type ErrorBody struct {
	Msg  string `json:"error_msg"`
	Code string `json:"error_code"`
}

// Body size limits: a larger request body is refused (413) unread.
const (
	MaxBody      = 1 << 20 // changefeed calls
	MaxDebugBody = 1 << 16 // /api/v2/debug/*
)

// BadRequestLogger is an optional interface of a Backend: it is told of
// every request refused as malformed (bad JSON, too large, bad id), so the
// capture logs it; the request itself is dropped with a 4xx answer.
type BadRequestLogger interface {
	LogBadRequest(method, path string, err error)
}

// Handler returns the API's http.Handler over b.
func Handler(b Backend) http.Handler {
	h := &handler{b: b, hc: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v2/health", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]bool{"ok": true}) })
	mux.HandleFunc("GET /api/v2/captures", h.captures)
	mux.HandleFunc("POST /api/v2/debug/failpoints", h.failpoint)
	mux.HandleFunc("POST /api/v2/debug/delay", h.delay)
	mux.HandleFunc("POST /api/v2/changefeeds", h.owner(h.create))
	mux.HandleFunc("GET /api/v2/changefeeds", h.owner(h.list))
	mux.HandleFunc("GET /api/v2/changefeeds/{id}", h.owner(h.get))
	mux.HandleFunc("DELETE /api/v2/changefeeds/{id}", h.owner(h.remove))
	mux.HandleFunc("POST /api/v2/changefeeds/{id}/pause", h.owner(h.pause))
	mux.HandleFunc("POST /api/v2/changefeeds/{id}/resume", h.owner(h.resume))
	mux.HandleFunc("POST /api/v2/changefeeds/{id}/move_table", h.maintainer(h.move))
	mux.HandleFunc("POST /api/v2/changefeeds/{id}/split_table", h.maintainer(h.split))
	mux.HandleFunc("POST /api/v2/debug/changefeeds/{id}/move_maintainer", h.owner(h.moveMaintainer))
	return mux
}

// Serve runs the API on l until ctx ends.
func Serve(ctx context.Context, l net.Listener, b Backend) error {
	srv := &http.Server{Handler: Handler(b), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

type handler struct {
	b  Backend
	hc *http.Client
}

type apiFunc func(w http.ResponseWriter, r *http.Request, body []byte) error

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, err error) {
	code, c := 500, "CDC:ErrInternalServerError"
	switch {
	case errors.Is(err, ErrNotFound):
		code, c = 400, "CDC:ErrChangeFeedNotExists"
	case errors.Is(err, ErrAlreadyExists):
		code, c = 400, "CDC:ErrChangeFeedAlreadyExists"
	case errors.Is(err, ErrInvalidState), errors.Is(err, ErrInvalidParam):
		code, c = 400, "CDC:ErrAPIInvalidParam"
	case errors.Is(err, ErrNotReady), errors.Is(err, ErrNotOwner):
		code, c = 503, "CDC:ErrCoordinatorNotReady"
	case errors.Is(err, ErrNodeNotFound):
		code, c = 400, "CDC:ErrNodeIsNotFound"
	case errors.Is(err, ErrNoMaintainer):
		code, c = 503, "CDC:ErrMaintainerNotFound"
	}
	writeJSON(w, code, ErrorBody{Msg: err.Error(), Code: c})
}

// owner answers on the owner, forwards elsewhere.
func (h *handler) owner(f apiFunc) http.HandlerFunc {
	return h.route(f, ErrNotOwner, func(r *http.Request) string { return h.b.OwnerAPIAddr() })
}

// maintainer answers on the maintainer's capture, forwards elsewhere.
func (h *handler) maintainer(f apiFunc) http.HandlerFunc {
	return h.route(f, ErrNoMaintainer, func(r *http.Request) string { return h.b.MaintainerAPIAddr(r.Context(), r.PathValue("id")) })
}

func (h *handler) route(f apiFunc, notHere error, target func(*http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := h.readBody(w, r, MaxBody)
		if !ok {
			return
		}
		err := f(w, r, body)
		if err == nil {
			return
		}
		if errors.Is(err, ErrInvalidParam) {
			h.logBad(r, err)
		}
		if !errors.Is(err, notHere) || r.Header.Get(forwardedHeader) != "" {
			writeErr(w, err)
			return
		}
		addr := target(r)
		if addr == "" || addr == r.Host {
			writeErr(w, err)
			return
		}
		h.forward(w, r, addr, body)
	}
}

// readBody reads at most limit bytes of the request body; a larger or
// unreadable body is answered (413 or 400), logged, and ok is false.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		return body, true
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		err = fmt.Errorf("%w: request body larger than %d bytes", ErrInvalidParam, limit)
		h.logBad(r, err)
		writeJSON(w, http.StatusRequestEntityTooLarge, ErrorBody{Msg: err.Error(), Code: "CDC:ErrAPIInvalidParam"})
		return nil, false
	}
	err = fmt.Errorf("%w: reading body: %v", ErrInvalidParam, err)
	h.logBad(r, err)
	writeErr(w, err)
	return nil, false
}

func (h *handler) logBad(r *http.Request, err error) {
	if l, ok := h.b.(BadRequestLogger); ok {
		l.LogBadRequest(r.Method, r.URL.Path, err)
	}
}

func (h *handler) forward(w http.ResponseWriter, r *http.Request, addr string, body []byte) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+addr+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		writeErr(w, err)
		return
	}
	req.Header.Set(forwardedHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.hc.Do(req)
	if err != nil {
		// The request may have reached the owner: outcome unknown (500).
		writeErr(w, fmt.Errorf("forwarding to %s: %v", addr, err))
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: bad JSON body: %v", ErrInvalidParam, err)
	}
	return nil
}

func validID(id string) error {
	if id == "" || strings.ContainsAny(id, "/ \t\n") || len(id) > 128 {
		return fmt.Errorf("%w: bad changefeed id %q", ErrInvalidParam, id)
	}
	return nil
}

func (h *handler) create(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req CreateRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	if err := validID(req.ChangefeedID); err != nil {
		return err
	}
	info, err := h.b.Create(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, 200, info)
	return nil
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, _ []byte) error {
	l, err := h.b.List(r.Context())
	if err != nil {
		return err
	}
	if l == nil {
		l = []ChangefeedInfo{}
	}
	writeJSON(w, 200, map[string]any{"total": len(l), "items": l})
	return nil
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, _ []byte) error {
	info, err := h.b.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, 200, info)
	return nil
}

func (h *handler) remove(w http.ResponseWriter, r *http.Request, _ []byte) error {
	if err := h.b.Remove(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, 200, map[string]any{})
	return nil
}

func (h *handler) pause(w http.ResponseWriter, r *http.Request, _ []byte) error {
	if err := h.b.Pause(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, 200, map[string]any{})
	return nil
}

func (h *handler) resume(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req ResumeRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	if err := h.b.Resume(r.Context(), r.PathValue("id"), req.OverwriteCheckpointTs); err != nil {
		return err
	}
	writeJSON(w, 200, map[string]any{})
	return nil
}

func (h *handler) move(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req TableRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	if req.TableID <= 0 || req.TargetNodeID == "" {
		return fmt.Errorf("%w: move_table needs table_id > 0 and target_node_id", ErrInvalidParam)
	}
	n, err := h.b.MoveTable(r.Context(), r.PathValue("id"), req.TableID, req.TargetNodeID)
	if err != nil {
		return err
	}
	writeJSON(w, 200, map[string]int{"moved": n})
	return nil
}

func (h *handler) moveMaintainer(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req MoveMaintainerRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	if req.TargetNodeID == "" {
		return fmt.Errorf("%w: move_maintainer needs target_node_id", ErrInvalidParam)
	}
	if err := h.b.MoveMaintainer(r.Context(), r.PathValue("id"), req.TargetNodeID); err != nil {
		return err
	}
	writeJSON(w, 200, map[string]any{})
	return nil
}

func (h *handler) split(w http.ResponseWriter, r *http.Request, body []byte) error {
	var req TableRequest
	if err := decode(body, &req); err != nil {
		return err
	}
	if req.TableID <= 0 {
		return fmt.Errorf("%w: split_table needs table_id > 0", ErrInvalidParam)
	}
	n, err := h.b.SplitTable(r.Context(), r.PathValue("id"), req.TableID)
	if err != nil {
		return err
	}
	writeJSON(w, 200, map[string]int{"split": n})
	return nil
}

func (h *handler) captures(w http.ResponseWriter, r *http.Request) {
	cs, err := h.b.Captures(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, cs)
}

func (h *handler) failpoint(w http.ResponseWriter, r *http.Request) {
	var req FailpointRequest
	body, ok := h.readBody(w, r, MaxDebugBody)
	if !ok {
		return
	}
	err := decode(body, &req)
	if err == nil {
		err = h.b.SetFailpoint(r.Context(), req.Name, req.On)
	}
	if err != nil {
		if errors.Is(err, ErrInvalidParam) {
			h.logBad(r, err)
		}
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]any{})
}

func (h *handler) delay(w http.ResponseWriter, r *http.Request) {
	var req DelayRule
	body, ok := h.readBody(w, r, MaxDebugBody)
	if !ok {
		return
	}
	err := decode(body, &req)
	if err == nil {
		err = h.b.AddDelayRule(r.Context(), req)
	}
	if err != nil {
		if errors.Is(err, ErrInvalidParam) {
			h.logBad(r, err)
		}
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, map[string]any{})
}
