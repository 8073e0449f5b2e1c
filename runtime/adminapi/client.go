package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client calls one capture's admin API.
type Client struct {
	// Base is the server URL, e.g. "http://127.0.0.1:8300".
	Base string
	HTTP *http.Client
}

// NewClient returns a client for server (a URL or host:port).
func NewClient(server string) *Client {
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	return &Client{Base: strings.TrimRight(server, "/"), HTTP: &http.Client{Timeout: 15 * time.Second}}
}

// APIError is a refusal by the server; Unwrap gives the matching Err*
// variable when the code is known.
type APIError struct {
	Status int
	Body   ErrorBody
	kind   error
}

// Error states the code once: TiCDC's messages already start with
// "[CDC:ErrX]".
func (e *APIError) Error() string {
	if e.Body.Code == "" || strings.Contains(e.Body.Msg, "["+e.Body.Code+"]") {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body.Msg)
	}
	return fmt.Sprintf("HTTP %d: [%s]%s", e.Status, e.Body.Code, e.Body.Msg)
}

// Unwrap returns the Err* variable of the code (nil for an unknown one).
func (e *APIError) Unwrap() error { return e.kind }

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading answer: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		ae := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, &ae.Body) != nil {
			ae.Body.Msg = strings.TrimSpace(string(data))
		}
		switch ae.Body.Code {
		case "CDC:ErrChangeFeedNotExists":
			ae.kind = ErrNotFound
		case "CDC:ErrChangeFeedAlreadyExists":
			ae.kind = ErrAlreadyExists
		case "CDC:ErrAPIInvalidParam":
			if strings.Contains(ae.Body.Msg, "state") {
				ae.kind = ErrInvalidState
			} else {
				ae.kind = ErrInvalidParam
			}
		case "CDC:ErrCoordinatorNotReady":
			ae.kind = ErrNotReady
		case "CDC:ErrNodeIsNotFound":
			ae.kind = ErrNodeNotFound
		case "CDC:ErrMaintainerNotFound":
			ae.kind = ErrNoMaintainer
		}
		return ae
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: bad answer: %w", method, path, err)
		}
	}
	return nil
}

func cfPath(id string) string { return "/api/v2/changefeeds/" + url.PathEscape(id) }

// Create creates a changefeed.
func (c *Client) Create(ctx context.Context, req CreateRequest) (ChangefeedInfo, error) {
	var info ChangefeedInfo
	err := c.do(ctx, "POST", "/api/v2/changefeeds", req, &info)
	return info, err
}

// List lists changefeeds.
func (c *Client) List(ctx context.Context) ([]ChangefeedInfo, error) {
	var out struct {
		Items []ChangefeedInfo `json:"items"`
	}
	err := c.do(ctx, "GET", "/api/v2/changefeeds", nil, &out)
	return out.Items, err
}

// Get reads one changefeed.
func (c *Client) Get(ctx context.Context, id string) (ChangefeedInfo, error) {
	var info ChangefeedInfo
	err := c.do(ctx, "GET", cfPath(id), nil, &info)
	return info, err
}

// Pause pauses a changefeed.
func (c *Client) Pause(ctx context.Context, id string) error {
	return c.do(ctx, "POST", cfPath(id)+"/pause", nil, nil)
}

// Resume resumes a changefeed (overwrite 0 keeps the checkpoint).
func (c *Client) Resume(ctx context.Context, id string, overwrite uint64) error {
	return c.do(ctx, "POST", cfPath(id)+"/resume", ResumeRequest{OverwriteCheckpointTs: overwrite}, nil)
}

// Remove deletes a changefeed; it returns once the changefeed's stop is
// done (its maintainer and dispatchers are closed).
func (c *Client) Remove(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", cfPath(id), nil, nil)
}

// MoveTable moves a table's spans to target; it returns how many moves started.
func (c *Client) MoveTable(ctx context.Context, id string, table int64, target string) (int, error) {
	var out map[string]int
	err := c.do(ctx, "POST", cfPath(id)+"/move_table", TableRequest{TableID: table, TargetNodeID: target}, &out)
	return out["moved"], err
}

// MoveMaintainer starts moving the changefeed's maintainer to the capture
// target (a debug endpoint; Get shows when the move is done).
func (c *Client) MoveMaintainer(ctx context.Context, id, target string) error {
	return c.do(ctx, "POST", "/api/v2/debug/changefeeds/"+url.PathEscape(id)+"/move_maintainer", MoveMaintainerRequest{TargetNodeID: target}, nil)
}

// SplitTable splits a table's spans; it returns how many splits started.
func (c *Client) SplitTable(ctx context.Context, id string, table int64) (int, error) {
	var out map[string]int
	err := c.do(ctx, "POST", cfPath(id)+"/split_table", TableRequest{TableID: table}, &out)
	return out["split"], err
}

// Captures lists the captures.
func (c *Client) Captures(ctx context.Context) ([]Capture, error) {
	var out []Capture
	err := c.do(ctx, "GET", "/api/v2/captures", nil, &out)
	return out, err
}

// Health checks that the capture serves.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, "GET", "/api/v2/health", nil, nil)
}

// SetFailpoint switches a failpoint of the capture this client talks to.
func (c *Client) SetFailpoint(ctx context.Context, name string, on bool) error {
	return c.do(ctx, "POST", "/api/v2/debug/failpoints", FailpointRequest{Name: name, On: on}, nil)
}

// AddDelayRule installs an inbound message rule on the capture this client
// talks to.
func (c *Client) AddDelayRule(ctx context.Context, r DelayRule) error {
	return c.do(ctx, "POST", "/api/v2/debug/delay", r, nil)
}
