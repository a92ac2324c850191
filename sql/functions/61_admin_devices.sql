-- The operator's device cookies' sign-in limit, shared by every instance
-- (docs/decisions/2026-11-27-device-cookies-for-sign-in.md).

-- Reserves one sign-in attempt through device p_device, before its password is checked: counted as
-- a failure of that device alone from here until the service forgets it (a right password). Under
-- the device row's lock, so that attempts through one device sent at once to any instances are
-- decided one at a time; the console-wide gate row is never touched, so strangers' attempts, however
-- many, do not queue a device's. p_now is the time of the call; null: the database's clock.
--
-- outcome 'unknown': no such device, or revoked, or expired: the attempt is an untrusted client's.
--   Nothing written.
-- outcome 'locked': the device has p_max_failures failures in the window; wait_ms until the oldest
--   of them leaves it. Nothing written.
-- outcome 'reserved': attempt_id names the reserved failure.
CREATE OR REPLACE FUNCTION admin_reserve_device_sign_in(
  p_device text,
  p_now timestamptz,
  p_window_ms integer,
  p_max_failures integer
)
RETURNS TABLE (outcome text, attempt_id bigint, wait_ms bigint)
LANGUAGE plpgsql
AS $$
DECLARE
  v_now timestamptz;
  v_window interval := p_window_ms * interval '1 millisecond';
  v_expires timestamptz;
  v_revoked timestamptz;
  v_limiting timestamptz;
  v_id bigint;
BEGIN
  SELECT d.expires_at, d.revoked_at INTO v_expires, v_revoked FROM admin_devices d
    WHERE d.id = p_device FOR UPDATE;
  -- Read once the lock is held: an attempt that waited for it is timed from its turn.
  v_now := coalesce(p_now, clock_timestamp());
  IF NOT FOUND OR v_revoked IS NOT NULL OR v_expires <= v_now THEN
    RETURN QUERY SELECT 'unknown'::text, NULL::bigint, NULL::bigint;
    RETURN;
  END IF;
  DELETE FROM admin_device_failures f WHERE f.device_id = p_device AND f.at <= v_now - v_window;

  -- The device's p_max_failures-th newest failure: while it is in the window, the device is locked.
  SELECT f.at INTO v_limiting FROM admin_device_failures f
    WHERE f.device_id = p_device
    ORDER BY f.at DESC, f.id DESC
    OFFSET p_max_failures - 1 LIMIT 1;
  IF v_limiting IS NOT NULL THEN
    RETURN QUERY SELECT 'locked'::text, NULL::bigint,
      ceil(extract(epoch FROM v_limiting + v_window - v_now) * 1000)::bigint;
    RETURN;
  END IF;

  INSERT INTO admin_device_failures (device_id, at) VALUES (p_device, v_now) RETURNING id INTO v_id;
  RETURN QUERY SELECT 'reserved'::text, v_id, 0::bigint;
END;
$$;
