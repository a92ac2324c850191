/**
 * Keeps the stored name keys those of this release's nameKey() (docs/design.md#11). The key is
 * computed in TypeScript, so a change to it cannot be a SQL migration: when the service opens a
 * store whose keys are of an older version (sql/007_name_key_version.sql), it re-keys every bid
 * and every blocked name, recomputes which bids a block hides, and records the version, all after
 * the migrations, in their transaction and under their lock (migrations.ts's afterMigrations): two
 * instances starting together re-key once, and a failure leaves nothing half re-keyed.
 *
 * The version the database records is the newest that keyed it, not a promise about every row: an
 * older release that ran on it since (a rollback, a rolling deploy) wrote keys of its own. So every
 * bid and block also records the version its key was computed with (sql/016, from the session's
 * auction.name_key_version, which this code sets on each connection; older code writes null), and
 * at every open the rows of an older or no version are re-keyed too: a name an older release let
 * past a block is blocked from then on, and cannot stay a round's winner. An indexed read when
 * there are none (docs/decisions/2026-11-27-refuse-downgrades.md).
 *
 * Two blocked names whose new keys are equal ("Nobody" and "N0body") become one block: the earlier
 * is kept (its name as typed and its time) and blocks both spellings; the console lists it alone.
 * When blocks or the visibility of bids change, the highest and the bidder count are recomputed,
 * the moderation version is raised and every instance is notified, by the function an operator's
 * action calls (auction_recount_after_moderation, sql/functions/50_moderation.sql), so pages and
 * quick checks follow. It runs after the functions are applied (migrations.ts).
 */
import type { Logger } from "../logger.ts";
import { NAME_KEY_VERSION, nameKey } from "../names/nameKey.ts";
import type { MigrationTransaction } from "./schemaTransaction.ts";

/** Names re-keyed per statement: keeps each JSON parameter small whatever the table holds. */
const NAMES_PER_UPDATE = 1_000;

const HAS_KEY_VERSION_SQL = "SELECT to_regclass('auction_name_key_version') IS NOT NULL AS present";
const KEY_VERSION_SQL = "SELECT version FROM auction_name_key_version";
// The bids' lock, as bids and moderation take it: an instance of the previous release may still
// be placing bids and taking actions while this one starts.
const LOCK_BIDS_SQL = "SELECT 1 FROM auction_state FOR UPDATE";
/** Whether the rows record their key's version (sql/016): not in tests of older schemas. */
const HAS_ROW_VERSIONS_SQL = `SELECT EXISTS (SELECT 1 FROM pg_attribute
  WHERE attrelid = 'auction_bids'::regclass AND attname = 'key_version' AND NOT attisdropped) AS present`;
const ALL_BID_NAMES_SQL = "SELECT DISTINCT bidder_name, bidder_key FROM auction_bids";
const UNKEYED_BID_NAMES_SQL = "SELECT DISTINCT bidder_name, bidder_key FROM auction_bids WHERE bidder_key IS NULL";
/** $1 the current version: rows keyed by older code, or by none. */
const STALE_BID_NAMES_SQL = `SELECT DISTINCT bidder_name, bidder_key FROM auction_bids
WHERE bidder_key IS NULL OR key_version IS NULL OR key_version < $1::integer`;
/** $1 JSON [{name, key}], sent as text: postgres.js would encode a string for a json parameter again. */
const SET_BID_KEYS_SQL = `UPDATE auction_bids b SET bidder_key = k.key
FROM json_to_recordset($1::text::json) AS k(name text, key text)
WHERE b.bidder_name = k.name AND b.bidder_key IS DISTINCT FROM k.key`;
/** The same, recording the version ($2) on every row of those names. */
const SET_BID_KEYS_AND_VERSIONS_SQL = `UPDATE auction_bids b SET bidder_key = k.key, key_version = $2::integer
FROM json_to_recordset($1::text::json) AS k(name text, key text)
WHERE b.bidder_name = k.name AND (b.bidder_key IS DISTINCT FROM k.key OR b.key_version IS DISTINCT FROM $2::integer)`;
const HAS_STALE_BLOCKS_SQL = `SELECT EXISTS (SELECT 1 FROM auction_blocked_names
  WHERE key_version IS DISTINCT FROM $1::integer) AS present`;
