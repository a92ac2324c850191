-- compatible-with: 17
-- The networks of a failed sign-in, for the nested fair shares of the console's sign-in turns
-- (docs/decisions/2026-11-28-fair-sign-in-turns.md): beside its client (limit_key: an IPv4 address
-- or an IPv6 /64), its IPv6 /56 and its IPv6 /48 or IPv4 /24, spelt as for the payments' shares
-- (sql/017). Expand only: nullable columns, which the release before leaves null (its failures
-- then count as a network of their own).
ALTER TABLE admin_sign_in_failures ADD COLUMN client_subnet text;
ALTER TABLE admin_sign_in_failures ADD COLUMN client_network text;
CREATE INDEX admin_sign_in_failures_subnet_idx ON admin_sign_in_failures (client_subnet, at);
CREATE INDEX admin_sign_in_failures_network_idx ON admin_sign_in_failures (client_network, at);
