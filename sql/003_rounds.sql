-- Rounds (DESIGN.md 6b): a round opens with its first accepted bid and ends a configured number of
-- seconds later; a bid accepted with less than the soft-close time left moves the end to its own
-- time plus the soft-close time. The database's clock decides, under the auction_state row lock
-- that bids and moderation take. The high, the bidder count, snapshots and resumes are the current
-- round's. A round's end is recorded ("closed") by the first call to see it passed: the bid that
-- opens the next round, or settle_auction_round(), which every instance calls when its timer for
-- the end fires. The winner is never stored: it is the round's highest visible bid, so a hidden
-- winning bid hands the round to the next visible one. The durations come from each call (the
-- service's AUCTION_ROUND_SECONDS and AUCTION_SOFT_CLOSE_SECONDS); 0 seconds is one endless round.

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

-- The time every wire field uses: UTC ISO 8601 with milliseconds, whatever the session's zone.
CREATE FUNCTION auction_time_text(p_time timestamptz) RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- The auction's clock: the database's own, to the millisecond (what the wire carries, so an end
-- a page or an instance reads is the end itself). A test session may set auction.test_now to step
-- it (tests/realtime/roundProperties.test.ts); the service never sets it.
CREATE FUNCTION auction_clock() RETURNS timestamptz
LANGUAGE sql VOLATILE
AS $$
  SELECT date_trunc('milliseconds',
    coalesce(nullif(current_setting('auction.test_now', true), '')::timestamptz, clock_timestamp()))
$$;

-- The wire columns as before, and the round after them (a view may only gain columns).
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

-- Brings the current round up to p_now; the caller holds the auction_state lock. Rounds on: an
-- endless round gets its end (opened_at plus the length). A round whose end has passed is closed
-- and announced (NOTIFY, in commit order with the bids), rounds on or off: an end that passed
-- while no instance ran is still a sale. Rounds off: a round still open becomes endless. Returns
-- the number of bids of the round it closed, or null when it closed none.
CREATE FUNCTION advance_auction_round(p_now timestamptz, p_round_seconds integer) RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  v_round auction_rounds%ROWTYPE;
  v_bids integer;
BEGIN
  SELECT r.* INTO v_round FROM auction_state s JOIN auction_rounds r ON r.number = s.round_number;
  IF NOT FOUND OR v_round.closed_at IS NOT NULL THEN
    RETURN NULL;
  END IF;
  IF p_round_seconds = 0 AND (v_round.ends_at IS NULL OR p_now < v_round.ends_at) THEN
    IF v_round.ends_at IS NOT NULL THEN
      UPDATE auction_rounds r SET ends_at = NULL WHERE r.number = v_round.number;
    END IF;
    RETURN NULL;
  END IF;
  IF v_round.ends_at IS NULL THEN
    v_round.ends_at := v_round.opened_at + make_interval(secs => p_round_seconds);
    UPDATE auction_rounds r SET ends_at = v_round.ends_at WHERE r.number = v_round.number;
  END IF;
  IF p_now < v_round.ends_at THEN
    RETURN NULL;
  END IF;

  UPDATE auction_rounds r SET closed_at = p_now WHERE r.number = v_round.number;
  SELECT count(*) INTO v_bids FROM auction_bids b WHERE b.round_number = v_round.number;
  PERFORM pg_notify('auction_bids', json_build_object(
    'roundClosed', v_round.number,
    'moderation', (SELECT s.moderation_version FROM auction_state s)
  )::text);
  RETURN v_bids;
END;
$$;

-- Closes the current round if its end has passed, as a bid arriving now would. Called by every
-- instance when its timer for the end fires, so the end is announced with or without a new bid;
-- the first call records it, the others find it closed. Answers where the round stands.
CREATE FUNCTION settle_auction_round(p_round_seconds integer)
RETURNS TABLE (round_number bigint, ends_at text, closed boolean, closed_round_bids integer, now text)
LANGUAGE plpgsql
AS $$
DECLARE
  v_now timestamptz;
  v_closed_bids integer;
BEGIN
  PERFORM 1 FROM auction_state FOR UPDATE;
  v_now := auction_clock();
  v_closed_bids := advance_auction_round(v_now, p_round_seconds);
  RETURN QUERY
  SELECT s.round_number, auction_time_text(r.ends_at), r.closed_at IS NOT NULL, v_closed_bids, auction_time_text(v_now)
  FROM auction_state s LEFT JOIN auction_rounds r ON r.number = s.round_number;
END;
$$;

DROP FUNCTION place_auction_bid(text, text, bigint);

-- As in 002, and: under the lock the round is brought up to the bid's time (closing an ended one);
-- with no open round the bid opens the next, so it is judged against that round's highest (none);
-- an accepted bid in the soft-close window moves the end. The answer and the notification carry
-- the bid's round and its end.
CREATE FUNCTION place_auction_bid(
  p_bidder_name text,
  p_bidder_key text,
  p_amount_cents bigint,
  p_round_seconds integer,
  p_soft_close_seconds integer
)
RETURNS TABLE (
  outcome text,
  id bigint,
  bidder_name text,
  amount_cents bigint,
  created_at text,
  bidders integer,
  highest_cents bigint,
  moderation bigint,
  round_number bigint,
  round_ends_at text,
  closed_round_bids integer
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_amount numeric(12, 2) := p_amount_cents::numeric / 100;
  v_now timestamptz;
  v_closed_bids integer;
  v_round auction_rounds%ROWTYPE;
  v_id bigint;
  v_new_bidder boolean;
  v_bidders integer;
  v_moderation bigint;
  v_bid auction_bids_wire%ROWTYPE;
BEGIN
  IF EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = p_bidder_key) THEN
    RETURN QUERY
    SELECT 'name_not_allowed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count,
      (s.high_amount * 100)::bigint, s.moderation_version, s.round_number, auction_time_text(r.ends_at), NULL::integer
    FROM auction_state s LEFT JOIN auction_rounds r ON r.number = s.round_number;
    RETURN;
  END IF;

  -- The lock first: the round and the highest are judged at the bid's own time, one bid at a time.
  PERFORM 1 FROM auction_state FOR UPDATE;
  v_now := auction_clock();
  v_closed_bids := advance_auction_round(v_now, p_round_seconds);

  SELECT r.* INTO v_round FROM auction_state s JOIN auction_rounds r ON r.number = s.round_number;
  IF NOT FOUND OR v_round.closed_at IS NOT NULL THEN
    v_round.number := coalesce(v_round.number, 0) + 1;
    v_round.opened_at := v_now;
    v_round.ends_at := CASE WHEN p_round_seconds > 0 THEN v_now + make_interval(secs => p_round_seconds) END;
    v_round.closed_at := NULL;
    INSERT INTO auction_rounds (number, opened_at, ends_at) VALUES (v_round.number, v_round.opened_at, v_round.ends_at);
    UPDATE auction_state SET round_number = v_round.number, high_amount = 0, bidder_count = 0;
  END IF;

  UPDATE auction_state SET high_amount = v_amount WHERE auction_state.high_amount < v_amount;
  IF NOT FOUND THEN
    RETURN QUERY
    SELECT 'too_low'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count,
      (s.high_amount * 100)::bigint, s.moderation_version, s.round_number, auction_time_text(v_round.ends_at),
      v_closed_bids
    FROM auction_state s;
    RETURN;
  END IF;

  IF EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = p_bidder_key) THEN
    RAISE EXCEPTION 'name_not_allowed: blocked while the bid waited' USING ERRCODE = 'NSB01';
  END IF;

  v_new_bidder := NOT EXISTS (
    SELECT 1 FROM auction_bids b
    WHERE b.round_number = v_round.number AND b.bidder_name = p_bidder_name
      AND b.hidden_at IS NULL AND NOT b.name_blocked
  );
  INSERT INTO auction_bids (bidder_name, bidder_key, amount, created_at, round_number)
  VALUES (p_bidder_name, p_bidder_key, v_amount, v_now, v_round.number) RETURNING auction_bids.id INTO v_id;
  UPDATE auction_state SET bidder_count = auction_state.bidder_count + (CASE WHEN v_new_bidder THEN 1 ELSE 0 END)
  RETURNING auction_state.bidder_count, auction_state.moderation_version INTO v_bidders, v_moderation;

  -- Soft close: sniping in the last seconds only buys the others as many seconds to answer.
  IF v_round.ends_at IS NOT NULL AND v_round.ends_at - v_now < make_interval(secs => p_soft_close_seconds) THEN
    v_round.ends_at := v_now + make_interval(secs => p_soft_close_seconds);
    UPDATE auction_rounds r SET ends_at = v_round.ends_at WHERE r.number = v_round.number;
  END IF;

  SELECT * INTO v_bid FROM auction_bids_wire w WHERE w.id = v_id;
  PERFORM pg_notify('auction_bids', json_build_object(
    'id', v_bid.id,
    'bidderName', v_bid.bidder_name,
    'amountCents', v_bid.amount_cents,
    'createdAt', v_bid.created_at,
    'bidders', v_bidders,
    'moderation', v_moderation,
    'round', v_round.number,
    'endsAt', auction_time_text(v_round.ends_at)
  )::text);

  RETURN QUERY SELECT 'accepted'::text, v_bid.id, v_bid.bidder_name, v_bid.amount_cents, v_bid.created_at, v_bidders,
    v_bid.amount_cents, v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids;
END;
$$;

-- As in 002, but the highest and the bidder count it recomputes are the current round's.
CREATE OR REPLACE FUNCTION moderate_auction(
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
    high_amount = coalesce((
      SELECT max(b.amount) FROM auction_bids b
      WHERE b.round_number = auction_state.round_number AND b.hidden_at IS NULL AND NOT b.name_blocked), 0),
    bidder_count = (
      SELECT count(DISTINCT b.bidder_name) FROM auction_bids b
      WHERE b.round_number = auction_state.round_number AND b.hidden_at IS NULL AND NOT b.name_blocked),
    moderation_version = auction_state.moderation_version + 1
  RETURNING auction_state.moderation_version INTO v_moderation;

  INSERT INTO auction_moderation_log (session_id, action, bid_id, bidder_name, reason)
  VALUES (p_session_id, p_action, CASE WHEN p_action IN ('hide', 'restore') THEN p_bid_id END, v_name, p_reason);

  PERFORM pg_notify('auction_bids', json_build_object('moderation', v_moderation)::text);
  RETURN QUERY SELECT 'done'::text, v_moderation, v_name;
END;
$$;
