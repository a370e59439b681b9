package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"stormsim/models"
)

// TestGatewayLogNeverWaitsForTheLab pins down why a gateway logs into a
// file the lab follows rather than into a pipe: a pipe's writer stops
// when its reader falls behind, and the reader is the process whose
// goroutines are the storm's clients, so every logged decision of the
// gateway waited for the clients. A stand-in gateway announces itself,
// then writes 8,192 lines of log (1 MiB, sixteen times a pipe's buffer) while the lab's
// log book is held, and marks when its writes returned.
func TestGatewayLogNeverWaitsForTheLab(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "written")
	bin := filepath.Join(dir, "gateway.sh")
	script := `#!/bin/sh
echo '{"msg":"listening","addr":"127.0.0.1:1"}' >&2
sleep 0.2
i=0
while [ $i -lt 8192 ]; do echo '{"msg":"admitted","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}'; i=$((i+1)); done >&2
touch ` + done + `
sleep 30
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := gatewaySpec{ID: "gw-x", Lease: time.Second, Admission: models.AdmissionSpec{Kind: models.AdmissionUnlimited},
		DrainGrace: time.Second, DBConns: 1, LogPath: filepath.Join(dir, "gw-x.log")}
	p, err := startGateway(context.Background(), bin, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	p.log.mu.Lock() // the lab busy elsewhere: nothing reads the log
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(done); err == nil {
			break
		}
		if time.Now().After(deadline) {
			p.log.mu.Unlock()
			t.Fatal("the gateway's log writes waited for the lab to read them")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.log.mu.Unlock()
	if got := p.addr; got != "127.0.0.1:1" {
		t.Errorf("addr = %q, want the listening line's", got)
	}
}
