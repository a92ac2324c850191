-- Group commit (DESIGN.md 6c): an instance places the bids that arrived while its previous
-- placement was in flight together, in one transaction, in arrival order. Each bid is judged as
-- if alone, against the highest including the earlier bids of its batch, with the rounds, soft
-- close and blocked names applied per bid; one commit, and every accepted bid NOTIFYs at it.

-- As in 003, but a block that committed while the bid waited for the lock is found right after
-- the lock is taken, before the bid writes anything, and answered as name_not_allowed instead of
-- raising: a raise would undo the batch's earlier bids too.
CREATE OR REPLACE FUNCTION place_auction_bid(
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
  -- Twice: before the lock, to answer without waiting for it; under it, where it is final.
  FOR i IN 1..2 LOOP
    IF i = 2 THEN
      -- The lock first: the round and the highest are judged at the bid's own time, one bid at a time.
      PERFORM 1 FROM auction_state FOR UPDATE;
    END IF;
    IF EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = p_bidder_key) THEN
      RETURN QUERY
      SELECT 'name_not_allowed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, s.bidder_count,
        (s.high_amount * 100)::bigint, s.moderation_version, s.round_number, auction_time_text(r.ends_at), NULL::integer
      FROM auction_state s LEFT JOIN auction_rounds r ON r.number = s.round_number;
      RETURN;
    END IF;
  END LOOP;

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

-- A batch: p_bids is a JSON array of {"name","key","cents"} in arrival order. One row per bid,
-- `ordinal` (1-based) saying which, with place_auction_bid's columns. A bid whose placement
-- raises (a constraint the service's rules should have kept it from) is undone alone, to the
-- savepoint of its own block, and answered 'error' with its SQLSTATE in `outcome_detail`, as it
-- would have failed alone; the others stand.
CREATE FUNCTION place_auction_bids(p_bids text, p_round_seconds integer, p_soft_close_seconds integer)
RETURNS TABLE (
  ordinal integer,
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
  closed_round_bids integer,
  outcome_detail text
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_bid record;
BEGIN
  FOR v_bid IN
    SELECT b.value ->> 'name' AS name, b.value ->> 'key' AS key, (b.value ->> 'cents')::bigint AS cents, b.ordinality
    FROM json_array_elements(p_bids::json) WITH ORDINALITY AS b
  LOOP
    BEGIN
      RETURN QUERY
      SELECT v_bid.ordinality::integer, p.*, NULL::text
      FROM place_auction_bid(v_bid.name, v_bid.key, v_bid.cents, p_round_seconds, p_soft_close_seconds) p;
    EXCEPTION WHEN OTHERS THEN
      RETURN QUERY
      SELECT v_bid.ordinality::integer, 'error'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::integer,
        NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::integer, SQLSTATE::text;
    END;
  END LOOP;
END;
$$;
