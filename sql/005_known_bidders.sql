-- The round's known bidders by one index probe per distinct name of the batch. 004 wrote that
-- lookup as EXISTS over the distinct names, which PostgreSQL plans as a hash semi-join over every
-- visible bid of the round: its cost grew with the round (1.1 ms a batch of 5 after 8,000 bids,
-- 4.6 ms at 35,000, the most of a batch's time). A LATERAL subquery with LIMIT 1 stays a nested
-- loop of index probes on (round_number, bidder_name). place_auction_bids is restated whole only
-- to call it; the lookup is a function of its own so that the next change to it is small.
CREATE FUNCTION auction_round_known_bidders(p_round_number bigint, p_names text[]) RETURNS text[]
LANGUAGE sql STABLE
AS $$
  SELECT coalesce(array_agg(n.name), '{}')
  FROM (SELECT DISTINCT unnest(p_names) AS name) n
  CROSS JOIN LATERAL (
    SELECT 1 FROM auction_bids b
    WHERE b.round_number = p_round_number AND b.bidder_name = n.name AND b.hidden_at IS NULL AND NOT b.name_blocked
    LIMIT 1
  ) known
$$;

-- As in 004, with the round's known bidders from auction_round_known_bidders.
CREATE OR REPLACE FUNCTION place_auction_bids(p_bids text, p_round_seconds integer, p_soft_close_seconds integer)
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
      v_known_names := auction_round_known_bidders(v_round.number, v_names);
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
