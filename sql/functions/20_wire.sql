-- A bid as the reads and the console see it: cents as an integer and the time as UTC ISO 8601
-- with milliseconds, whatever the session's time zone; then what moderation and rounds need.
-- CREATE OR REPLACE VIEW may only add columns at the end: any other change drops the view in a
-- numbered migration first.
CREATE OR REPLACE VIEW auction_bids_wire AS
SELECT
  id,
  bidder_name,
  (amount * 100)::bigint AS amount_cents,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  hidden_at IS NOT NULL AS hidden,
  name_blocked,
  hidden_at IS NULL AND NOT name_blocked AS visible,
  round_number
FROM auction_bids;