const SET_BLOCK_VERSIONS_SQL =
  "UPDATE auction_blocked_names SET key_version = $1::integer WHERE key_version IS DISTINCT FROM $1::integer";
const BLOCKS_SQL = `SELECT name_key, bidder_name, to_char(blocked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS blocked_at
FROM auction_blocked_names ORDER BY blocked_at, name_key`;
/** $1 JSON [old key]. */
const DROP_BLOCKS_SQL = `DELETE FROM auction_blocked_names n
USING json_array_elements_text($1::text::json) AS k(old) WHERE n.name_key = k.old`;
/** $1 JSON [{key, name, at}]. */
const ADD_BLOCKS_SQL = `INSERT INTO auction_blocked_names (name_key, bidder_name, blocked_at)
SELECT k.key, k.name, k.at::timestamptz FROM json_to_recordset($1::text::json) AS k(key text, name text, at text)`;
/** Counts the bids whose name_blocked it flips. */
const SET_NAME_BLOCKED_SQL = `WITH flipped AS (
  UPDATE auction_bids b SET name_blocked = NOT b.name_blocked
  WHERE b.name_blocked <> EXISTS (SELECT 1 FROM auction_blocked_names n WHERE n.name_key = b.bidder_key)
  RETURNING 1
) SELECT count(*)::integer AS bids FROM flipped`;
// The recount and NOTIFY of an operator's action (sql/functions/50_moderation.sql).
const RECOUNT_SQL = "SELECT auction_recount_after_moderation() AS moderation";
const RECORD_VERSION_SQL = "UPDATE auction_name_key_version SET version = $1::integer, keyed_at = now()";

/** What a re-keying changed, for the log line and the tests. */
export interface Rekeyed {
  /** Distinct bidder names whose key changed (or was missing). */
  bidNames: number;
  /** Blocked names whose key changed, and those merged into an earlier block with the same key. */
  blocks: number;
  mergedBlocks: number;
  /** Bids whose name_blocked flipped. */
  bidsShownOrHidden: number;
}

/** `all`: every name (an older version recorded); `rowVersions`: the rows record theirs (sql/016). */
async function rekeyBids(
  tx: MigrationTransaction,
  all: boolean,
  rowVersions: boolean,
): Promise<{ changedNames: number; stampedNames: number }> {
  const rows = all
    ? await tx.query(ALL_BID_NAMES_SQL)
    : rowVersions
      ? await tx.query(STALE_BID_NAMES_SQL, [NAME_KEY_VERSION])
      : await tx.query(UNKEYED_BID_NAMES_SQL);
  const keyed = rows.map((row) => ({
    name: String(row.bidder_name),
    stored: row.bidder_key,
    key: nameKey(String(row.bidder_name)),
  }));
  const changed = keyed.filter(({ stored, key }) => stored !== key);
  // With row versions, every row read is stamped, its key changed or not; without, only changes.
  const written = (rowVersions ? keyed : changed).map(({ name, key }) => ({ name, key }));
  for (let start = 0; start < written.length; start += NAMES_PER_UPDATE) {
    const names = JSON.stringify(written.slice(start, start + NAMES_PER_UPDATE));
    if (rowVersions) await tx.query(SET_BID_KEYS_AND_VERSIONS_SQL, [names, NAME_KEY_VERSION]);
    else await tx.query(SET_BID_KEYS_SQL, [names]);
  }
  return {
    changedNames: new Set(changed.map(({ name }) => name)).size,
    stampedNames: rowVersions ? written.length : 0,
  };
}

