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
-- token) and answers 'unauthorized' without touching the floor. A new claim
-- then ensures the device's floor row and, in the same statement, locks it
-- and raises it if (epoch, attempt) is newer (ON CONFLICT DO UPDATE locks
-- the row whether or not its WHERE holds, and sees its latest version), so
-- version = floor + 1; a claim that did not raise it is refused unless the
-- route is already this connection's (an idempotent repeat). A
-- re-registration locks the floor and must match it exactly. Under the
-- floor's lock the route is read and upserted, and the previous owner is
-- notified, which is delivered only if the statement commits. floor_* is
-- the floor that refused the claim (null when it was accepted).
CREATE OR REPLACE FUNCTION claim_route(
    p_device text, p_token text, p_gateway text, p_conn text, p_epoch bigint, p_attempt bigint,
    p_channel text, p_reregister boolean,
    OUT outcome text, OUT version bigint, OUT floor_version bigint, OUT floor_epoch bigint,
    OUT floor_attempt bigint, OUT prev_gateway text, OUT prev_conn text, OUT prev_version bigint)
LANGUAGE plpgsql AS $$
DECLARE
    own boolean;
BEGIN
    IF p_token IS NOT NULL THEN
        PERFORM 1 FROM devices WHERE device_id = p_device
            AND sha256(convert_to(token, 'UTF8')) = sha256(convert_to(p_token, 'UTF8'));
        IF NOT FOUND THEN
            outcome := 'unauthorized';
            RETURN;
        END IF;
    END IF;
    IF p_reregister THEN
        INSERT INTO route_floor (device_id) VALUES (p_device) ON CONFLICT DO NOTHING;
        SELECT f.max_version, f.max_epoch, f.max_attempt INTO floor_version, floor_epoch, floor_attempt
            FROM route_floor f WHERE f.device_id = p_device FOR UPDATE;
        IF floor_epoch <> p_epoch OR floor_attempt <> p_attempt THEN
            outcome := 'refused';
            RETURN;
        END IF;
        version := floor_version + 1;
    ELSE
        INSERT INTO route_floor AS f (device_id, max_version, max_epoch, max_attempt)
            VALUES (p_device, 1, p_epoch, p_attempt)
            ON CONFLICT (device_id) DO UPDATE SET max_version = f.max_version + 1,
                max_epoch = EXCLUDED.max_epoch, max_attempt = EXCLUDED.max_attempt
            WHERE p_epoch > f.max_epoch OR (p_epoch = f.max_epoch AND p_attempt > f.max_attempt)
            RETURNING f.max_version INTO version;
    END IF;
    SELECT r.gateway_id, r.conn_id, r.route_version INTO prev_gateway, prev_conn, prev_version
        FROM routes r WHERE r.device_id = p_device;
    own := coalesce(prev_conn = p_conn AND prev_gateway = p_gateway, false);
    IF own AND (p_reregister OR version IS NULL) THEN
        -- An idempotent repeat, or a re-registered route that survived; the
        -- floor is left as it was (a re-registration's is its own claim).
        outcome := 'accepted';
        version := prev_version;
        floor_version := NULL; floor_epoch := NULL; floor_attempt := NULL;
        prev_gateway := NULL; prev_conn := NULL; prev_version := NULL;
        RETURN;
    END IF;
    IF version IS NULL THEN
        outcome := 'refused';
        SELECT f.max_version, f.max_epoch, f.max_attempt INTO floor_version, floor_epoch, floor_attempt
            FROM route_floor f WHERE f.device_id = p_device;
        RETURN;
    END IF;
    IF p_reregister THEN
        UPDATE route_floor SET max_version = version WHERE device_id = p_device;
        floor_version := NULL; floor_epoch := NULL; floor_attempt := NULL;
    END IF;
    INSERT INTO routes (device_id, gateway_id, conn_id, route_version) VALUES (p_device, p_gateway, p_conn, version)
        ON CONFLICT (device_id) DO UPDATE SET gateway_id = EXCLUDED.gateway_id, conn_id = EXCLUDED.conn_id,
            route_version = EXCLUDED.route_version, connected_at = clock_timestamp();
    IF prev_conn IS NOT NULL AND NOT own THEN
        PERFORM pg_notify(p_channel, prev_gateway || '|' || prev_conn || '|' || p_device || '|' || version);
    END IF;
    outcome := 'accepted';
END
$$;
