/**
 * The name key's version in the store, on both backends (docs/design.md#11,
 * realtime/storage/nameKeyVersion.ts): a database keyed by the old key (version 1: NFKC and case
 * only) is re-keyed once when the service opens it, in the migrations' transaction; its old block
 * of "Nobody" then hides and refuses the disguises that got past it, blocks that now share a key
 * become one, and the highest, the bidder count and the moderation version follow.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NAME_KEY_VERSION, nameKey } from "../../realtime/names/nameKey.ts";
import type { BidStore } from "../../realtime/storage/types.ts";
import {
  BACKENDS,
  createTestDatabase,
  createTestLocation,
  type DirectQuery,
  openTestStore,
  STORE_HOOK_TIMEOUT_MS,
  type TestLocation,
  testLogger,
  withDirectSql,
} from "./support/stores.ts";

/** sql/002's key, which every key stored before sql/007 is. */
const versionOneKey = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");

/** Issue 20's disguises of "Nobody", which bid freely while it was blocked. */
const DISGUISES = ["N\u043ebody", "No\u034fbody", "Nobody\ufe0f", "No\u3164body"];

/** Bids and blocks as the previous release stored them: its keys, through the database's own functions. */
async function storeTheOldWay(query: DirectQuery) {
  const bid = async (name: string, cents: number) => {
    const [row] = await query("SELECT * FROM place_auction_bid($1::text, $2::text, $3::bigint, 0, 0)", [
      name,
      versionOneKey(name),
      cents,
    ]);
    if (row?.outcome !== "accepted") throw new Error(`${name}'s bid was refused: ${String(row?.outcome)}`);
    return Number(row.id);
  };
  const block = async (name: string) => {
    const [row] = await query(
      "SELECT * FROM moderate_auction('block', NULL, $1::text, $2::text, NULL, 'old-session')",
      [name, versionOneKey(name)],
    );
    if (row?.outcome !== "done") throw new Error(`blocking ${name} did nothing`);
  };
  const ids = {
    alice: await bid("Alice", 100),
    mister: await bid("Mr.Nobody", 200),
    disguises: [] as number[],
  };
  await block("Nobody");
  // Later blocks: one that the new key merges into "Nobody", one whose key moves.
  await block("N0body");
  await block("MR.NOBODY");
  for (const [index, name] of DISGUISES.entries()) ids.disguises.push(await bid(name, 1_000 + index));
  await query("UPDATE auction_name_key_version SET version = 1");
  return ids;
}

async function keysOf(query: DirectQuery) {
  const version = await query("SELECT version FROM auction_name_key_version");
  const blocks = await query("SELECT name_key, bidder_name FROM auction_blocked_names ORDER BY blocked_at");
  const bids = await query("SELECT id::int AS id, bidder_key, name_blocked FROM auction_bids ORDER BY id");
  const state = await query("SELECT moderation_version::int AS moderation FROM auction_state");
  return {
    version: Number(version[0]?.version),
    blocks: blocks.map((row) => [row.name_key, row.bidder_name]),
    bids: bids.map((row) => [row.id, row.bidder_key, row.name_blocked]),
    moderation: Number(state[0]?.moderation),
  };
}

