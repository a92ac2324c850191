-- Rounds (docs/design.md#6b): a round opens with its first accepted bid and ends a configured number of
-- seconds later; the high, the bidder count, snapshots and resumes are the current round's. The
-- rounds' rules are in sql/functions/30_rounds.sql and the bids' in sql/functions/40_bids.sql.

CREATE TABLE auction_rounds (
  number bigint PRIMARY KEY CONSTRAINT auction_rounds_number_positive CHECK (number > 0),
  opened_at timestamptz NOT NULL,
  -- Null: endless (rounds off when it opened, or since).
  ends_at timestamptz,
  -- When the end was recorded; null while the round is open.
  closed_at timestamptz,
  CONSTRAINT auction_rounds_closed_after_end CHECK (closed_at IS NULL OR (ends_at IS NOT NULL AND closed_at >= ends_at))
);

ALTER TABLE auction_bids ADD COLUMN round_number bigint REFERENCES auction_rounds (number);
-- Null until the first bid opens round 1.
ALTER TABLE auction_state ADD COLUMN round_number bigint REFERENCES auction_rounds (number);

-- On a database with bids, they become round 1, open since the first of them: its end is set by
-- the first call that runs with rounds on (opened_at plus the round's length).
INSERT INTO auction_rounds (number, opened_at) SELECT 1, min(created_at) FROM auction_bids HAVING count(*) > 0;
UPDATE auction_bids SET round_number = 1;
UPDATE auction_state SET round_number = (SELECT max(number) FROM auction_rounds);
ALTER TABLE auction_bids ALTER COLUMN round_number SET NOT NULL;

-- The round's highest visible bid, its list, and "has this name a visible bid in this round".
DROP INDEX auction_bids_visible_amount_idx;
CREATE INDEX auction_bids_round_visible_amount_idx ON auction_bids (round_number, amount DESC, id)
  WHERE hidden_at IS NULL AND NOT name_blocked;
CREATE INDEX auction_bids_round_id_idx ON auction_bids (round_number, id);
DROP INDEX auction_bids_bidder_name_idx;
CREATE INDEX auction_bids_round_bidder_name_idx ON auction_bids (round_number, bidder_name);

-- 002's place_auction_bid(), where 002 as released created it: a bid takes the round's length and
-- soft close since. IF EXISTS: on a database created since, no numbered migration created a function.
DROP FUNCTION IF EXISTS place_auction_bid(text, text, bigint);
