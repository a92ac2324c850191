-- Placing bids (docs/design.md#6c): group commit places the bids that arrived while an instance's
-- previous placement was in flight together, in one transaction, in arrival order; a lone bid is a
-- batch of one. Both answer one auction_placement row per bid (sql/008_auction_placement.sql).
--
-- The amount rule is the service's to state (BID_INCREMENT_CENTS and FIRST_BID_MIN_CENTS in
-- src/lib/auction/bidRules.ts): it comes with each call, as the round lengths do, and is stated
-- nowhere here. A bid wins when it is at least the round's highest visible bid plus the increment,
-- or, with no visible bid yet, at least the first bid's floor.

-- Whether a name already has a visible bid in the round (the bidder count), by one index probe on
-- (round_number, bidder_name) per distinct name, whatever the statistics say. Written as EXISTS
-- over the distinct names, PostgreSQL planned a hash semi-join over every visible bid of the round
-- (1.1 ms a batch of 5 after 8,000 bids, 4.6 ms at 35,000); and once ANALYZE has seen a few names
-- bid thousands of times, it prefers a sequential scan that expects to meet the name early, so a
-- name new to the round read the whole table (bench:realtime: 3 to 18 ms a placement, where 0.2 ms
-- was usual). The LATERAL subquery with LIMIT 1 and sequential scans forbidden leave the probe as
-- the plan (tests/realtime/bidderProbe.test.ts).
CREATE OR REPLACE FUNCTION auction_round_known_bidders(p_round_number bigint, p_names text[]) RETURNS text[]
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  -- plpgsql rather than sql, and a generic plan: planned once per session. A sql function is
  -- planned at every call, and a custom plan too (0.14 ms a call, measured, against 0.03 ms to run).
  RETURN (
    SELECT coalesce(array_agg(n.name), '{}')
    FROM (SELECT DISTINCT unnest(p_names) AS name) n
    CROSS JOIN LATERAL (
      SELECT 1 FROM auction_bids b
      WHERE b.round_number = p_round_number AND b.bidder_name = n.name AND b.hidden_at IS NULL AND NOT b.name_blocked
      LIMIT 1
    ) known
  );
END;
$$;

-- A batch: p_bids is a JSON array of {"name","key","cents"} in arrival order. One row per bid,
-- `ordinal` (1-based) saying which, each answered as if placed alone at that point: judged against
-- the highest including the earlier bids of its batch, with the rounds, soft close and blocked
-- names applied per bid. Done in one pass under the lock: the state, the blocked names and the
-- round's bidders are read once, the bids are judged in memory, and the accepted ones are inserted
-- by one statement, so a bid costs a fraction of a lone placement. The batch has one time, taken
-- under the lock: its bids are committed together, and every accepted bid NOTIFYs at the commit.
CREATE OR REPLACE FUNCTION place_auction_bids(
  p_bids text,
  p_round_seconds integer,
  p_soft_close_seconds integer,
  p_increment_cents bigint,
  p_first_bid_cents bigint
)
RETURNS SETOF auction_placement
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
    -- A blocked name is refused before its bid touches the round: it neither closes an ended round
    -- nor opens the next.
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

    -- 0 is the state of a round with no visible bid.
    IF v_cents[i] < (CASE WHEN v_high_cents = 0 THEN p_first_bid_cents ELSE v_high_cents + p_increment_cents END) THEN
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

-- A lone bid is a batch of one, so the rules are written once.
CREATE OR REPLACE FUNCTION place_auction_bid(
  p_bidder_name text,
  p_bidder_key text,
  p_amount_cents bigint,
  p_round_seconds integer,
  p_soft_close_seconds integer,
  p_increment_cents bigint,
  p_first_bid_cents bigint
)
RETURNS SETOF auction_placement
LANGUAGE sql
AS $$
  SELECT * FROM place_auction_bids(
    json_build_array(json_build_object('name', p_bidder_name, 'key', p_bidder_key, 'cents', p_amount_cents))::text,
    p_round_seconds,
    p_soft_close_seconds,
    p_increment_cents,
    p_first_bid_cents
  )
$$;

-- The calls of the release before the amount rule came with each call (docs/design.md#7: compatible
-- for one release), for its instances during a rolling deploy or a rollback: that release's own
-- rule, a bid strictly above the highest (1 cent more; any positive first bid). They are its rule,
-- not today's: a change of BID_INCREMENT_CENTS leaves them alone, and the release after next drops
-- them in a numbered migration.
CREATE OR REPLACE FUNCTION place_auction_bids(p_bids text, p_round_seconds integer, p_soft_close_seconds integer)
RETURNS SETOF auction_placement
LANGUAGE sql
AS $$
  SELECT * FROM place_auction_bids(p_bids, p_round_seconds, p_soft_close_seconds, 1, 1)
$$;

CREATE OR REPLACE FUNCTION place_auction_bid(
  p_bidder_name text,
  p_bidder_key text,
  p_amount_cents bigint,
  p_round_seconds integer,
  p_soft_close_seconds integer
)
RETURNS SETOF auction_placement
LANGUAGE sql
AS $$
  SELECT * FROM place_auction_bid(p_bidder_name, p_bidder_key, p_amount_cents, p_round_seconds, p_soft_close_seconds, 1, 1)
$$;
