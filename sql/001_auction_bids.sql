-- The live auction: every accepted bid, and the one-row state that serialises bidding. Runs
-- unchanged on PostgreSQL 15+ and on PGlite. The database must be UTF8: the name checks below are
-- Unicode ranges. As released, 001 also created the auction_bids_wire view and place_auction_bid();
-- every function and view now lives in sql/functions/, applied after the migrations.

CREATE TABLE auction_bids (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  bidder_name text NOT NULL,
  -- The scale keeps 2 decimals: a third decimal is rounded by the column type, never stored.
  amount numeric(12, 2) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT auction_bids_name_length CHECK (char_length(bidder_name) BETWEEN 1 AND 40),
  -- Unicode categories Cc and Cf (Unicode 17, as Node 24's \p{Cc}\p{Cf}); NUL cannot occur in text.
  CONSTRAINT auction_bids_name_no_control CHECK (
    bidder_name !~ '[\u0001-\u001F\u007F-\u009F\u00AD\u0600-\u0605\u061C\u06DD\u070F\u0890-\u0891\u08E2\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF\uFFF9-\uFFFB\U000110BD\U000110CD\U00013430-\U0001343F\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0001\U000E0020-\U000E007F]'
  ),
  -- Trimmed as JavaScript's String.prototype.trim() trims (the white space that is not Cc or Cf).
  CONSTRAINT auction_bids_name_trimmed CHECK (
    bidder_name !~ '^[\u0020\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]|[\u0020\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]$'
  ),
  CONSTRAINT auction_bids_amount_range CHECK (amount > 0 AND amount <= 1000000000.00)
);

-- "Has this name bid before?" for the bidder count.
CREATE INDEX auction_bids_bidder_name_idx ON auction_bids (bidder_name);

-- One row. Its lock serialises bids, so the "strictly higher" test, the id and the bidder count are
-- decided one bid at a time, and accepted ids rise in commit order.
CREATE TABLE auction_state (
  singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT auction_state_one_row CHECK (singleton),
  -- 0 until the first bid: every valid amount is above it.
  high_amount numeric(12, 2) NOT NULL DEFAULT 0,
  bidder_count integer NOT NULL DEFAULT 0 CHECK (bidder_count >= 0)
);
INSERT INTO auction_state DEFAULT VALUES;
