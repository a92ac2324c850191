/**
 * Moderation in the store, on both backends (docs/design.md#6a): hide and restore a bid, block and
 * unblock a name, each under the bids' lock with the highest and the bidder count recomputed from
 * the visible bids, its audit row committed with it, and one notification in order with the bids.
 */
import postgres from "postgres";
import { describe, expect } from "vitest";
import type {
  BidNotice,
  ModerationNotice,
  ModerationRequest,
  PlaceBidOutcome,
} from "../../../service/storage/types.ts";
import { modelWinningAmounts } from "../harness/auctionModel.ts";
import { BACKENDS, storeForThisTest, storeTestOn, waitFor, withDirectSql } from "../harness/stores.ts";

const MAX_CENTS = 100_000_000_000;
const SESSION = "session-1";

function accepted(outcome: PlaceBidOutcome) {
  if (!outcome.accepted) throw new Error(`bid refused (${outcome.code}), highest ${outcome.highestCents}`);
  return outcome.bid;
}

const hide = (bidId: number, reason: string | null = null): ModerationRequest => ({
  action: "hide",
  bidId,
  reason,
  sessionId: SESSION,
});
const restore = (bidId: number): ModerationRequest => ({ action: "restore", bidId, reason: null, sessionId: SESSION });
const block = (bidderName: string, reason: string | null = null): ModerationRequest => ({
  action: "block",
  bidderName,
  reason,
  sessionId: SESSION,
});
const unblock = (bidderName: string): ModerationRequest => ({
  action: "unblock",
  bidderName,
  reason: null,
  sessionId: SESSION,
});

