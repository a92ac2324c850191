-- The auction's time: the text every wire field carries, and the clock that decides rounds.

-- UTC ISO 8601 with milliseconds, whatever the session's time zone.
CREATE OR REPLACE FUNCTION auction_time_text(p_time timestamptz) RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- The database's own clock, to the millisecond (what the wire carries, so an end a page or an
-- instance reads is the end itself). A test session may set auction.test_now to step it
-- (tests/realtime/roundProperties.test.ts); the service never sets it.
CREATE OR REPLACE FUNCTION auction_clock() RETURNS timestamptz
LANGUAGE sql VOLATILE
AS $$
  SELECT date_trunc('milliseconds',
    coalesce(nullif(current_setting('auction.test_now', true), '')::timestamptz, clock_timestamp()))
$$;
