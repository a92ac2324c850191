-- Moderation (docs/design.md#6a): the operator hides and restores bids and blocks names. Visible bids
-- are those neither hidden nor of a blocked name; the highest, the bidder count, snapshots and
-- resumes follow them. The actions are moderate_auction() (sql/functions/50_moderation.sql).

-- The name as blocking compares it (NFKC, case folded), computed by the service (nameKey.ts):
-- PostgreSQL's lower() under the C locale folds ASCII only. Rows from before this migration get
-- theirs when the service opens the store (fillBidderKeys in queries.ts).
ALTER TABLE auction_bids
  ADD COLUMN bidder_key text,
  ADD COLUMN hidden_at timestamptz,
  ADD COLUMN name_blocked boolean NOT NULL DEFAULT false;

CREATE INDEX auction_bids_bidder_key_idx ON auction_bids (bidder_key);
CREATE INDEX auction_bids_unkeyed_idx ON auction_bids (id) WHERE bidder_key IS NULL;
-- The highest visible bid: no longer always the newest once a restore brings an old maximum back.
CREATE INDEX auction_bids_visible_amount_idx ON auction_bids (amount DESC, id)
  WHERE hidden_at IS NULL AND NOT name_blocked;

ALTER TABLE auction_state ADD COLUMN moderation_version bigint NOT NULL DEFAULT 0;

CREATE TABLE auction_blocked_names (
  name_key text PRIMARY KEY,
  -- As the operator typed it, for the console.
  bidder_name text NOT NULL,
  blocked_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE auction_moderation_log (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  -- The operator session's id (admin/session.ts), never the cookie itself.
  session_id text NOT NULL,
  action text NOT NULL CONSTRAINT auction_moderation_log_action CHECK (action IN ('hide', 'restore', 'block', 'unblock')),
  bid_id bigint REFERENCES auction_bids (id),
  bidder_name text NOT NULL,
  reason text CONSTRAINT auction_moderation_log_reason_length CHECK (char_length(reason) <= 200),
  CONSTRAINT auction_moderation_log_bid_actions CHECK ((action IN ('hide', 'restore')) = (bid_id IS NOT NULL))
);

-- 001's place_auction_bid(), where 001 as released created it: a bid takes the name's key since.
-- IF EXISTS: on a database created since, no numbered migration created a function.
DROP FUNCTION IF EXISTS place_auction_bid(text, bigint);
