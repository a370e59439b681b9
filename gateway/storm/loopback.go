package storm

import (
	"fmt"
	"net"
	"net/url"
)

// checkGateway refuses URLs the client cannot dial and, unless
// allowRemote, hosts that are not loopback: a storm is a load test, and
// pointing one at someone else's server by a typo must not be easy.
func checkGateway(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("gateway %q: %w", raw, err)
	}
	switch u.Scheme {
	case "ws", "wss", "http", "https":
	default:
		return fmt.Errorf("gateway %q: scheme must be ws, wss, http or https (got %q)", raw, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("gateway %q: no host", raw)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("gateway %q: host %s is not loopback (set AllowNonLoopback to storm it anyway)", raw, host)
}
