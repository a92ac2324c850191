-- compatible-with: 20
-- The name's control-character and joiner checks move from CHECK constraints (sql/009) to the
-- trigger of sql/functions/45_bidder_names.sql, which tests the same patterns and refuses with the
-- same constraint names. PostgreSQL reads a CHECK's expression back from its stored text and plans
-- it at every statement that writes the table; for the joiner's 4 kB pattern that cost each lone
-- bid 75 to 100 µs (docs/performance.md#against-release), where the trigger's plpgsql plans once a
-- session. The trigger is applied after the migrations in this same transaction, so no write ever
-- goes unchecked. The trigger it replaces (the visible-name check alone, absent from a database
-- that is new) is dropped with its function.
-- Every stored name passed these checks, so nothing is read again. Compatible: the release before
-- names neither the constraints nor the trigger, and leaves the newer functions in place.
ALTER TABLE auction_bids
  DROP CONSTRAINT auction_bids_name_no_control,
  DROP CONSTRAINT auction_bids_name_emoji_joiner;
DROP TRIGGER IF EXISTS auction_bids_name_visible ON auction_bids;
DROP FUNCTION IF EXISTS auction_bids_check_name_visible();
