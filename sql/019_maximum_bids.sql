-- compatible-with: 18
-- Secret maximum bids on eBay's rule (docs/decisions/2026-11-28-maximum-bids.md): the service bids
-- for a maximum's owner up to it, decided by place_auction_bids() under the auction's lock. Only a
-- round's leading maximum matters (a beaten one is spent), so at most one row per round is open.
-- The owner is the SHA-256 of the browser's bidder secret, in hex; the secret is never stored.
-- Expand only: a new table and a new attribute at the end of the placement row, which the release
-- before reads by column name and never sees.
CREATE TABLE auction_maximums (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  round_number bigint NOT NULL,
  owner_hash text NOT NULL CHECK (owner_hash ~ '^[0-9a-f]{64}$'),
  bidder_name text NOT NULL,
  bidder_key text NOT NULL,
  maximum_cents bigint NOT NULL CHECK (maximum_cents > 0),
  created_at timestamptz NOT NULL,
  ended_at timestamptz,
  ended_reason text CHECK (ended_reason IN ('beaten', 'spent', 'round_ended', 'moderated')),
  CHECK ((ended_at IS NULL) = (ended_reason IS NULL))
);
-- The round's one leading maximum.
CREATE UNIQUE INDEX auction_maximums_leading_idx ON auction_maximums (round_number) WHERE ended_at IS NULL;
-- An owner's maximum in the round (the myMaximum question).
CREATE INDEX auction_maximums_owner_idx ON auction_maximums (owner_hash, round_number);

-- A plain bid stored and at once passed by a maximum's automatic bid (answered outbidByMaximum).
ALTER TYPE auction_placement ADD ATTRIBUTE outbid_by_maximum boolean;
