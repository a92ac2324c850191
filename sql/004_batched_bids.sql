-- Group commit (DESIGN.md 6c): an instance places the bids that arrived while its previous
-- placement was in flight together, in one transaction, in arrival order. Each bid is judged as
-- if alone, against the highest including the earlier bids of its batch, with the rounds, soft
-- close and blocked names applied per bid; one commit, and every accepted bid NOTIFYs at it.

-- The round a bid at p_now belongs to, under the auction_state lock and after advance_auction_round:
-- the current one while it is open, else the next, opened now (and the state's highest and bidder
-- count start afresh with it).
CREATE FUNCTION open_auction_round(p_now timestamptz, p_round_seconds integer) RETURNS auction_rounds
LANGUAGE plpgsql
AS $$
DECLARE
  v_round auction_rounds%ROWTYPE;
BEGIN
  SELECT r.* INTO v_round FROM auction_state s JOIN auction_rounds r ON r.number = s.round_number;
  IF FOUND AND v_round.closed_at IS NULL THEN
    RETURN v_round;
  END IF;
  v_round.number := coalesce(v_round.number, 0) + 1;
  v_round.opened_at := p_now;
  v_round.ends_at := CASE WHEN p_round_seconds > 0 THEN p_now + make_interval(secs => p_round_seconds) END;
  v_round.closed_at := NULL;
  INSERT INTO auction_rounds (number, opened_at, ends_at) VALUES (v_round.number, v_round.opened_at, v_round.ends_at);
  UPDATE auction_state SET round_number = v_round.number, high_amount = 0, bidder_count = 0;
  RETURN v_round;
END;
$$;

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

  v_round := open_auction_round(v_now, p_round_seconds);

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
-- `ordinal` (1-based) saying which, with place_auction_bid's columns, each as place_auction_bid
-- would have answered it placed alone at that point (the tests compare the two). Done in one pass
-- under the lock rather than by calling place_auction_bid per bid: the state, the blocked names and
-- the round's bidders are read once, the bids are judged in memory, and the accepted ones are
-- inserted by one statement, so a bid costs a fraction of a lone placement. The batch has one time,
-- taken under the lock: its bids are committed together.
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
  closed_round_bids integer
)
LANGUAGE plpgsql
AS $$
DECLARE
  v_names text[];
  v_keys text[];
  v_cents bigint[];
  v_blocked text[];
  v_now timestamptz;
  v_now_text text;
  v_judged boolean := false;
  v_closed_bids integer;
  v_round auction_rounds%ROWTYPE;
  v_round_changed boolean := false;
  v_high_cents bigint;
  v_bidders integer;
  v_moderation bigint;
  v_known_names text[];
  v_ids bigint[] := '{}';
  v_accepted integer[] := '{}';
  v_id bigint;
  v_sequence text := pg_get_serial_sequence('auction_bids', 'id');
