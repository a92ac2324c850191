-- The operator console's sign-in limits, shared by every instance (docs/design.md#9).

-- Reserves one sign-in attempt of client p_key, before its password is checked: the attempt is
-- counted as a failure from here until the service forgets it (a right password, or none checked).
-- Under the gate row's lock, so that reservations sent at once to any instances are decided one at
-- a time and cannot outrun the counts. Rows older than the window go first. p_now is the time of
-- the call; null: the database's clock (one clock for every instance).
--
-- The client is counted in nested groups (docs/decisions/2026-11-28-fair-sign-in-turns.md): p_key
-- (an IPv4 address or an IPv6 /64), p_subnet (its IPv6 /56; null for none) and p_network (its IPv6
-- /48 or IPv4 /24; null for none), each with a budget of failures in the window.
--
-- outcome 'limited': a group has its failures in the window (p_max_failures for the client,
--   p_subnet_failures, p_network_failures); wait_ms until the last of them to free it leaves the
--   window; limited_by names it: 'client', 'subnet' or 'network'. Nothing written.
-- outcome 'throttled': the console's failures, each network (p_network, or the key of a failure
--   recorded without one) counting at most p_console_share of its own, reach p_console_failures,
--   and the turn this attempt would get is more than p_max_delay_ms away; wait_ms until one is near
--   enough. Nothing written.
-- outcome 'reserved': attempt_id names the reserved failure; wait_ms is 0, or, once the console is
--   throttled as above, the delay before the password may be checked: the attempt's turn,
--   p_first_delay_ms doubled for every failure in the window past p_console_failures (at most
--   p_max_delay_ms) after the later of now and the previous turn, so that held attempts are
--   checked one at a time, however many instances and connections they came through.
-- failures: the console's failures in the window before this attempt, every one counted.
CREATE OR REPLACE FUNCTION admin_reserve_sign_in(
  p_key text,
  p_subnet text,
  p_network text,
  p_now timestamptz,
  p_window_ms integer,
  p_max_failures integer,
  p_subnet_failures integer,
  p_network_failures integer,
  p_console_failures integer,
  p_console_share integer,
  p_first_delay_ms integer,
  p_max_delay_ms integer
)
RETURNS TABLE (outcome text, attempt_id bigint, wait_ms bigint, failures integer, limited_by text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_now timestamptz;
  v_window interval := p_window_ms * interval '1 millisecond';
  v_max_delay interval := p_max_delay_ms * interval '1 millisecond';
  v_last_turn timestamptz;
  v_limiting timestamptz;
  v_limited_from timestamptz;
  v_limited_by text;
  v_failures integer;
  v_counted integer;
  v_delay_ms bigint := 0;
  v_turn timestamptz;
  v_id bigint;
BEGIN
  SELECT g.last_turn_at INTO v_last_turn FROM admin_sign_in_gate g FOR UPDATE;
  -- Read once the lock is held: a reservation that waited for it is timed from its turn.
  v_now := coalesce(p_now, clock_timestamp());
  DELETE FROM admin_sign_in_failures f WHERE f.at <= v_now - v_window;

  -- Each group's budget-th newest failure: while it is in the window, the group is limited, and
  -- the latest of them says until when.
  SELECT f.at INTO v_limiting FROM admin_sign_in_failures f
    WHERE f.limit_key = p_key
    ORDER BY f.at DESC, f.id DESC
    OFFSET p_max_failures - 1 LIMIT 1;
  IF v_limiting IS NOT NULL THEN
    v_limited_from := v_limiting;
    v_limited_by := 'client';
  END IF;
  IF p_subnet IS NOT NULL THEN
    SELECT f.at INTO v_limiting FROM admin_sign_in_failures f
      WHERE f.client_subnet = p_subnet
      ORDER BY f.at DESC, f.id DESC
      OFFSET p_subnet_failures - 1 LIMIT 1;
    IF v_limiting IS NOT NULL AND (v_limited_from IS NULL OR v_limiting > v_limited_from) THEN
      v_limited_from := v_limiting;
      v_limited_by := 'subnet';
    END IF;
  END IF;
  IF p_network IS NOT NULL THEN
    SELECT f.at INTO v_limiting FROM admin_sign_in_failures f
      WHERE f.client_network = p_network
      ORDER BY f.at DESC, f.id DESC
      OFFSET p_network_failures - 1 LIMIT 1;
    IF v_limiting IS NOT NULL AND (v_limited_from IS NULL OR v_limiting > v_limited_from) THEN
      v_limited_from := v_limiting;
      v_limited_by := 'network';
    END IF;
  END IF;

  -- One network's failures count toward the console's turn up to its share only, so that no one
  -- network can hold every stranger's attempt back.
  SELECT coalesce(sum(per_network.n), 0)::integer, coalesce(sum(least(per_network.n, p_console_share)), 0)::integer
    INTO v_failures, v_counted
    FROM (
      SELECT count(*)::integer AS n FROM admin_sign_in_failures f GROUP BY coalesce(f.client_network, f.limit_key)
    ) AS per_network;
  IF v_limited_from IS NOT NULL THEN
    RETURN QUERY SELECT 'limited'::text, NULL::bigint,
      ceil(extract(epoch FROM v_limited_from + v_window - v_now) * 1000)::bigint, v_failures, v_limited_by;
    RETURN;
  END IF;

  IF v_counted >= p_console_failures THEN
    v_delay_ms := least(p_max_delay_ms::bigint,
      p_first_delay_ms::bigint * (2::bigint ^ least(v_failures - p_console_failures, 32))::bigint);
    v_turn := greatest(v_now, coalesce(v_last_turn, v_now)) + v_delay_ms * interval '1 millisecond';
    IF v_turn > v_now + v_max_delay THEN
      RETURN QUERY SELECT 'throttled'::text, NULL::bigint,
        ceil(extract(epoch FROM v_turn - v_max_delay - v_now) * 1000)::bigint, v_failures, NULL::text;
      RETURN;
    END IF;
    UPDATE admin_sign_in_gate SET last_turn_at = v_turn;
    v_delay_ms := ceil(extract(epoch FROM v_turn - v_now) * 1000)::bigint;
  END IF;

  INSERT INTO admin_sign_in_failures (limit_key, client_subnet, client_network, at)
    VALUES (p_key, p_subnet, p_network, v_now) RETURNING id INTO v_id;
  RETURN QUERY SELECT 'reserved'::text, v_id, v_delay_ms, v_failures, NULL::text;
END;
$$;

-- The previous release's call (docs/decisions/2026-11-24-sql-functions-and-rolling-deploys.md),
-- until a migration of the release after this one drops it: a client with no networks, and every
-- failure counted toward the console's turn, as that release expects.
CREATE OR REPLACE FUNCTION admin_reserve_sign_in(
  p_key text,
  p_now timestamptz,
  p_window_ms integer,
  p_max_failures integer,
  p_console_failures integer,
  p_first_delay_ms integer,
  p_max_delay_ms integer
)
RETURNS TABLE (outcome text, attempt_id bigint, wait_ms bigint, failures integer)
LANGUAGE sql
AS $$
  SELECT r.outcome, r.attempt_id, r.wait_ms, r.failures
  FROM admin_reserve_sign_in(p_key, NULL, NULL, p_now, p_window_ms, p_max_failures, p_max_failures,
    p_max_failures, p_console_failures, p_console_failures, p_first_delay_ms, p_max_delay_ms) AS r;
$$;
