package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"stormsim/gateway/logline"
	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
	"stormsim/models"
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
	upgrade bool   // a 426: the answer says which upgrade is required
}

func reject(status int, reason, message string) *rejection {
	return &rejection{status: status, reason: reason, message: message}
}

// notNewer is the 409 of a claim that the recorded floor beats, citing it.
func notNewer(epoch, attempt int64, floor store.Floor, why string) *rejection {
	return reject(protocol.StatusConflict, reason409, fmt.Sprintf(
		"claim (install_epoch %d, attempt %d) not newer than the recorded (%d, %d)%s",
		epoch, attempt, floor.Epoch, floor.Attempt, why))
}

// storeUnavailable answers a database error with 503 + Retry-After.
func storeUnavailable(err error) *rejection {
	return &rejection{status: protocol.StatusServiceUnavailable, reason: reasonStore,
		message: "store unavailable", detail: err.Error()}
}

// checkUpgrade refuses, with the status websocket.Accept would answer, every
// request that websocket.Accept would refuse, so that nothing is claimed for
// a handshake that cannot be upgraded. It mirrors coder/websocket's
// verifyClientRequest and its same-host Origin rule
// (TestCheckUpgradeAgreesWithTheLibrary holds them together). It also
// refuses, with 400, a request with a body (Transfer-Encoding, or a
// Content-Length above 0), which the library would accept but net/http
// cannot answer with 101: it reads the rest of a request's body before it
// writes the response's header, so the upgrade would wait for a body the
// client never sends, with the claim made and the live session kicked. A
// WebSocket handshake has no body (RFC 6455 4.1; content in a GET has no
// defined meaning, RFC 9110 9.3.1).
func checkUpgrade(r *http.Request) *rejection {
	if !r.ProtoAtLeast(1, 1) {
		return &rejection{status: protocol.StatusUpgradeRequired, reason: reason426, message: "WebSocket needs HTTP/1.1", upgrade: true}
	}
	if !headerHasToken(r.Header, "Connection", "upgrade") {
		return &rejection{status: protocol.StatusUpgradeRequired, reason: reason426, message: `Connection header must contain "Upgrade"`, upgrade: true}
	}
	if !headerHasToken(r.Header, "Upgrade", "websocket") {
		return &rejection{status: protocol.StatusUpgradeRequired, reason: reason426, message: `Upgrade header must contain "websocket"`, upgrade: true}
	}
	if r.Method != http.MethodGet {
		return reject(protocol.StatusMethodNotAllowed, reason405, "a WebSocket handshake is a GET")
	}
	if r.ContentLength != 0 {
		return reject(protocol.StatusBadRequest, reason400, "a WebSocket handshake has no body (no Transfer-Encoding, no Content-Length above 0)")
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		return reject(protocol.StatusBadRequest, reason400, "Sec-WebSocket-Version must be 13")
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return reject(protocol.StatusBadRequest, reason400, "one Sec-WebSocket-Key header is required")
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return reject(protocol.StatusBadRequest, reason400, "Sec-WebSocket-Key must be 16 bytes in base64")
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return reject(protocol.StatusForbidden, reason403, "cross-origin WebSocket handshakes are not allowed")
		}
	}
	return nil
}

// headerHasToken reports whether a comma-separated header contains token,
// case-insensitively.
func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// parseHandshake checks the claim and the credentials' shape without
// touching the database or the token bucket: a malformed request is cheap to
// refuse and must not spend a token that a well-formed handshake could have
// used.
func parseHandshake(r *http.Request) (handshake, *rejection) {
	var hs handshake
	q := r.URL.Query()
	var err error
	if hs.attempt, err = claimValue(q, protocol.QueryAttempt, -1, protocol.MaxAttempt); err != nil {
		return hs, reject(protocol.StatusBadRequest, reason400, err.Error())
	}
	if hs.epoch, err = claimValue(q, protocol.QueryInstallEpoch, 0, protocol.MaxInstallEpoch); err != nil {
		return hs, reject(protocol.StatusBadRequest, reason400, err.Error())
	}
	device, token, ok := parseBearer(r.Header.Values(protocol.HeaderAuthorization))
	if !ok {
		return hs, reject(protocol.StatusUnauthorized, reason401, `Authorization must be "Bearer DEVICE:TOKEN"`)
	}
	hs.device, hs.token = device, token
	return hs, nil
}

