-- Rounds (docs/design.md#6b): a round opens with its first accepted bid and ends a configured number
-- of seconds later; a bid accepted with less than the soft-close time left moves the end to its own
-- time plus the soft-close time. The database's clock decides, under the auction_state row lock
-- that bids and moderation take. A round's end is recorded ("closed") by the first call to see it
-- passed: the bid that opens the next round, or settle_auction_round(), which every instance calls
-- when its timer for the end fires. The winner is never stored: it is the round's highest visible
-- bid. The durations come from each call (the service's AUCTION_ROUND_SECONDS and
-- AUCTION_SOFT_CLOSE_SECONDS); 0 seconds is one endless round.

-- Brings the current round up to p_now; the caller holds the auction_state lock. Rounds on: an
-- endless round gets its end (opened_at plus the length). A round whose end has passed is closed
-- and announced (NOTIFY, in commit order with the bids), rounds on or off: an end that passed
-- while no instance ran is still a sale. Rounds off: a round still open becomes endless. Returns
-- the number of bids of the round it closed, or null when it closed none.
CREATE OR REPLACE FUNCTION advance_auction_round(p_now timestamptz, p_round_seconds integer) RETURNS integer
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
  -- A round's end ends its maximums: the next round starts with none.
  UPDATE auction_maximums m SET ended_at = p_now, ended_reason = 'round_ended'
  WHERE m.round_number = v_round.number AND m.ended_at IS NULL;
  SELECT count(*) INTO v_bids FROM auction_bids b WHERE b.round_number = v_round.number;
  PERFORM pg_notify('auction_bids', json_build_object(
    'roundClosed', v_round.number,
    'moderation', (SELECT s.moderation_version FROM auction_state s)
  )::text);
  RETURN v_bids;
END;
$$;

-- The round a bid at p_now belongs to, under the auction_state lock and after advance_auction_round:
-- the current one while it is open, else the next, opened now (and the state's highest and bidder
-- count start afresh with it).
CREATE OR REPLACE FUNCTION open_auction_round(p_now timestamptz, p_round_seconds integer) RETURNS auction_rounds
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

-- Closes the current round if its end has passed, as a bid arriving now would. Called by every
-- instance when its timer for the end fires, so the end is announced with or without a new bid;
-- the first call records it, the others find it closed. Answers where the round stands.
CREATE OR REPLACE FUNCTION settle_auction_round(p_round_seconds integer)
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
