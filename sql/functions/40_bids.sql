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

-- A batch: p_bids is a JSON array in arrival order of plain bids {"name","key","cents"} and
-- maximums {"name","key","maximum","owner"} (owner: the hex SHA-256 of the browser's bidder secret).
-- One row per entry, `ordinal` (1-based) saying which, each answered as if placed alone at that
-- point: judged against the highest including the earlier entries of its batch, with the rounds,
-- soft close, blocked names and the round's leading maximum applied per entry. Done in one pass
-- under the lock: the state, the blocked names, the round's bidders and its leading maximum are
-- read once, the entries are judged in memory, and the stored bids are inserted by one statement,
-- so a bid costs a fraction of a lone placement. The batch has one time, taken under the lock: its
-- bids are committed together, and every stored bid NOTIFYs at the commit.
--
-- Maximums follow eBay's rule (docs/decisions/2026-11-28-maximum-bids.md): the visible price is
-- the second-highest maximum plus the increment, capped at the leader's maximum; of equal maximums
-- the earlier wins; a bid below the leading maximum is answered at once by its automatic bid, a
-- bid like any other (it NOTIFYs, counts its bidder and moves a soft close). A plain leader's
-- maximum is its bid. Only the round's leading maximum is kept open (auction_maximums): a beaten
-- one is spent.
--
-- p_answers_maximums: the caller reads the answers of maximums ('outbid_by_maximum',
-- 'maximum_set', 'maximum_raised', 'maximum_too_low'). The previous release's calls (below) do
-- not, and get 'too_low' where a tie with a maximum kept their bid out; they never send one.
CREATE OR REPLACE FUNCTION place_auction_bids(
  p_bids text,
  p_round_seconds integer,
  p_soft_close_seconds integer,
  p_increment_cents bigint,
  p_first_bid_cents bigint,
  p_answers_maximums boolean
)
RETURNS SETOF auction_placement
LANGUAGE plpgsql
AS $$
DECLARE
  v_names text[];
  v_keys text[];
  v_cents bigint[];
  v_maximums bigint[];
  v_owners text[];
  v_has_maximums boolean;
  v_blocked text[];
  v_now timestamptz;
  v_now_text text;
  v_judged boolean := false;
  v_closed_bids integer;
  v_round auction_rounds%ROWTYPE;
  v_round_changed boolean := false;
  v_high_cents bigint;
  v_high_key text;
  v_bidders integer;
  v_moderation bigint;
  v_known_names text[];
  v_lead auction_maximums%ROWTYPE;
  v_min_cents bigint;
  v_rival_cents bigint;
  -- What one entry stores, in order: its own bid first when v_own, then an automatic bid.
  v_store_names text[];
  v_store_keys text[];
  v_store_cents bigint[];
  v_own boolean;
  v_own_id bigint;
  v_outcome text;
  v_outbid boolean;
  v_ids bigint[] := '{}';
  v_insert_names text[] := '{}';
  v_insert_keys text[] := '{}';
  v_insert_cents bigint[] := '{}';
  v_id bigint;
  v_sequence text := pg_get_serial_sequence('auction_bids', 'id');
BEGIN
  -- One typed read of the batch: five `->>` lookups an entry cost 6 µs a bid more (bench:realtime).
  SELECT array_agg(b.name ORDER BY b.ordinality), array_agg(b.key ORDER BY b.ordinality),
    array_agg(b.cents ORDER BY b.ordinality), array_agg(b.maximum ORDER BY b.ordinality),
    array_agg(b.owner ORDER BY b.ordinality), bool_or(b.owner IS NOT NULL)
  INTO v_names, v_keys, v_cents, v_maximums, v_owners, v_has_maximums
  FROM ROWS FROM (json_to_recordset(p_bids::json) AS (name text, key text, cents bigint, maximum bigint, owner text))
    WITH ORDINALITY AS b (name, key, cents, maximum, owner, ordinality);
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
        v_high_cents, v_moderation, v_round.number, auction_time_text(v_round.ends_at), NULL::integer, NULL::boolean;
      CONTINUE;
    END IF;

    -- The first entry judged brings the round up to the batch's time, opening the next if it ended.
    v_closed_bids := NULL;
    IF NOT v_judged THEN
      v_judged := true;
      v_closed_bids := advance_auction_round(v_now, p_round_seconds);
      v_round := open_auction_round(v_now, p_round_seconds);
      -- Afresh when that opened the next round.
      SELECT (s.high_amount * 100)::bigint, s.bidder_count INTO v_high_cents, v_bidders FROM auction_state s;
      SELECT m.* INTO v_lead FROM auction_maximums m WHERE m.round_number = v_round.number AND m.ended_at IS NULL;
      -- The leading maximum's automatic bids carry its name: its bidder is known like the batch's.
      -- Only when there is one: a null among the names cost 2 to 4 times the batch (measured).
      v_known_names := auction_round_known_bidders(v_round.number,
        CASE WHEN v_lead.id IS NULL THEN v_names ELSE v_names || v_lead.bidder_name END);
      -- Whose bid is the highest matters only to a maximum (a plain leader's maximum is its bid).
      IF v_has_maximums THEN
        SELECT b.bidder_key INTO v_high_key FROM auction_bids b
        WHERE b.round_number = v_round.number AND b.hidden_at IS NULL AND NOT b.name_blocked
        ORDER BY b.amount DESC, b.id LIMIT 1;
      END IF;
    END IF;

    -- 0 is the state of a round with no visible bid.
    v_min_cents := CASE WHEN v_high_cents = 0 THEN p_first_bid_cents ELSE v_high_cents + p_increment_cents END;
    IF coalesce(v_maximums[i], v_cents[i]) < v_min_cents THEN
      RETURN QUERY SELECT i, 'too_low'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, v_bidders,
        v_high_cents, v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids, NULL::boolean;
      CONTINUE;
    END IF;

    -- A plain bid with no maximum in the round, the usual case: stored and answered as the release
    -- before maximums did, without the arrays an automatic bid needs.
    IF v_lead.id IS NULL AND v_owners[i] IS NULL THEN
      v_high_cents := v_cents[i];
      v_high_key := v_keys[i];
      IF NOT v_names[i] = ANY (v_known_names) THEN
        v_bidders := v_bidders + 1;
        v_known_names := v_known_names || v_names[i];
      END IF;
      v_id := nextval(v_sequence);
      v_ids := v_ids || v_id;
      v_insert_names := v_insert_names || v_names[i];
      v_insert_keys := v_insert_keys || v_keys[i];
      v_insert_cents := v_insert_cents || v_cents[i];
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
        v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids, NULL::boolean;
      CONTINUE;
    END IF;

    v_store_names := '{}';
    v_store_keys := '{}';
    v_store_cents := '{}';
    v_own := false;
    v_outbid := NULL;
    IF v_owners[i] IS NULL THEN
      -- A plain bid.
      v_outcome := 'accepted';
      IF v_lead.id IS NULL OR v_lead.bidder_key = v_keys[i] OR v_cents[i] <> v_lead.maximum_cents THEN
        v_own := true;
        v_store_names := ARRAY[v_names[i]];
        v_store_keys := ARRAY[v_keys[i]];
        v_store_cents := ARRAY[v_cents[i]];
      END IF;
      IF v_lead.id IS NULL THEN
        NULL;
      ELSIF v_lead.bidder_key = v_keys[i] THEN
        -- The leader bidding for itself: at its maximum or above, the maximum has nothing left to do.
        IF v_cents[i] >= v_lead.maximum_cents THEN
          UPDATE auction_maximums m SET ended_at = v_now, ended_reason = 'spent' WHERE m.id = v_lead.id;
          v_lead := NULL;
        END IF;
      ELSIF v_cents[i] > v_lead.maximum_cents THEN
        UPDATE auction_maximums m SET ended_at = v_now, ended_reason = 'beaten' WHERE m.id = v_lead.id;
        v_lead := NULL;
      ELSE
        -- Below the maximum: stored, then answered. Equal: the earlier maximum wins, the bid is not stored.
        v_store_names := v_store_names || v_lead.bidder_name;
        v_store_keys := v_store_keys || v_lead.bidder_key;
        v_store_cents := v_store_cents || least(v_lead.maximum_cents, v_cents[i] + p_increment_cents);
        IF v_own THEN
          v_outbid := true;
        ELSE
          v_outcome := 'outbid_by_maximum';
        END IF;
      END IF;
    ELSIF v_lead.id IS NOT NULL AND v_lead.owner_hash = v_owners[i] THEN
      -- Raising one's own leading maximum never moves the price.
      IF v_maximums[i] <= v_lead.maximum_cents THEN
        v_outcome := 'maximum_too_low';
      ELSE
        UPDATE auction_maximums m SET maximum_cents = v_maximums[i] WHERE m.id = v_lead.id;
        v_lead.maximum_cents := v_maximums[i];
        v_outcome := 'maximum_raised';
      END IF;
    ELSIF v_lead.id IS NOT NULL AND v_lead.bidder_key = v_keys[i] THEN
      -- The leading maximum's name from another browser: a contest would bid that name against its
      -- own maximum and show the sender how far it goes. A name bids automatically from one browser.
      v_outcome := 'name_leads';
    ELSIF v_lead.id IS NULL AND v_high_key = v_keys[i] THEN
      -- The name leads by a plain bid: the maximum stands behind it, the price stays.
      INSERT INTO auction_maximums (round_number, owner_hash, bidder_name, bidder_key, maximum_cents, created_at)
      VALUES (v_round.number, v_owners[i], v_names[i], v_keys[i], v_maximums[i], v_now)
      RETURNING * INTO v_lead;
      v_outcome := 'maximum_set';
    ELSE
      -- A contest with the leading maximum, or with a plain leader whose maximum is its bid.
      v_rival_cents := CASE WHEN v_lead.id IS NOT NULL THEN v_lead.maximum_cents WHEN v_high_cents > 0 THEN v_high_cents END;
      IF v_rival_cents IS NULL OR v_maximums[i] > v_rival_cents THEN
        v_own := true;
        v_store_names := ARRAY[v_names[i]];
        v_store_keys := ARRAY[v_keys[i]];
        v_store_cents := ARRAY[CASE WHEN v_rival_cents IS NULL THEN v_min_cents
          ELSE greatest(v_min_cents, least(v_maximums[i], v_rival_cents + p_increment_cents)) END];
        IF v_lead.id IS NOT NULL THEN
          UPDATE auction_maximums m SET ended_at = v_now, ended_reason = 'beaten' WHERE m.id = v_lead.id;
        END IF;
        INSERT INTO auction_maximums (round_number, owner_hash, bidder_name, bidder_key, maximum_cents, created_at)
        VALUES (v_round.number, v_owners[i], v_names[i], v_keys[i], v_maximums[i], v_now)
        RETURNING * INTO v_lead;
        v_outcome := 'maximum_set';
      ELSE
        -- Not above the leading maximum (only possible with one: a maximum is at least the
        -- smallest winning bid): the leader answers, the earlier winning a tie.
        v_store_names := ARRAY[v_lead.bidder_name];
        v_store_keys := ARRAY[v_lead.bidder_key];
        v_store_cents := ARRAY[least(v_lead.maximum_cents, v_maximums[i] + p_increment_cents)];
        v_outcome := 'outbid_by_maximum';
      END IF;
    END IF;

    v_own_id := NULL;
    FOR j IN 1..coalesce(array_length(v_store_names, 1), 0) LOOP
      v_high_cents := v_store_cents[j];
      v_high_key := v_store_keys[j];
      IF NOT v_store_names[j] = ANY (v_known_names) THEN
        v_bidders := v_bidders + 1;
        v_known_names := v_known_names || v_store_names[j];
      END IF;
      -- Ids taken in order under the lock, so they rise in commit order as a lone bid's do.
      v_id := nextval(v_sequence);
      IF j = 1 AND v_own THEN
        v_own_id := v_id;
      END IF;
      v_ids := v_ids || v_id;
      v_insert_names := v_insert_names || v_store_names[j];
      v_insert_keys := v_insert_keys || v_store_keys[j];
      v_insert_cents := v_insert_cents || v_store_cents[j];
      -- Soft close: sniping in the last seconds only buys the others as many seconds to answer. An
      -- automatic bid is a bid: it moves the end too.
      IF v_round.ends_at IS NOT NULL AND v_round.ends_at - v_now < make_interval(secs => p_soft_close_seconds) THEN
        v_round.ends_at := v_now + make_interval(secs => p_soft_close_seconds);
        v_round_changed := true;
      END IF;
      PERFORM pg_notify('auction_bids', json_build_object(
        'id', v_id,
        'bidderName', v_store_names[j],
        'amountCents', v_store_cents[j],
        'createdAt', v_now_text,
        'bidders', v_bidders,
        'moderation', v_moderation,
        'round', v_round.number,
        'endsAt', auction_time_text(v_round.ends_at)
      )::text);
    END LOOP;

    IF v_outcome = 'outbid_by_maximum' AND NOT p_answers_maximums THEN
      v_outcome := 'too_low';
    END IF;
    RETURN QUERY SELECT i, v_outcome, v_own_id, CASE WHEN v_own THEN v_names[i] END,
      CASE WHEN v_own THEN v_store_cents[1] END, CASE WHEN v_own THEN v_now_text END, v_bidders, v_high_cents,
      v_moderation, v_round.number, auction_time_text(v_round.ends_at), v_closed_bids, v_outbid;
  END LOOP;

  -- A bid the table's constraints refuse (the service's rules should have kept it out) fails the
  -- whole statement: the service then places the batch's bids one by one (bidBatcher.ts).
  IF array_length(v_ids, 1) > 0 THEN
    INSERT INTO auction_bids (id, bidder_name, bidder_key, amount, created_at, round_number)
    OVERRIDING SYSTEM VALUE
    SELECT a.id, a.name, a.key, a.cents::numeric / 100, v_now, v_round.number
    FROM unnest(v_ids, v_insert_names, v_insert_keys, v_insert_cents) AS a (id, name, key, cents);
  END IF;
  IF array_length(v_ids, 1) > 0 OR v_round_changed THEN
    UPDATE auction_state SET round_number = v_round.number, high_amount = v_high_cents::numeric / 100, bidder_count = v_bidders;
    UPDATE auction_rounds r SET ends_at = v_round.ends_at WHERE r.number = v_round.number;
  END IF;
END;
$$;

-- The calls of the release before maximums, which never send one: the same rule, the answers it reads.
CREATE OR REPLACE FUNCTION place_auction_bids(
  p_bids text,
  p_round_seconds integer,
  p_soft_close_seconds integer,
  p_increment_cents bigint,
  p_first_bid_cents bigint
)
RETURNS SETOF auction_placement
LANGUAGE sql
AS $$
  SELECT * FROM place_auction_bids(p_bids, p_round_seconds, p_soft_close_seconds, p_increment_cents, p_first_bid_cents, false)
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
