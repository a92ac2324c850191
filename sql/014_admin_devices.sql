-- The operator's devices (docs/decisions/2026-11-27-device-cookies-for-sign-in.md): a browser that
-- signed in holds a device cookie naming one of these rows, and its sign-ins are limited by its own
-- failures alone, never by the console-wide turn or its address's (docs/realtime.md, "Operator
-- console"). In the database so that every instance sees the same devices and failures. Expand
-- only: new tables, nothing an older instance reads is changed. The reservation is
-- admin_reserve_device_sign_in() (sql/functions/61_admin_devices.sql).

-- One row per device cookie issued. It is trusted while its row exists, is not revoked and has not
-- expired; "Sign out everywhere" revokes every row, a sign-in through the device revokes it for the
-- new one it issues. Rows are deleted once expired or revoked, at the next issue.
CREATE TABLE admin_devices (
  -- 16 random bytes, base64url: the id the cookie carries beside its signature.
  id text PRIMARY KEY,
  issued_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CONSTRAINT admin_devices_expiry CHECK (expires_at > issued_at)
);
CREATE INDEX admin_devices_expires_idx ON admin_devices (expires_at);

-- One row per sign-in attempt through a device counted as a failure: reserved before its password
-- is checked, deleted when the password proved right, pruned once out of the window, and deleted
-- with its device.
CREATE TABLE admin_device_failures (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  device_id text NOT NULL REFERENCES admin_devices (id) ON DELETE CASCADE,
  at timestamptz NOT NULL
);
CREATE INDEX admin_device_failures_device_idx ON admin_device_failures (device_id, at);
CREATE INDEX admin_device_failures_at_idx ON admin_device_failures (at);
