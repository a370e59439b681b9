package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// handshake is a syntactically valid handshake request.
type handshake struct {
	device  string
	token   string
	epoch   int64
	attempt int64
}

// rejection is a refused handshake: the HTTP status, the metric reason and a
// one-line explanation sent as the body and logged.
type rejection struct {
	status  int
	reason  string
	message string
	detail  string // logged, not sent (database errors)
	device  string // when the request named one
}

func reject(status int, reason, message string) *rejection {
	return &rejection{status: status, reason: reason, message: message}
}

// storeUnavailable answers a database error with 503 + Retry-After.
func storeUnavailable(err error) *rejection {
	return &rejection{status: protocol.StatusServiceUnavailable, reason: reasonStore,
		message: "store unavailable", detail: err.Error()}
}

// parseHandshake checks the request's shape without touching the database
// or the token bucket: a malformed request is cheap to refuse and must not
// spend a token that a well-formed handshake could have used.
func parseHandshake(r *http.Request) (handshake, *rejection) {
	var hs handshake
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return hs, reject(protocol.StatusBadRequest, reason400, "not a WebSocket upgrade")
	}
	q := r.URL.Query()
	var err error
	if hs.attempt, err = nonNegative(q, protocol.QueryAttempt, -1); err != nil {
		return hs, reject(protocol.StatusBadRequest, reason400, err.Error())
	}
	if hs.epoch, err = nonNegative(q, protocol.QueryInstallEpoch, 0); err != nil {
		return hs, reject(protocol.StatusBadRequest, reason400, err.Error())
	}
	auth := r.Header.Get(protocol.HeaderAuthorization)
	cred, ok := strings.CutPrefix(auth, "Bearer ")
	device, token, ok2 := strings.Cut(cred, ":")
	if !ok || !ok2 || device == "" || token == "" || len(device) > 128 || len(token) > 256 {
		return hs, reject(protocol.StatusUnauthorized, reason401, "Authorization must be \"Bearer DEVICE:TOKEN\"")
	}
	hs.device, hs.token = device, token
	return hs, nil
}

// nonNegative parses query parameter key as an int64 >= 0; def (if >= 0) is
// used when the parameter is absent, otherwise it is required.
func nonNegative(q map[string][]string, key string, def int64) (int64, error) {
	vs, ok := q[key]
	if !ok {
		if def >= 0 {
			return def, nil
		}
		return 0, &paramError{key, "is required", ""}
	}
	if len(vs) != 1 {
		return 0, &paramError{key, "must be given once", strings.Join(vs, ",")}
	}
	v, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil || v < 0 {
		return 0, &paramError{key, "must be an integer >= 0", vs[0]}
	}
	return v, nil
}

type paramError struct{ key, problem, got string }

func (e *paramError) Error() string { return e.key + " " + e.problem + " (got \"" + e.got + "\")" }

// admitHandshake applies the seed's handshake rules in order and returns the
// registered connection with its claimed route, or the rejection:
//
//  1. draining, or own lease lapsed: 503 + Retry-After (no query);
//  2. malformed attempt/install_epoch: 400; malformed Authorization: 401 (no query, no token spent);
//  3. no admission token: 429 + Retry-After (no query);
//  4. unknown device or wrong token: 401;
//  5. claim not newer than the floor: 409.
//
// A database error answers 503 + Retry-After.
func (g *Gateway) admitHandshake(ctx context.Context, r *http.Request) (*conn, *rejection) {
	if g.reg.isDraining() {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "draining")
	}
	if g.leaseExpired() {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "lease lost")
	}
	hs, rej := parseHandshake(r)
	if rej != nil {
		return nil, rej
	}
	c, rej := g.claimHandshake(ctx, hs)
	if rej != nil {
		rej.device = hs.device
	}
	return c, rej
}

// claimHandshake is admitHandshake from the token bucket on.
func (g *Gateway) claimHandshake(ctx context.Context, hs handshake) (*conn, *rejection) {
	admitted, at := g.admit.admit()
	if !admitted {
		return nil, reject(protocol.StatusTooManyRequests, reason429, "no admission token")
	}
	ok, err := g.deps.Handshakes.Authenticate(ctx, hs.device, hs.token)
	if err != nil {
		return nil, storeUnavailable(err)
	}
	if !ok {
		return nil, reject(protocol.StatusUnauthorized, reason401, "unknown device or wrong token")
	}
	c := newConn(g.newConnID(), hs.device, hs.epoch, hs.attempt)
	c.admittedAt = at
	c.lastSeen.Store(int64(g.mono()))
	if !g.reg.add(c) {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "draining")
	}
	res, err := g.deps.Handshakes.ClaimRoute(ctx, store.Claim{
		Device: hs.device, Gateway: g.cfg.ID, Conn: c.id, Epoch: hs.epoch, Attempt: hs.attempt})
	if err != nil {
		// The commit may have happened with only its answer lost: release
		// whatever this conn id might hold, or it would outlive the conn.
		go g.endSession(c, -1, "claim failed")
		return nil, storeUnavailable(err)
	}
	if !res.Accepted {
		g.reg.remove(c)
		return nil, reject(protocol.StatusConflict, reason409, fmt.Sprintf(
			"claim (install_epoch %d, attempt %d) not newer than the recorded (%d, %d)",
			hs.epoch, hs.attempt, res.Floor.Epoch, res.Floor.Attempt))
	}
	c.version.Store(res.Version)
	g.metrics.Claims.Add(1)
	if prev := res.Previous; prev.Conn != "" {
		g.metrics.KicksSent.Add(1)
		if prev.Gateway == g.cfg.ID { // the notification will come too; no need to wait for it
			if old := g.reg.get(prev.Conn); old != nil {
				g.closeReplaced(old, "local")
			}
		}
	}
	return c, nil
}