// parseBearer reads the single Authorization header "Bearer DEVICE:TOKEN":
// the scheme is case-insensitive and followed by one or more spaces (RFC
// 9110 11.4); DEVICE and TOKEN follow protocol's credential syntax.
func parseBearer(values []string) (device, token string, ok bool) {
	if len(values) != 1 {
		return "", "", false
	}
	scheme, rest, found := strings.Cut(values[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", "", false
	}
	device, token, found = strings.Cut(strings.TrimLeft(rest, " "), ":")
	if !found || !visibleASCII(device, protocol.MaxDeviceIDBytes, false) || !visibleASCII(token, protocol.MaxTokenBytes, true) {
		return "", "", false
	}
	return device, token, true
}

// visibleASCII reports whether s is 1 to max bytes of 0x21-0x7e, with ':'
// only if colon.
func visibleASCII(s string, max int, colon bool) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || (c == ':' && !colon) {
			return false
		}
	}
	return true
}

// claimValue parses query parameter key as an integer in [0, max]; def (if
// >= 0) is used when the parameter is absent, otherwise it is required.
// Only the canonical form is accepted ("5", not "+5", "05" or "-0"), so that
// one claim has one spelling: two requests that read differently in a log,
// a proxy's or a harness's record are two different claims.
func claimValue(q map[string][]string, key string, def, max int64) (int64, error) {
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
	if err != nil || v < 0 || v > max || vs[0] != strconv.FormatInt(v, 10) {
		return 0, &paramError{key, fmt.Sprintf("must be an integer in [0, %d], in decimal digits without a sign or leading zeros", max), vs[0]}
	}
	return v, nil
}

type paramError struct{ key, problem, got string }

func (e *paramError) Error() string {
	return e.key + " " + e.problem + " (got \"" + truncate(e.got) + "\")"
}

// admitHandshake applies the handshake rules in order and returns the
// registered connection with its claimed route, or the rejection, or
// neither when the client left (counted as abandoned or wasted):
//
//  1. draining, or own lease lapsed: 503 + Retry-After (no query);
//  2. not an upgradable WebSocket request: 400, 403, 405 or 426 (no query, no token spent);
//  3. malformed attempt/install_epoch: 400; malformed Authorization: 401 (no query, no token spent);
//  4. the source's pre-limit (Config.SourceRate), then the admission bucket: 429 + Retry-After (no query);
//  5. MaxClaimsInflight others waiting for their claim: 503 + Retry-After (no query);
//  6. unknown device or wrong token: 401; claim not newer than the floor: 409 (one query for both).
//
// A database error answers 503 + Retry-After.
func (g *Gateway) admitHandshake(r *http.Request) (*conn, *rejection) {
	if g.reg.isDraining() {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "draining")
	}
	// Read before the lease is checked: a lapse noticed at any moment after
	// the check (while the handshake waits for its slot, say) makes the claim
	// re-register itself.
	lost := g.leaseLosses.Load()
	if g.leaseExpired() {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "lease lost")
	}
	if rej := checkUpgrade(r); rej != nil {
		return nil, rej
	}
	hs, rej := parseHandshake(r)
	if rej != nil {
		return nil, rej
	}
	c, rej := g.claimHandshake(r.Context(), r.RemoteAddr, hs, lost)
	if rej != nil {
		rej.device = hs.device
	}
	return c, rej
}

