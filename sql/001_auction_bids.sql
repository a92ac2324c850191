-- The live auction: every accepted bid, the one-row state that serialises bidding, and the atomic
-- place_auction_bid() that the service calls. Runs unchanged on PostgreSQL 15+ and on PGlite.
-- The database must be UTF8: the name checks below are Unicode ranges.

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

-- The wire form of a bid, in one place for the reads and the notification: cents as an integer and
-- the time as UTC ISO 8601 with milliseconds, whatever the session's time zone.
CREATE VIEW auction_bids_wire AS
SELECT
  id,
  bidder_name,
  (amount * 100)::bigint AS amount_cents,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
FROM auction_bids;

-- Accepts the bid only if it is strictly above the highest, as one atomic call. READ COMMITTED:
-- each statement below takes a fresh snapshot, so after the UPDATE has the row lock the name test
-- sees every bid committed before it. NOTIFY is delivered at commit, so in commit order.
CREATE FUNCTION place_auction_bid(p_bidder_name text, p_amount_cents bigint)
RETURNS TABLE (
  accepted boolean,
  id bigint,
  bidder_name text,
  amount_cents bigint,
  created_at text,
  bidders integer,
  highest_cents bigint
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_amount numeric(12, 2) := p_amount_cents::numeric / 100;
  v_id bigint;
  v_new_bidder boolean;
  v_bidders integer;
  v_bid auction_bids_wire%ROWTYPE;
BEGIN
  UPDATE auction_state SET high_amount = v_amount WHERE auction_state.high_amount < v_amount;
  IF NOT FOUND THEN
    RETURN QUERY
    SELECT false, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count, (s.high_amount * 100)::bigint
    FROM auction_state s;
    RETURN;
  END IF;

  v_new_bidder := NOT EXISTS (SELECT 1 FROM auction_bids b WHERE b.bidder_name = p_bidder_name);
  INSERT INTO auction_bids (bidder_name, amount) VALUES (p_bidder_name, v_amount) RETURNING auction_bids.id INTO v_id;
  UPDATE auction_state SET bidder_count = auction_state.bidder_count + (CASE WHEN v_new_bidder THEN 1 ELSE 0 END)
  RETURNING auction_state.bidder_count INTO v_bidders;

  SELECT * INTO v_bid FROM auction_bids_wire w WHERE w.id = v_id;
  -- At most ~250 bytes: names are 40 code points (160 bytes of UTF-8) at most.
  PERFORM pg_notify('auction_bids', json_build_object(
    'id', v_bid.id,
    'bidderName', v_bid.bidder_name,
    'amountCents', v_bid.amount_cents,
    'createdAt', v_bid.created_at,
    'bidders', v_bidders
  )::text);

  RETURN QUERY SELECT true, v_bid.id, v_bid.bidder_name, v_bid.amount_cents, v_bid.created_at, v_bidders, v_bid.amount_cents;
END;
$$;
