-- The row place_auction_bids and place_auction_bid answer per bid, defined once. Both returned it
-- as a RETURNS TABLE of their own (11 and 12 columns), restated at every change of either; they
-- now return SETOF auction_placement (sql/functions/40_bids.sql). A function's result type cannot
-- be changed in place, so the two are dropped here and created again by sql/functions/ in the
-- same transaction. Their columns keep their names, types and order; a lone bid's answer gains
-- `ordinal` (1) in front, which callers reading columns by name do not see.
--
-- The type grows only by attributes added at its end (ALTER TYPE ... ADD ATTRIBUTE, in a numbered
-- migration): the functions returning it stay in place, and a caller of the previous release still
-- finds every column it reads (docs/design.md#7).

CREATE TYPE auction_placement AS (
  -- The bid's place in its batch, from 1; 1 for a lone bid.
  ordinal integer,
  -- 'accepted', 'too_low' or 'name_not_allowed'.
  outcome text,
  -- The accepted bid's id, name, amount and time; null when refused.
  id bigint,
  bidder_name text,
  amount_cents bigint,
  created_at text,
  -- The round's bidder count and highest after this bid; the moderation version it was judged at.
  bidders integer,
  highest_cents bigint,
  moderation bigint,
  -- The round the bid was judged in and its end (null: endless).
  round_number bigint,
  round_ends_at text,
  -- The bids of the round this bid's placement closed, or null when it closed none.
  closed_round_bids integer
);

-- IF EXISTS: a new database gets its functions only after its migrations.
DROP FUNCTION IF EXISTS place_auction_bid(text, text, bigint, integer, integer);
DROP FUNCTION IF EXISTS place_auction_bids(text, integer, integer);
