-- The version of the name key (realtime/names/nameKey.ts, NAME_KEY_VERSION) that
-- auction_bids.bidder_key and auction_blocked_names.name_key hold (docs/design.md#11). The service
-- computes the key, so a new version cannot re-key in SQL: the service re-keys when it opens the
-- store, in the migrations' transaction and under their lock, and records the version here
-- (realtime/storage/nameKeyVersion.ts). Version 1 is 002's key (NFKC, case folded): every key
-- stored before this migration.
CREATE TABLE auction_name_key_version (
  singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT auction_name_key_version_one_row CHECK (singleton),
  version integer NOT NULL CONSTRAINT auction_name_key_version_positive CHECK (version > 0),
  keyed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO auction_name_key_version (version) VALUES (1);
