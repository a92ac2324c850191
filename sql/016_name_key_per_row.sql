-- compatible-with: 14
-- The name key version (realtime/names/nameKey.ts) each bid's bidder_key and each block's name_key
-- was computed with, so that rows written by older code are found and re-keyed whenever the
-- service opens the store, whatever version auction_name_key_version records (it records the
-- newest that keyed the database, not that every row is keyed by it: an older release that ran on
-- the database since wrote keys of its own). Written by the column default from the session's
-- auction.name_key_version, which this code sets on every connection; code that does not set it
-- (older releases, hand-written SQL) writes null: re-keyed at the next open
-- (realtime/storage/nameKeyVersion.ts). The default is set after the column is added, so that the
-- rows already stored get null, not the migrating session's version. Expand only.
ALTER TABLE auction_bids ADD COLUMN key_version integer;
ALTER TABLE auction_bids ALTER COLUMN key_version
  SET DEFAULT nullif(current_setting('auction.name_key_version', true), '')::integer;
-- Rows to re-key: few or none, found by this index at every open.
CREATE INDEX auction_bids_key_version_idx ON auction_bids (key_version);
ALTER TABLE auction_blocked_names ADD COLUMN key_version integer;
ALTER TABLE auction_blocked_names ALTER COLUMN key_version
  SET DEFAULT nullif(current_setting('auction.name_key_version', true), '')::integer;