BEGIN
  SELECT array_agg(b.value ->> 'name' ORDER BY b.ordinality), array_agg(b.value ->> 'key' ORDER BY b.ordinality),
    array_agg((b.value ->> 'cents')::bigint ORDER BY b.ordinality)
  INTO v_names, v_keys, v_cents
  FROM json_array_elements(p_bids::json) WITH ORDINALITY AS b;
  IF v_names IS NULL THEN
    RETURN;
  END IF;

  PERFORM 1 FROM auction_state FOR UPDATE;
  v_now := auction_clock();
  v_now_text := auction_time_text(v_now);
  SELECT coalesce(array_agg(n.name_key), '{}') INTO v_blocked FROM auction_blocked_names n WHERE n.name_key = ANY (v_keys);
  SELECT (s.high_amount * 100)::bigint, s.bidder_count, s.moderation_version INTO v_high_cents, v_bidders, v_moderation
  FROM auction_state s;
  SELECT r.* INTO v_round FROM auction_state s JOIN auction_rounds r ON r.number = s.round_number;

  FOR i IN 1..array_length(v_names, 1) LOOP
    -- A blocked name is refused before its bid touches the round, as place_auction_bid refuses it.
    IF v_keys[i] = ANY (v_blocked) THEN
      RETURN QUERY SELECT i, 'name_not_allowed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, v_bidders,
        v_high_cents, v_moderation, v_round.number, auction_time_text(v_round.ends_at), NULL::integer;
      CONTINUE;
    END IF;

    -- The first bid judged brings the round up to the batch's time, opening the next if it ended.
    v_closed_bids := NULL;
    IF NOT v_judged THEN
      v_judged := true;
      v_closed_bids := advance_auction_round(v_now, p_round_seconds);
      v_round := open_auction_round(v_now, p_round_seconds);
      -- Afresh when that opened the next round.
      SELECT (s.high_amount * 100)::bigint, s.bidder_count INTO v_high_cents, v_bidders FROM auction_state s;
      -- One index probe per distinct name (round_number, bidder_name), whatever the round's size.
      SELECT coalesce(array_agg(n.name), '{}') INTO v_known_names
      FROM (SELECT DISTINCT unnest(v_names) AS name) n
      WHERE EXISTS (
        SELECT 1 FROM auction_bids b
        WHERE b.round_number = v_round.number AND b.bidder_name = n.name AND b.hidden_at IS NULL AND NOT b.name_blocked
      );
    END IF;

    IF v_cents[i] <= v_high_cents THEN
      RETURN QUERY SELECT i, 'too_low'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, v_bidders,
        v_high_cents, v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids;
      CONTINUE;
    END IF;

    v_high_cents := v_cents[i];
    IF NOT v_names[i] = ANY (v_known_names) THEN
      v_bidders := v_bidders + 1;
      v_known_names := v_known_names || v_names[i];
    END IF;
    -- Ids taken in order under the lock, so they rise in commit order as a lone bid's do.
    v_id := nextval(v_sequence);
    v_ids := v_ids || v_id;
    v_accepted := v_accepted || i;
    -- Soft close: sniping in the last seconds only buys the others as many seconds to answer.
    IF v_round.ends_at IS NOT NULL AND v_round.ends_at - v_now < make_interval(secs => p_soft_close_seconds) THEN
      v_round.ends_at := v_now + make_interval(secs => p_soft_close_seconds);
      v_round_changed := true;
    END IF;
    PERFORM pg_notify('auction_bids', json_build_object(
      'id', v_id,
      'bidderName', v_names[i],
      'amountCents', v_cents[i],
      'createdAt', v_now_text,
      'bidders', v_bidders,
      'moderation', v_moderation,
      'round', v_round.number,
      'endsAt', auction_time_text(v_round.ends_at)
    )::text);
    RETURN QUERY SELECT i, 'accepted'::text, v_id, v_names[i], v_cents[i], v_now_text, v_bidders, v_cents[i],
      v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids;
  END LOOP;

  -- A bid the table's constraints refuse (the service's rules should have kept it out) fails the
  -- whole statement: the service then places the batch's bids one by one (bidBatcher.ts).
  IF array_length(v_ids, 1) > 0 THEN
    INSERT INTO auction_bids (id, bidder_name, bidder_key, amount, created_at, round_number)
    OVERRIDING SYSTEM VALUE
    SELECT a.id, v_names[a.ordinal], v_keys[a.ordinal], v_cents[a.ordinal]::numeric / 100, v_now, v_round.number
    FROM unnest(v_ids, v_accepted) AS a (id, ordinal);
  END IF;
  IF array_length(v_ids, 1) > 0 OR v_round_changed THEN
    UPDATE auction_state SET round_number = v_round.number, high_amount = v_high_cents::numeric / 100, bidder_count = v_bidders;
    UPDATE auction_rounds r SET ends_at = v_round.ends_at WHERE r.number = v_round.number;
  END IF;
END;
$$;
