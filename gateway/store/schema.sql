-- Gateway schema (seed document, "Data model"). Every statement is
-- idempotent so `gateway migrate` and gateway start-up can run it at will.

-- Provisioned devices and their bearer tokens (lab credentials, plain text).
CREATE TABLE IF NOT EXISTS devices (
    device_id text PRIMARY KEY,
    token     text NOT NULL
);

-- Current owner of each device; deleted when the connection closes or the
-- gateway's lease expires and another gateway sweeps it.
CREATE TABLE IF NOT EXISTS routes (
    device_id     text PRIMARY KEY,
    gateway_id    text NOT NULL,
    conn_id       text NOT NULL,
    route_version bigint NOT NULL,
    connected_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS routes_gateway_id ON routes (gateway_id);

-- Highest claim ever accepted per device; never deleted with the route, so a
-- late old handshake arriving after a sweep still meets the floor.
CREATE TABLE IF NOT EXISTS route_floor (
    device_id   text PRIMARY KEY,
    max_version bigint NOT NULL DEFAULT 0,
    max_epoch   bigint NOT NULL DEFAULT -1,
    max_attempt bigint NOT NULL DEFAULT -1
);

-- Gateway liveness leases, written and compared on the database clock.
CREATE TABLE IF NOT EXISTS gateways (
    gateway_id  text PRIMARY KEY,
    lease_until timestamptz NOT NULL
);

-- Minimal per-conversation event log for sync.
CREATE TABLE IF NOT EXISTS events (
    conv_id text NOT NULL,
    seq     bigint NOT NULL,
    body    text NOT NULL,
    PRIMARY KEY (conv_id, seq)
);
