-- Moderation (docs/design.md#6a).

-- After bids were hidden or shown (by an action, or by the name re-key of
-- realtime/storage/nameKeyVersion.ts): recomputes the current round's highest and bidder count from
-- the visible bids, bumps moderation_version and NOTIFYs it (at commit), so that every instance
-- resyncs. The caller holds the auction_state row lock that bids take, so that no bid lands between
-- its change and the recount. Returns the new moderation version.
CREATE OR REPLACE FUNCTION auction_recount_after_moderation() RETURNS bigint
LANGUAGE plpgsql
AS $$
DECLARE
  v_moderation bigint;
BEGIN
  UPDATE auction_state SET
    high_amount = coalesce((
      SELECT max(b.amount) FROM auction_bids b
      WHERE b.round_number = auction_state.round_number AND b.hidden_at IS NULL AND NOT b.name_blocked), 0),
    bidder_count = (
      SELECT count(DISTINCT b.bidder_name) FROM auction_bids b
      WHERE b.round_number = auction_state.round_number AND b.hidden_at IS NULL AND NOT b.name_blocked),
    moderation_version = auction_state.moderation_version + 1
  RETURNING auction_state.moderation_version INTO v_moderation;
  PERFORM pg_notify('auction_bids', json_build_object('moderation', v_moderation)::text);
  RETURN v_moderation;
END;
$$;

-- One action, p_action 'hide' or 'restore' (p_bid_id) or 'block' or 'unblock' (p_bidder_name as
-- typed, p_name_key its key). Under the auction_state row lock that bids take, it recounts
-- (auction_recount_after_moderation) and writes its audit row, all in one transaction.
-- Outcome 'done', or 'no_such_bid', 'unchanged' (already so) without any write.
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

  -- Hiding a bid of the leading maximum's name, or blocking that name, ends the maximum: it would
  -- otherwise bid again for a name the operator has just taken out.
  IF p_action IN ('hide', 'block') THEN
    UPDATE auction_maximums m SET ended_at = auction_clock(), ended_reason = 'moderated'
    WHERE m.ended_at IS NULL AND m.bidder_key = CASE WHEN p_action = 'block' THEN p_name_key
      ELSE (SELECT b.bidder_key FROM auction_bids b WHERE b.id = p_bid_id) END;
  END IF;

  -- A bid shown again (restored, or its name unblocked) that now leads the round passed the leading
  -- maximum without its owner's answer: the maximum ends rather than lead from behind. Moderation
  -- places no bid, so it cannot answer for it.
  IF p_action IN ('restore', 'unblock') THEN
    UPDATE auction_maximums m SET ended_at = auction_clock(), ended_reason = 'moderated'
    FROM auction_state s
    WHERE m.ended_at IS NULL AND m.round_number = s.round_number AND m.bidder_key IS DISTINCT FROM (
      SELECT b.bidder_key FROM auction_bids b
      WHERE b.round_number = s.round_number AND b.hidden_at IS NULL AND NOT b.name_blocked
      ORDER BY b.amount DESC, b.id LIMIT 1);
  END IF;

  v_moderation := auction_recount_after_moderation();

  INSERT INTO auction_moderation_log (session_id, action, bid_id, bidder_name, reason)
  VALUES (p_session_id, p_action, CASE WHEN p_action IN ('hide', 'restore') THEN p_bid_id END, v_name, p_reason);

  RETURN QUERY SELECT 'done'::text, v_moderation, v_name;
END;
$$;
