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

-- Gateway liveness leases, written and compared on the database clock. The
-- owner is the holding process's random incarnation: a second process with
-- the same gateway_id cannot take a lease that is still live.
CREATE TABLE IF NOT EXISTS gateways (
    gateway_id  text PRIMARY KEY,
    lease_until timestamptz NOT NULL
);
ALTER TABLE gateways ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT '';

-- Minimal per-conversation event log for sync.
CREATE TABLE IF NOT EXISTS events (
    conv_id text NOT NULL,
    seq     bigint NOT NULL,
    body    text NOT NULL,
    PRIMARY KEY (conv_id, seq)
);

-- Which devices may read which conversations.
CREATE TABLE IF NOT EXISTS members (
    conv_id   text NOT NULL,
    device_id text NOT NULL,
    PRIMARY KEY (conv_id, device_id)
);

-- claim_route is the seed's claimRoute in one statement, so a handshake
-- costs one round trip. With a token it first authenticates the device
-- (digests are compared, so the comparison's time says nothing about the
-- token) and answers 'unauthorized' without touching the floor. Then, in the
-- seed's order: ensure the floor row, lock it, read the route, accept only a
-- claim newer than the floor (or the route's own connection repeating; a
-- re-registration must match the floor exactly), set version = floor + 1,
-- raise the floor, upsert the route and notify the previous owner, which is
-- delivered only if the statement commits. The floor returned is the one
-- found before the claim.
CREATE OR REPLACE FUNCTION claim_route(
    p_device text, p_token text, p_gateway text, p_conn text, p_epoch bigint, p_attempt bigint,
    p_channel text, p_reregister boolean,
    OUT outcome text, OUT version bigint, OUT floor_version bigint, OUT floor_epoch bigint,
    OUT floor_attempt bigint, OUT prev_gateway text, OUT prev_conn text, OUT prev_version bigint)
LANGUAGE plpgsql AS $$
BEGIN
    IF p_token IS NOT NULL THEN
        PERFORM 1 FROM devices WHERE device_id = p_device
            AND sha256(convert_to(token, 'UTF8')) = sha256(convert_to(p_token, 'UTF8'));
        IF NOT FOUND THEN
            outcome := 'unauthorized';
            RETURN;
        END IF;
    END IF;
    INSERT INTO route_floor (device_id) VALUES (p_device) ON CONFLICT DO NOTHING;
    SELECT f.max_version, f.max_epoch, f.max_attempt INTO floor_version, floor_epoch, floor_attempt
        FROM route_floor f WHERE f.device_id = p_device FOR UPDATE;
    SELECT r.gateway_id, r.conn_id, r.route_version INTO prev_gateway, prev_conn, prev_version
        FROM routes r WHERE r.device_id = p_device;
    IF p_reregister AND (floor_epoch <> p_epoch OR floor_attempt <> p_attempt) THEN
        outcome := 'refused';
        RETURN;
    END IF;
    IF prev_conn = p_conn AND prev_gateway = p_gateway THEN
        outcome := 'accepted'; -- an idempotent repeat, or the route survived
        version := prev_version;
        prev_gateway := NULL; prev_conn := NULL; prev_version := NULL;
        RETURN;
    END IF;
    IF NOT p_reregister AND NOT (p_epoch > floor_epoch OR (p_epoch = floor_epoch AND p_attempt > floor_attempt)) THEN
        outcome := 'refused';
        RETURN;
    END IF;
    version := floor_version + 1;
    UPDATE route_floor SET max_version = version, max_epoch = p_epoch, max_attempt = p_attempt
        WHERE device_id = p_device;
    INSERT INTO routes (device_id, gateway_id, conn_id, route_version) VALUES (p_device, p_gateway, p_conn, version)
        ON CONFLICT (device_id) DO UPDATE SET gateway_id = EXCLUDED.gateway_id, conn_id = EXCLUDED.conn_id,
            route_version = EXCLUDED.route_version, connected_at = clock_timestamp();
    IF prev_conn IS NOT NULL THEN
        PERFORM pg_notify(p_channel, prev_gateway || '|' || prev_conn || '|' || p_device || '|' || version);
    END IF;
    outcome := 'accepted';
END
$$;
