-- The operator console's sessions and failed sign-ins, in the database so that every instance
-- sees them (docs/design.md#9). Sessions are plain statements of realtime/storage/admin.ts; a
-- sign-in attempt is reserved by admin_reserve_sign_in() (sql/functions/60_admin.sql).

-- One row per sign-in. A cookie opens the console only while its row exists, is not revoked and
-- has not expired; rows are deleted once expired (at the next sign-in), revoked ones included.
CREATE TABLE admin_sessions (
  -- 12 random bytes, base64url: the id the cookie and the audit list carry, never the cookie itself.
  id text PRIMARY KEY,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  CONSTRAINT admin_sessions_expiry CHECK (expires_at > created_at)
);
CREATE INDEX admin_sessions_expires_idx ON admin_sessions (expires_at);

-- One row per sign-in attempt counted as a failure: reserved before its password is checked,
-- deleted when the password proved right (or was never checked), pruned once out of the window.
CREATE TABLE admin_sign_in_failures (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The client's limit key (IPv4 address, or IPv6 /64): realtime/auction/clientAddress.ts.
  limit_key text NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX admin_sign_in_failures_key_idx ON admin_sign_in_failures (limit_key, at);
CREATE INDEX admin_sign_in_failures_at_idx ON admin_sign_in_failures (at);

-- One row. Its lock makes the reservations of every instance one at a time; last_turn_at is the
-- turn given to the last attempt held back by the console-wide delay.
CREATE TABLE admin_sign_in_gate (
  singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT admin_sign_in_gate_one_row CHECK (singleton),
  last_turn_at timestamptz
);
INSERT INTO admin_sign_in_gate DEFAULT VALUES;
