-- Moderation (DESIGN.md 6a): the operator hides and restores bids and blocks names. Visible bids
-- are those neither hidden nor of a blocked name; the highest, the bidder count, snapshots and
-- resumes follow them. Every action takes the auction_state row lock that bids take, recomputes
-- the state from the visible bids, bumps moderation_version, writes its audit row and NOTIFYs,
-- all in one transaction.

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

-- The wire columns as before, and what moderation needs after them (a view may only gain columns).
CREATE OR REPLACE VIEW auction_bids_wire AS
SELECT
  id,
  bidder_name,
  (amount * 100)::bigint AS amount_cents,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  hidden_at IS NOT NULL AS hidden,
  name_blocked,
  hidden_at IS NULL AND NOT name_blocked AS visible
FROM auction_bids;

DROP FUNCTION place_auction_bid(text, bigint);

-- As in 001, and: a blocked name is refused (name_not_allowed), the new-bidder test counts visible
-- bids only, and the answer and the notification carry the moderation version. The blocked test
-- runs twice: before the lock, to answer name_not_allowed ahead of too_low without waiting, and
-- after it (a fresh statement sees a block that committed while this bid waited), where it raises
-- so the state update rolls back.
CREATE FUNCTION place_auction_bid(p_bidder_name text, p_bidder_key text, p_amount_cents bigint)
RETURNS TABLE (
  outcome text,
  id bigint,
  bidder_name text,
  amount_cents bigint,
  created_at text,
  bidders integer,
  highest_cents bigint,
  moderation bigint
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_amount numeric(12, 2) := p_amount_cents::numeric / 100;
  v_id bigint;
  v_new_bidder boolean;
  v_bidders integer;
  v_moderation bigint;
  v_bid auction_bids_wire%ROWTYPE;
BEGIN
  IF EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = p_bidder_key) THEN
    RETURN QUERY
    SELECT 'name_not_allowed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count,
      (s.high_amount * 100)::bigint, s.moderation_version
    FROM auction_state s;
    RETURN;
  END IF;

  UPDATE auction_state SET high_amount = v_amount WHERE auction_state.high_amount < v_amount;
  IF NOT FOUND THEN
    RETURN QUERY
    SELECT 'too_low'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count,
      (s.high_amount * 100)::bigint, s.moderation_version
    FROM auction_state s;
    RETURN;
  END IF;

  IF EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = p_bidder_key) THEN
    RAISE EXCEPTION 'name_not_allowed: blocked while the bid waited' USING ERRCODE = 'NSB01';
  END IF;

  v_new_bidder := NOT EXISTS (
    SELECT 1 FROM auction_bids b
    WHERE b.bidder_name = p_bidder_name AND b.hidden_at IS NULL AND NOT b.name_blocked
  );
  INSERT INTO auction_bids (bidder_name, bidder_key, amount)
  VALUES (p_bidder_name, p_bidder_key, v_amount) RETURNING auction_bids.id INTO v_id;
  UPDATE auction_state SET bidder_count = auction_state.bidder_count + (CASE WHEN v_new_bidder THEN 1 ELSE 0 END)
  RETURNING auction_state.bidder_count, auction_state.moderation_version INTO v_bidders, v_moderation;

  SELECT * INTO v_bid FROM auction_bids_wire w WHERE w.id = v_id;
  PERFORM pg_notify('auction_bids', json_build_object(
    'id', v_bid.id,
    'bidderName', v_bid.bidder_name,
    'amountCents', v_bid.amount_cents,
    'createdAt', v_bid.created_at,
    'bidders', v_bidders,
    'moderation', v_moderation
  )::text);

  RETURN QUERY SELECT 'accepted'::text, v_bid.id, v_bid.bidder_name, v_bid.amount_cents, v_bid.created_at, v_bidders,
    v_bid.amount_cents, v_moderation;
END;
$$;

-- One moderation action: p_action 'hide' or 'restore' (p_bid_id) or 'block' or 'unblock'
-- (p_bidder_name as typed, p_name_key its key). Outcome 'done', or 'no_such_bid', 'unchanged'
-- (already so) without any write.
CREATE FUNCTION moderate_auction(
  p_action text,
  p_bid_id bigint,
  p_bidder_name text,
  p_name_key text,
  p_reason text,
  p_session_id text
)
RETURNS TABLE (outcome text, moderation bigint, bidder_name text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_name text := p_bidder_name;
  v_changed boolean;
  v_moderation bigint;
BEGIN
  -- The bids' lock: no bid is placed between the effect and the recount.
  PERFORM 1 FROM auction_state FOR UPDATE;

  IF p_action IN ('hide', 'restore') THEN
    SELECT b.bidder_name INTO v_name FROM auction_bids b WHERE b.id = p_bid_id;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'no_such_bid'::text, s.moderation_version, NULL::text FROM auction_state s;
      RETURN;
    END IF;
    IF p_action = 'hide' THEN
      UPDATE auction_bids b SET hidden_at = now() WHERE b.id = p_bid_id AND b.hidden_at IS NULL;
    ELSE
      UPDATE auction_bids b SET hidden_at = NULL WHERE b.id = p_bid_id AND b.hidden_at IS NOT NULL;
    END IF;
    v_changed := FOUND;
  ELSIF p_action = 'block' THEN
    INSERT INTO auction_blocked_names (name_key, bidder_name) VALUES (p_name_key, p_bidder_name)
    ON CONFLICT (name_key) DO NOTHING;
    v_changed := FOUND;
    IF v_changed THEN
      UPDATE auction_bids b SET name_blocked = true WHERE b.bidder_key = p_name_key;
    END IF;
  ELSIF p_action = 'unblock' THEN
    DELETE FROM auction_blocked_names n WHERE n.name_key = p_name_key RETURNING n.bidder_name INTO v_name;
    v_changed := FOUND;
    IF v_changed THEN
      UPDATE auction_bids b SET name_blocked = false WHERE b.bidder_key = p_name_key;
    END IF;
  ELSE
    RAISE EXCEPTION 'unknown moderation action %', p_action USING ERRCODE = '22023';
  END IF;

  IF NOT v_changed THEN
    RETURN QUERY SELECT 'unchanged'::text, s.moderation_version, v_name FROM auction_state s;
    RETURN;
  END IF;

  UPDATE auction_state SET
    high_amount = coalesce(
      (SELECT max(b.amount) FROM auction_bids b WHERE b.hidden_at IS NULL AND NOT b.name_blocked), 0),
    bidder_count = (
      SELECT count(DISTINCT b.bidder_name) FROM auction_bids b WHERE b.hidden_at IS NULL AND NOT b.name_blocked),
    moderation_version = auction_state.moderation_version + 1
  RETURNING auction_state.moderation_version INTO v_moderation;

  INSERT INTO auction_moderation_log (session_id, action, bid_id, bidder_name, reason)
  VALUES (p_session_id, p_action, CASE WHEN p_action IN ('hide', 'restore') THEN p_bid_id END, v_name, p_reason);

  PERFORM pg_notify('auction_bids', json_build_object('moderation', v_moderation)::text);
  RETURN QUERY SELECT 'done'::text, v_moderation, v_name;
END;
$$;
