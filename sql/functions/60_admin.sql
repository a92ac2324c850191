-- The operator console's sign-in limits, shared by every instance (docs/design.md#9).

-- Reserves one sign-in attempt of client p_key, before its password is checked: the attempt is
-- counted as a failure from here until the service forgets it (a right password, or none checked).
-- Under the gate row's lock, so that reservations sent at once to any instances are decided one at
-- a time and cannot outrun the counts. Rows older than the window go first. p_now is the time of
-- the call; null: the database's clock (one clock for every instance).
--
-- outcome 'limited': p_key has p_max_failures failures in the window; wait_ms until the oldest of
--   them leaves it. Nothing written.
-- outcome 'throttled': the console has p_console_failures or more failures in the window, and the
--   turn this attempt would get is more than p_max_delay_ms away; wait_ms until one is near enough.
--   Nothing written.
-- outcome 'reserved': attempt_id names the reserved failure; wait_ms is 0, or, past
--   p_console_failures failures in the window, the delay before the password may be checked: the
--   attempt's turn, p_first_delay_ms doubled for every failure past p_console_failures (at most
--   p_max_delay_ms) after the later of now and the previous turn, so that held attempts are checked
--   one at a time, however many instances and connections they came through.
-- failures: the console's failures in the window before this attempt.
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
LANGUAGE plpgsql
AS $$
DECLARE
  v_now timestamptz;
  v_window interval := p_window_ms * interval '1 millisecond';
  v_max_delay interval := p_max_delay_ms * interval '1 millisecond';
  v_last_turn timestamptz;
  v_limiting timestamptz;
  v_failures integer;
  v_delay_ms bigint := 0;
  v_turn timestamptz;
  v_id bigint;
BEGIN
  SELECT g.last_turn_at INTO v_last_turn FROM admin_sign_in_gate g FOR UPDATE;
  -- Read once the lock is held: a reservation that waited for it is timed from its turn.
  v_now := coalesce(p_now, clock_timestamp());
  DELETE FROM admin_sign_in_failures f WHERE f.at <= v_now - v_window;

  -- The key's p_max_failures-th newest failure: while it is in the window, the key is limited.
  SELECT f.at INTO v_limiting FROM admin_sign_in_failures f
    WHERE f.limit_key = p_key
    ORDER BY f.at DESC, f.id DESC
    OFFSET p_max_failures - 1 LIMIT 1;
  SELECT count(*) INTO v_failures FROM admin_sign_in_failures;
  IF v_limiting IS NOT NULL THEN
    RETURN QUERY SELECT 'limited'::text, NULL::bigint,
      ceil(extract(epoch FROM v_limiting + v_window - v_now) * 1000)::bigint, v_failures;
    RETURN;
  END IF;

  IF v_failures >= p_console_failures THEN
    v_delay_ms := least(p_max_delay_ms::bigint,
      p_first_delay_ms::bigint * (2::bigint ^ least(v_failures - p_console_failures, 32))::bigint);
    v_turn := greatest(v_now, coalesce(v_last_turn, v_now)) + v_delay_ms * interval '1 millisecond';
    IF v_turn > v_now + v_max_delay THEN
      RETURN QUERY SELECT 'throttled'::text, NULL::bigint,
        ceil(extract(epoch FROM v_turn - v_max_delay - v_now) * 1000)::bigint, v_failures;
      RETURN;
    END IF;
    UPDATE admin_sign_in_gate SET last_turn_at = v_turn;
    v_delay_ms := ceil(extract(epoch FROM v_turn - v_now) * 1000)::bigint;
  END IF;

  INSERT INTO admin_sign_in_failures (limit_key, at) VALUES (p_key, v_now) RETURNING id INTO v_id;
  RETURN QUERY SELECT 'reserved'::text, v_id, v_delay_ms, v_failures;
END;
$$;