// claimHandshake is admitHandshake from the pre-limit on. ctx is the
// request's: done once the client has gone. lost is the lease-loss count
// read before the handshake's lease check.
func (g *Gateway) claimHandshake(ctx context.Context, remote string, hs handshake, lost int64) (*conn, *rejection) {
	if g.sources != nil && !g.sources.admit(remote) {
		return nil, reject(protocol.StatusTooManyRequests, reasonSource, "too many handshakes from this address")
	}
	admitted, at := g.admit.admit()
	if !admitted {
		return nil, reject(protocol.StatusTooManyRequests, reason429, "no admission token")
	}
	wait := g.claimWaitContext(ctx)
	if err := g.slots.enter(wait); err != nil {
		switch {
		case errors.Is(err, errQueueFull):
			return nil, reject(protocol.StatusServiceUnavailable, reasonBusy, "too many handshakes waiting for their claim")
		case g.cfg.Abandoned == models.AbandonedSkip && ctx.Err() != nil:
			g.abandoned(hs, at)
			return nil, nil
		}
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "draining")
	}
	defer g.slots.leave()
	cctx, cancel := context.WithTimeout(wait, storeTimeout)
	defer cancel()
	c := newConn(g.newConnID(), hs.device, hs.epoch, hs.attempt)
	c.admittedAt = at
	if !g.reg.add(c) {
		return nil, reject(protocol.StatusServiceUnavailable, reason503, "draining")
	}
	res, err := g.deps.Handshakes.AuthenticateAndClaim(cctx, store.Claim{
		Device: hs.device, Gateway: g.cfg.ID, Conn: c.id, Epoch: hs.epoch, Attempt: hs.attempt}, hs.token)
	switch {
	case err != nil && g.cfg.Abandoned == models.AbandonedSkip && ctx.Err() != nil && errors.Is(err, context.Canceled):
		// Cancelled while waiting for a database connection: nothing was sent.
		g.reg.remove(c)
		g.abandoned(hs, at)
		return nil, nil
	case err != nil:
		// The commit may have happened with only its answer lost: release
		// whatever this conn id might hold, or it would outlive the conn.
		go g.endSession(c, -1, "claim failed")
		return nil, storeUnavailable(err)
	case res.Unauthorized:
		g.reg.remove(c)
		return nil, reject(protocol.StatusUnauthorized, reason401, "unknown device or wrong token")
	case !res.Accepted:
		g.reg.remove(c)
		return nil, notNewer(hs.epoch, hs.attempt, res.Floor, "")
	}
	c.version.Store(res.Version)
	c.claimed.Store(true)
	g.metrics.Claims.Add(1)
	if prev := res.Previous; prev.Conn != "" {
		g.metrics.KicksSent.Add(1)
		if prev.Gateway == g.cfg.ID { // the notification will come too; no need to wait for it
			if old := g.reg.get(prev.Conn); old != nil {
				g.closeReplaced(old, "local")
			}
		}
	}
	if ctx.Err() != nil {
		g.metrics.ClaimsWasted.Add(1)
		g.log.Info(logline.ClaimWasted, logline.KeyDevice, c.device, logline.KeyConn, c.id, logline.KeyAttempt, c.attempt,
			"version", res.Version, logline.KeyTokenMs, float64(at)/1e6)
		go g.endSession(c, -1, "client left before its claim completed")
		return nil, nil
	}
	if g.leaseLosses.Load() != lost {
		// The lease lapsed since the handshake's lease check: a sweep may
		// have taken the route, and the re-registration may have run
		// before the claim was marked, so restore it here.
		if rej := g.reregisterOne(c); rej != nil {
			return nil, rej
		}
	}
	return c, nil
}

// claimWaitContext is the context a handshake waits on for its claim slot
// and its database connection: the request's with skip (the wait ends when
// the client leaves), the gateway's with serve. The wait has no time limit
// of its own, as the model's queue has none (--max-claims-inflight bounds
// its length); the claim, once it has a slot, has storeTimeout.
func (g *Gateway) claimWaitContext(req context.Context) context.Context {
	if g.cfg.Abandoned == models.AbandonedSkip {
		return req
	}
	return g.ctx
}

// abandoned counts and logs a handshake dropped unclaimed because its
// client left.
func (g *Gateway) abandoned(hs handshake, at time.Duration) {
	g.metrics.Abandoned.Add(1)
	g.log.Info(logline.Abandoned, logline.KeyDevice, hs.device, logline.KeyAttempt, hs.attempt, "install_epoch", hs.epoch, logline.KeyTokenMs, float64(at)/1e6)
}
