package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"stormsim/gateway/protocol"
	"stormsim/gateway/store"
)

// TestBadFrames: each protocol violation after the upgrade gets its close
// code, the route is released, and the gateway keeps serving.
func TestBadFrames(t *testing.T) {
	s, _ := setup(t, 1)
	cfg := testConfig("gw-frames")
	cfg.Idle = 400 * time.Millisecond
	p := startInproc(t, cfg, depsOf(t, s))
	ctx := context.Background()
	cases := []struct {
		name      string
		typ       websocket.MessageType
		frame     string
		code      websocket.StatusCode
		wantError bool // an error frame precedes the close
	}{
		{"frame over MaxFrameBytes", websocket.MessageText, `{"t":"sync","conv":"` + strings.Repeat("x", protocol.MaxFrameBytes) + `"}`, protocol.CloseTooBig, false},
		{"not JSON", websocket.MessageText, `hello?`, protocol.ClosePolicy, true},
		{"JSON but not an object", websocket.MessageText, `[1,2]`, protocol.ClosePolicy, true},
		{"unknown type", websocket.MessageText, `{"t":"subscribe"}`, protocol.ClosePolicy, true},
		{"binary frame", websocket.MessageBinary, `{"t":"sync","conv":"c","after":0}`, protocol.ClosePolicy, true},
		{"sync without conv", websocket.MessageText, `{"t":"sync","after":0}`, protocol.ClosePolicy, true},
		{"sync with negative cursor", websocket.MessageText, `{"t":"sync","conv":"c","after":-1}`, protocol.ClosePolicy, true},
	}
	attempt := int64(0)
	for _, c := range cases {
		attempt++
		cl, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt, true)
		if err != nil {
			t.Fatalf("%s: dial: %v", c.name, err)
		}
		if err := cl.ws.Write(ctx, c.typ, []byte(c.frame)); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		if code := cl.closeCode(t, 3*time.Second); code != c.code {
			t.Errorf("%s: closed with %v, want %v", c.name, code, c.code)
		}
		var e protocol.Error
		gotError := false
		select {
		case f := <-cl.frames:
			gotError = json.Unmarshal(f, &e) == nil && e.T == protocol.TypeError && e.Message != ""
		default:
		}
		if gotError != c.wantError {
			t.Errorf("%s: error frame %v (%+v), want %v", c.name, gotError, e, c.wantError)
		}
		waitFor(t, 2*time.Second, c.name+": route released", func() bool { return routeOf(t, s, "u-000-d1") == store.Owner{} })
	}

	// A client that never reads answers no ping: the gateway closes it as
	// idle (4002) after cfg.Idle and releases its route. (The client itself
	// may never see the code: its unread pings make it answer into a socket
	// the gateway has already dropped.)
	attempt++
	closedBefore := len(p.logs.events("closed"))
	if _, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "mute client dropped", func() bool { return len(p.logs.events("closed")) > closedBefore })
	if o := routeOf(t, s, "u-000-d1"); o != (store.Owner{}) {
		t.Errorf("mute client's route kept: %+v", o)
	}
	if last := p.logs.events("closed")[closedBefore]; last.num("code") != float64(protocol.CloseIdle) || last["reason"] != "idle" {
		t.Errorf("mute client closed as %v, want 4002 idle", last)
	}
	if _, _, err := dial(ctx, p.addr, "u-000-d1", 0, attempt+1, true); err != nil {
		t.Errorf("gateway stopped serving: %v", err)
	}
}

// TestSyncCatchesUpOnAnyGateway is V5: a device that reconnects to another
// gateway syncs from its cursor and gets every event it missed, up to head.
func TestSyncCatchesUpOnAnyGateway(t *testing.T) {
	s, _ := setup(t, 1)
	ctx := context.Background()
	gw1 := startInproc(t, testConfig("gw-sync-1"), depsOf(t, s))
	gw2 := startInproc(t, testConfig("gw-sync-2"), depsOf(t, s))
	bodies := func(from, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "m" + string(rune('a'+(from+i)%26))
		}
		return out
	}
	if _, err := s.AppendEvents(ctx, "conv-1", bodies(0, 5)); err != nil {
		t.Fatal(err)
	}
	sync := func(c *client, after int64) protocol.Events {
		t.Helper()
		c.send(t, protocol.Sync{T: protocol.TypeSync, Conv: "conv-1", After: after})
		var ev protocol.Events
		if err := json.Unmarshal(c.next(t, 3*time.Second), &ev); err != nil || ev.T != protocol.TypeEvents {
			t.Fatalf("sync answer %+v %v", ev, err)
		}
		return ev
	}
	c1, _, err := dial(ctx, gw1.addr, "u-000-d1", 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	ev := sync(c1, 0)
	if len(ev.Events) != 5 || ev.Head != 5 || ev.Events[4].Seq != 5 {
		t.Fatalf("first sync %+v", ev)
	}
	cursor := ev.Events[len(ev.Events)-1].Seq
	c1.ws.Close(websocket.StatusNormalClosure, "")
	if _, err := s.AppendEvents(ctx, "conv-1", bodies(5, 10)); err != nil { // written while offline
		t.Fatal(err)
	}
	c2, _, err := dial(ctx, gw2.addr, "u-000-d1", 0, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	ev = sync(c2, cursor)
	if len(ev.Events) != 10 || ev.Head != 15 || ev.Events[0].Seq != 6 || ev.Events[9].Seq != 15 {
		t.Fatalf("catch-up sync %+v", ev)
	}
	if ev := sync(c2, 15); len(ev.Events) != 0 || ev.Head != 15 {
		t.Fatalf("sync at head %+v", ev)
	}
}
