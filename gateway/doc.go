// Package gateway is stormsim's real gateway: it admits devices' WebSocket
// handshakes through the simulator's token bucket, claims their routes in
// PostgreSQL, keeps a lease there and sweeps dead gateways' routes, closes
// replaced sessions, serves sync and drains on SIGTERM (docs/gateway.md;
// cmd/gateway is its main).
//
// The rules, apart from the plumbing and tested without it:
//
//   - handshake.go: a handshake's checks in their order, and its route claim;
//   - admission.go, source_limit.go: the admission token bucket, and the
//     per-source pre-limit in front of it;
//   - slots.go: the queue for the handshake pool's slots, on which claims run;
//   - lease.go: the lease loop (renewal, a lapse noticed late or on time,
//     sweeps, orphan routes) and re-registration after a lapse;
//   - kicks.go: replaced sessions, by notification or reconciliation;
//   - drain.go: the planned shutdown, step by step.
//
// The plumbing:
//
//   - gateway.go: Gateway, New and Run (the first lease, the loops, the
//     HTTP server); config.go: Config and its validation;
//   - server.go: the HTTP handler and the upgrade; session.go: a session's
//     frames, pings, idleness and sync; registry.go: the connections;
//   - listener.go: the cap on TCP connections; rejections.go: answering,
//     counting and logging refusals; metrics.go: /metrics;
//   - deps.go: the interfaces through which the rules reach the store.
//
// Beside it: store (PostgreSQL: claims, leases, kicks, events), protocol
// (the wire contract with clients), logline (the log's contract), client
// (the project's reconnecting client) and storm (the storm driver).
package gateway