describe.each(BACKENDS)(
  "moderation in the store on %s",
  (backend) => {
    const storeTest = storeTestOn(backend);

    storeTest(
      "hides a troll's maximum bid: the highest and the count fall back, a lower bid is accepted, restore undoes it",
      async ({ store }) => {
        const alice = accepted(await store.placeBid("Alice", 1_000));
        const troll = accepted(await store.placeBid("Troll", MAX_CENTS));
        expect((await store.placeBid("Bob", 5_000)).accepted).toBe(false);

        expect(await store.moderate(hide(troll.id, "a slur"))).toEqual({
          outcome: "done",
          moderation: 1,
          bidderName: "Troll",
        });
        const afterHide = await store.view(50);
        expect(afterHide).toMatchObject({ bids: [alice], highest: alice, bidders: 1, moderation: 1, lastId: troll.id });
        expect((await store.bidsAfter(0, 50)).bids).toEqual([alice]);

        // Above the next visible bid, far below the hidden one.
        const bob = accepted(await store.placeBid("Bob", 5_000));
        expect(await store.placeBid("Carol", 5_000)).toMatchObject({ accepted: false, highestCents: 5_000 });
        expect((await store.view(50)).bidders).toBe(2);

        expect(await store.moderate(restore(troll.id))).toMatchObject({ outcome: "done", moderation: 2 });
        const afterRestore = await store.view(50);
        expect(afterRestore.bids).toEqual([bob, troll, alice]);
        // The highest is no longer the newest.
        expect(afterRestore.highest).toEqual(troll);
        expect(afterRestore.bidders).toBe(3);
        expect(await store.placeBid("Carol", 6_000)).toMatchObject({ accepted: false, highestCents: MAX_CENTS });
      },
    );

    storeTest("keeps the earlier of two equal visible bids as the highest", async ({ store }) => {
      accepted(await store.placeBid("Alice", 100));
      const troll = accepted(await store.placeBid("Troll", 9_000));
      await store.moderate(hide(troll.id));
      const later = accepted(await store.placeBid("Bob", 9_000));
      await store.moderate(restore(troll.id));
      expect((await store.view(50)).highest).toEqual(troll);
      expect(later.amountCents).toBe(troll.amountCents);
    });

    storeTest(
      "counts a bidder whose only visible bid is hidden as gone, and again when they bid",
      async ({ store }) => {
        const first = accepted(await store.placeBid("Alice", 100));
        accepted(await store.placeBid("Bob", 200));
        await store.moderate(hide(first.id));
        expect((await store.view(50)).bidders).toBe(1);
        const again = await store.placeBid("Alice", 300);
        expect(again).toMatchObject({ accepted: true, bidders: 2 });
      },
    );

    storeTest("answers an action that changes nothing without writing or notifying", async ({ store }) => {
      const bid = accepted(await store.placeBid("Alice", 100));
      expect(await store.moderate(hide(bid.id + 1000))).toEqual({
        outcome: "no_such_bid",
        moderation: 0,
        bidderName: null,
      });
      expect(await store.moderate(restore(bid.id))).toEqual({
        outcome: "unchanged",
        moderation: 0,
        bidderName: "Alice",
      });
      await store.moderate(hide(bid.id));
      expect(await store.moderate(hide(bid.id))).toMatchObject({ outcome: "unchanged", moderation: 1 });
      expect(await store.moderate(unblock("Nobody"))).toMatchObject({ outcome: "unchanged", moderation: 1 });
      await store.moderate(block("Alice"));
      expect(await store.moderate(block("ALICE"))).toMatchObject({ outcome: "unchanged", moderation: 2 });
      const { audit } = await store.moderationView(null, 50);
      expect(audit.map((entry) => entry.action)).toEqual(["block", "hide"]);
    });

    storeTest(
      "blocks a name in every case and NFKC spelling: its bids vanish, its next bids are refused; unblock undoes both",
      async ({ store }) => {
        const troll = accepted(await store.placeBid("Troll", 5_000));
        const alice = accepted(await store.placeBid("Alice", 6_000));
        const trollAgain = accepted(await store.placeBid("troll", 7_000));

        expect(await store.moderate(block("TROLL", "spam"))).toMatchObject({ outcome: "done", bidderName: "TROLL" });
        const view = await store.view(50);
        expect(view.blockedKeys).toEqual(["troll"]);
        expect(view.bids).toEqual([alice]);
        expect(view.highest).toEqual(alice);
        expect(view.bidders).toBe(1);

        // Full-width letters are NFKC-equivalent; "TROLL" upper case; both over the highest.
        for (const spelling of ["Troll", "tRoLl", "ｔｒｏｌｌ", "ＴＲＯＬＬ"]) {
          expect(await store.placeBid(spelling, 8_000)).toMatchObject({
            accepted: false,
            code: "name_not_allowed",
            highestCents: 6_000,
          });
        }
        // Below the highest too: the name is the first rule.
        expect(await store.placeBid("troll", 1)).toMatchObject({ code: "name_not_allowed" });

        const console = await store.moderationView(null, 50);
        expect(console.blockedNames).toEqual([{ bidderName: "TROLL", blockedAt: expect.any(String) }]);
        expect(console.bids.map((bid) => [bid.id, bid.hidden, bid.nameBlocked])).toEqual([
          [trollAgain.id, false, true],
          [alice.id, false, false],
          [troll.id, false, true],
        ]);

        expect(await store.moderate(unblock("ｔｒｏｌｌ"))).toMatchObject({ outcome: "done", bidderName: "TROLL" });
        const back = await store.view(50);
        expect(back.blockedKeys).toEqual([]);
        expect(back.bids).toEqual([trollAgain, alice, troll]);
        expect(back.highest).toEqual(trollAgain);
        expect(back.bidders).toBe(3);
        expect(await store.placeBid("Troll", 8_000)).toMatchObject({ accepted: true });
      },
    );

    storeTest("keeps a bid hidden by the operator hidden when its name is unblocked", async ({ store }) => {
      const first = accepted(await store.placeBid("Troll", 100));
      const second = accepted(await store.placeBid("Troll", 200));
      await store.moderate(hide(first.id));
      await store.moderate(block("troll"));
      await store.moderate(unblock("troll"));
      expect((await store.view(50)).bids).toEqual([second]);
    });

    storeTest("writes one audit row per action with when, which session, what and the reason", async ({ store }) => {
      const bid = accepted(await store.placeBid("Alice", 100));
      const before = Date.now();
      await store.moderate(hide(bid.id, "  not trimmed here  "));
      await store.moderate({ ...restore(bid.id), sessionId: "session-2" });
      await store.moderate(block("<b>Troll</b>", "html"));
      await store.moderate(unblock("<B>troll</B>"));
      const { audit, moderation } = await store.moderationView(null, 50);
      expect(moderation).toBe(4);
      expect(
        audit.map(({ action, bidId, bidderName, reason, sessionId }) => ({
          action,
          bidId,
          bidderName,
          reason,
          sessionId,
        })),
      ).toEqual([
        { action: "unblock", bidId: null, bidderName: "<b>Troll</b>", reason: null, sessionId: SESSION },
        { action: "block", bidId: null, bidderName: "<b>Troll</b>", reason: "html", sessionId: SESSION },
        { action: "restore", bidId: bid.id, bidderName: "Alice", reason: null, sessionId: "session-2" },
        { action: "hide", bidId: bid.id, bidderName: "Alice", reason: "  not trimmed here  ", sessionId: SESSION },
      ]);
      for (const entry of audit) expect(Date.parse(entry.at)).toBeGreaterThanOrEqual(before - 60_000);
    });

    storeTest("commits nothing of an action whose audit row cannot be written", async ({ store }) => {
      const bid = accepted(await store.placeBid("Alice", 100));
      // The database refuses a reason over 200 characters: the hide must roll back with it.
      await expect(store.moderate(hide(bid.id, "x".repeat(201)))).rejects.toThrow();
      expect(await store.view(50)).toMatchObject({ bids: [bid], moderation: 0 });
      expect((await store.moderationView(null, 50)).audit).toEqual([]);
    });

    storeTest("notifies each action once, in commit order with the bids", async ({ store }) => {
      const heard: (BidNotice | ModerationNotice)[] = [];
      store.onBid((notice) => heard.push(notice));
      store.onModeration((notice) => heard.push(notice));
      const first = accepted(await store.placeBid("Alice", 100));
      await store.moderate(hide(first.id));
      const second = accepted(await store.placeBid("Bob", 50));
      await store.moderate(hide(first.id)); // unchanged: no notification
      await store.moderate(restore(first.id));
      await waitFor("four notifications", () => heard.length === 4);
      expect(heard).toEqual([
        { bid: first, bidders: 1, moderation: 0, round: 1, endsAt: null },
        { moderation: 1 },
        { bid: second, bidders: 1, moderation: 1, round: 1, endsAt: null },
        { moderation: 2 },
      ]);
    });

    storeTest("pages the console's bids newest first, hidden ones included", async ({ store }) => {
      const ids: number[] = [];
      for (const cents of modelWinningAmounts(5)) ids.push(accepted(await store.placeBid(`B${cents}`, cents)).id);
      await store.moderate(hide(ids[4] as number));
      const first = await store.moderationView(null, 2);
      expect(first.bids.map((bid) => [bid.id, bid.hidden])).toEqual([
        [ids[4], true],
        [ids[3], false],
      ]);
      expect(first.olderBids).toBe(true);
      const last = await store.moderationView(ids[1] as number, 2);
      expect(last.bids.map((bid) => bid.id)).toEqual([ids[0]]);
      expect(last.olderBids).toBe(false);
    });

    storeTest(
      "gives bids stored before moderation their name keys when it opens, so a block finds them",
      async ({ location, store }) => {
        accepted(await store.placeBid("ÉMILE", 100));
        await store.close();
        await withDirectSql(location, (query) => query("UPDATE auction_bids SET bidder_key = NULL"));
        const reopened = await storeForThisTest(location);
        await reopened.moderate(block("émile"));
        expect((await reopened.view(50)).bids).toEqual([]);
      },
    );
  },
  120_000,
);

