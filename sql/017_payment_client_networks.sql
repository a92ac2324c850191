-- compatible-with: 16
-- The networks a waiting payment request was asked from, for the fair shares of the open requests
-- (docs/decisions/2026-11-28-fair-shares-that-nest.md): its client (an IPv4 address or an IPv6
-- /64), its IPv6 /56 and its IPv6 /48 or IPv4 /24. Kept only while the request waits: the store
-- clears them when it ends. Expand only: nullable columns, which the release before leaves null.
ALTER TABLE payments ADD COLUMN client_key text;
ALTER TABLE payments ADD COLUMN client_subnet text;
ALTER TABLE payments ADD COLUMN client_network text;
