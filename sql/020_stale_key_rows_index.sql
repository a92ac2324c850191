-- compatible-with: 19
-- The rows the start re-keys (service/storage/nameKeyVersion.ts: no key version, or an older one
-- than NAME_KEY_VERSION, 2) found by a partial index that holds only them: none in the normal case,
-- so a bid writes no entry to it. sql/016's index on key_version held every bid: one more index
-- entry written by every bid (54 of 654 WAL bytes per bid at 100 bidders, docs/performance.md)
-- only for that read at start. Without any index the read is a scan (0.43 s for 2 million bids);
-- through this one it takes under 1 ms, as through the old one. A release that raises
-- NAME_KEY_VERSION moves the bound in a migration of its own (storageNameKeys.test.ts fails until
-- then). Compatible: older code names neither index.
CREATE INDEX auction_bids_stale_key_idx ON auction_bids (id) WHERE key_version IS NULL OR key_version < 2;
DROP INDEX auction_bids_key_version_idx;