describe("a block that commits while a bid waits for the lock (PostgreSQL)", () => {
  const storeTest = storeTestOn("postgres");

  storeTest("refuses the bid as name_not_allowed and stores nothing of it", async ({ location, store }) => {
    accepted(await store.placeBid("Alice", 100));
    // One connection for the paused block, one to watch the bid wait.
    const sql = postgres(location.databaseUrl as string, { max: 2, onnotice: () => {} });
    try {
      // A block's transaction as moderate_auction runs it, paused while it holds the lock.
      const blocking = sql.begin(async (tx) => {
        await tx.unsafe("SELECT 1 FROM auction_state FOR UPDATE");
        await tx.unsafe("INSERT INTO auction_blocked_names (name_key, bidder_name) VALUES ('troll', 'Troll')");
        const bid = store.placeBid("Troll", 500);
        // The bid is past its pre-check (the block is not committed) and waits for the lock.
        await waitFor(
          "the bid waiting for the lock",
          async () =>
            (
              await sql`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%place_auction_bid%'`
            ).length === 1,
        );
        return { bid };
      });
      const outcome = await (await blocking).bid;
      expect(outcome).toMatchObject({ accepted: false, code: "name_not_allowed", highestCents: 100 });
      expect((await store.view(50)).bids.map((bid) => bid.bidderName)).toEqual(["Alice"]);
    } finally {
      await sql.end();
    }
  });
});