describe.each(BACKENDS)(
  "the name key's version on %s",
  (backend) => {
    let location: TestLocation;
    let store: BidStore | undefined;

    beforeEach(async () => {
      location = await createTestLocation(backend);
      // Migrated (a new PostgreSQL database is empty), then closed: each test opens its own.
      await (await openTestStore(location)).close();
    }, STORE_HOOK_TIMEOUT_MS);

    afterEach(async () => {
      await store?.close();
      store = undefined;
      await location?.remove();
    }, STORE_HOOK_TIMEOUT_MS);

    it("records the current version on a new database", async () => {
      expect((await withDirectSql(location, keysOf)).version).toBe(NAME_KEY_VERSION);
    });

    it("re-keys a database of the old key once: the old block of Nobody hides and refuses its disguises", async () => {
      const ids = await withDirectSql(location, storeTheOldWay);
      const before = await withDirectSql(location, keysOf);
      // The old keys: each disguise has a key of its own, so the block of "Nobody" missed them.
      expect(before.bids.filter(([, , blocked]) => blocked === true).map(([id]) => id)).toEqual([ids.mister]);

      const lines: Record<string, unknown>[] = [];
      store = await openTestStore(location, { logger: testLogger((line) => lines.push(line)) });
      expect(lines.filter((line) => line.msg === "names re-keyed")).toEqual([
        expect.objectContaining({
          from: 1,
          to: NAME_KEY_VERSION,
          bidNames: 6,
          blocks: 1,
          mergedBlocks: 1,
          bidsShownOrHidden: 4,
        }),
      ]);

      const view = await store.view(50);
      expect(view.bids.map((bid) => bid.id)).toEqual([ids.alice]);
      expect(view).toMatchObject({ highest: { id: ids.alice }, bidders: 1, moderation: before.moderation + 1 });
      expect([...view.blockedKeys].sort()).toEqual([nameKey("Nobody"), nameKey("Mr.Nobody")].sort());
      // The earlier block is kept for the merged key, as the operator typed it.
      const { blockedNames } = await store.moderationView(null, 50);
      expect(blockedNames.map((block) => block.bidderName).sort()).toEqual(["MR.NOBODY", "Nobody"]);

      // The database refuses them itself: alone, and in a batch.
      for (const name of DISGUISES) {
        expect(await store.placeBid(name, 5_000), name).toMatchObject({ accepted: false, code: "name_not_allowed" });
      }
      const batch = await store.placeBids(DISGUISES.map((bidderName) => ({ bidderName, amountCents: 6_000 })));
      expect(batch.map((outcome) => !outcome.accepted && outcome.code)).toEqual(
        DISGUISES.map(() => "name_not_allowed"),
      );
      // Unblocking by any spelling of the merged key lets them all bid again.
      expect(
        await store.moderate({ action: "unblock", bidderName: "N0BODY", reason: null, sessionId: "s" }),
      ).toMatchObject({ outcome: "done", bidderName: "Nobody" });
      expect(await store.placeBid("N\u043ebody", 7_000)).toMatchObject({ accepted: true });
      await store.close();
      store = undefined;

      const after = await withDirectSql(location, keysOf);
      expect(after.version).toBe(NAME_KEY_VERSION);
      expect(after.blocks).toEqual([[nameKey("MR.NOBODY"), "MR.NOBODY"]]);
    });

    it("changes nothing when it opens a database already at the current version", async () => {
      await withDirectSql(location, storeTheOldWay);
      store = await openTestStore(location);
      await store.close();
      const once = await withDirectSql(location, keysOf);
      const lines: Record<string, unknown>[] = [];
      store = await openTestStore(location, { logger: testLogger((line) => lines.push(line)) });
      await store.close();
      store = undefined;
      expect(lines.filter((line) => String(line.msg).includes("key"))).toEqual([]);
      expect(await withDirectSql(location, keysOf)).toEqual(once);
    });

    it("keys bids stored without a key and hides those of a blocked name", async () => {
      store = await openTestStore(location);
      await store.moderate({ action: "block", bidderName: "Nobody", reason: null, sessionId: "s" });
      await store.close();
      store = undefined;
      await withDirectSql(location, async (query) => {
        await query("SELECT * FROM place_auction_bid('N\u043ebody', NULL, 100, 0, 0)");
        await query("SELECT * FROM place_auction_bid('Alice', NULL, 200, 0, 0)");
      });
      store = await openTestStore(location);
      expect((await store.view(50)).bids.map((bid) => bid.bidderName)).toEqual(["Alice"]);
      await store.close();
      store = undefined;
      const { bids } = await withDirectSql(location, keysOf);
      expect(bids.map(([, key, blocked]) => [key, blocked])).toEqual([
        [nameKey("Nobody"), true],
        [nameKey("Alice"), false],
      ]);
    });

    it("leaves the keys of a newer release as they are, and says so", async () => {
      await withDirectSql(location, storeTheOldWay);
      await withDirectSql(location, (query) =>
        query("UPDATE auction_name_key_version SET version = $1", [NAME_KEY_VERSION + 1]),
      );
      const before = await withDirectSql(location, keysOf);
      const lines: Record<string, unknown>[] = [];
      store = await openTestStore(location, { logger: testLogger((line) => lines.push(line)) });
      await store.close();
      store = undefined;
      expect(lines.filter((line) => line.level === 40).map((line) => line.msg)).toContainEqual(
        expect.stringContaining("keyed by a newer release"),
      );
      expect(await withDirectSql(location, keysOf)).toEqual(before);
    });
  },
  60_000,
);

describe("the name key's version on PostgreSQL, two instances starting together", () => {
  it("re-keys once: one log line, one moderation version", async () => {
    const database = await createTestDatabase();
    const location: TestLocation = {
      backend: "postgres",
      databaseUrl: database.url,
      dataDir: "",
      remove: database.drop,
    };
    try {
      const first = await openTestStore(location);
      await first.close();
      await withDirectSql(location, storeTheOldWay);
      const { moderation } = await withDirectSql(location, keysOf);
      const lines: Record<string, unknown>[] = [];
      const stores = await Promise.all([
        openTestStore(location, { logger: testLogger((line) => lines.push(line)) }),
        openTestStore(location, { logger: testLogger((line) => lines.push(line)) }),
      ]);
      await Promise.all(stores.map((store) => store.close()));
      expect(lines.filter((line) => line.msg === "names re-keyed")).toHaveLength(1);
      expect(await withDirectSql(location, keysOf)).toMatchObject({
        version: NAME_KEY_VERSION,
        moderation: moderation + 1,
      });
    } finally {
      await database.drop();
    }
  }, 60_000);
});