async function rekeyBlocks(tx: MigrationTransaction): Promise<{ blocks: number; mergedBlocks: number }> {
  const kept = new Map<string, { key: string; name: string; at: string; old: string }>();
  const dropped: string[] = [];
  // Oldest first: the first block of a key is the one kept.
  for (const row of await tx.query(BLOCKS_SQL)) {
    const block = { key: nameKey(String(row.bidder_name)), name: String(row.bidder_name), at: String(row.blocked_at) };
    const old = String(row.name_key);
    if (kept.has(block.key)) dropped.push(old);
    else kept.set(block.key, { ...block, old });
  }
  const moved = [...kept.values()].filter((block) => block.key !== block.old);
  if (moved.length === 0 && dropped.length === 0) return { blocks: 0, mergedBlocks: 0 };
  // Out and back in with their new keys: updated in place, one block could take a key that another
  // still holds until its own update.
  await tx.query(DROP_BLOCKS_SQL, [JSON.stringify([...dropped, ...moved.map((block) => block.old)])]);
  await tx.query(ADD_BLOCKS_SQL, [JSON.stringify(moved.map(({ key, name, at }) => ({ key, name, at })))]);
  return { blocks: moved.length, mergedBlocks: dropped.length };
}

/**
 * The session setting the key_version columns' default reads (sql/016): set on every connection
 * this code opens, so each bid and block it writes records the version of the key it computed.
 */
export const NAME_KEY_VERSION_SETTING = "auction.name_key_version";

/** The afterMigrations step of both backends (see above). */
export async function rekeyNames(tx: MigrationTransaction, logger: Logger): Promise<Rekeyed | null> {
  // A store opened with only some migrations (tests of older schemas): nothing records keys yet.
  const [table] = await tx.query(HAS_KEY_VERSION_SQL);
  if (table?.present !== true) return null;
  const [row] = await tx.query(KEY_VERSION_SQL);
  const stored = Number(row?.version);
  if (stored > NAME_KEY_VERSION) {
    logger.warn(
      { stored, current: NAME_KEY_VERSION },
      "the database's names are keyed by a newer release: blocks may miss the names this release keys",
    );
    return null;
  }
  const all = stored < NAME_KEY_VERSION;
  const rowVersions = (await tx.query(HAS_ROW_VERSIONS_SQL))[0]?.present === true;
  await tx.query(LOCK_BIDS_SQL);
  const startedAt = performance.now();
  const { changedNames: bidNames, stampedNames } = await rekeyBids(tx, all, rowVersions);
  const staleBlocks = rowVersions && (await tx.query(HAS_STALE_BLOCKS_SQL, [NAME_KEY_VERSION]))[0]?.present === true;
  const { blocks, mergedBlocks } = all || staleBlocks ? await rekeyBlocks(tx) : { blocks: 0, mergedBlocks: 0 };
  if (rowVersions && (all || staleBlocks)) await tx.query(SET_BLOCK_VERSIONS_SQL, [NAME_KEY_VERSION]);
  let bidsShownOrHidden = 0;
  if (bidNames > 0 || blocks > 0 || mergedBlocks > 0) {
    bidsShownOrHidden = Number((await tx.query(SET_NAME_BLOCKED_SQL))[0]?.bids ?? 0);
  }
  if (bidsShownOrHidden > 0 || blocks > 0 || mergedBlocks > 0) {
    await tx.query(RECOUNT_SQL);
  }
  if (all) await tx.query(RECORD_VERSION_SQL, [NAME_KEY_VERSION]);
  const rekeyed = { bidNames, blocks, mergedBlocks, bidsShownOrHidden };
  const changed = bidNames + blocks + mergedBlocks > 0;
  // A new database records the version too (sql/007 starts it at 1), with nothing to re-key.
  if (all) logger[changed ? "info" : "debug"]({ from: stored, to: NAME_KEY_VERSION, ...rekeyed }, "names re-keyed");
  else if (changed) logger.info(rekeyed, "names keyed by older code, or by none, re-keyed");
  // Rows older code wrote are read and stamped under the bids' lock even when no key changes (the
  // first start after sql/016 stamps every row): said, so that a slow start has its reason.
  else if (stampedNames > 0) {
    logger.info(
      { names: stampedNames, ms: Math.round(performance.now() - startedAt) },
      "rows written by older code stamped with the name key version, no key changed",
    );
  }
  return rekeyed;
}
