/**
 * PostgreSQL goes away and comes back (docs/design.md#4): the store reports not ready at once, bids fail
 * fast with StoreUnavailableError instead of hanging, and after the restart it LISTENs again by
 * itself, with every acknowledged bid still there. This file stops its own cluster, never the
 * run's shared one.
 */
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PostgresCluster,
  postgresBinariesPresent,
  startPostgresCluster,
} from "../../../scripts/harness/postgresCluster.ts";
import { openPostgresStore } from "../../../service/storage/postgres.ts";
import { PLACE_BID_SQL, placeBidParameters } from "../../../service/storage/queries.ts";
import type { BidNotice, BidStore } from "../../../service/storage/types.ts";
import { ENDLESS_ROUNDS, StoreUnavailableError } from "../../../service/storage/types.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { modelRisingAmounts } from "../harness/auctionModel.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { openTestStore, testLogger, waitFor } from "../harness/stores.ts";

// Refused connections fail at once; this bounds the worst case (a server mid-shutdown).
const UNAVAILABLE_WITHIN_MS = 3_000;
const RECOVERY_WITHIN_MS = 15_000;

describe.skipIf(!postgresBinariesPresent())("the PostgreSQL store through an outage", () => {
  let cluster: PostgresCluster;
  let store: BidStore;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });

  afterAll(async () => {
    await store?.close();
    await cluster?.destroy();
  });

  it("reports not ready, refuses bids quickly, then recovers with LISTEN and every acknowledged bid", async () => {
    store = await openTestStore({ backend: "postgres", databaseUrl: cluster.url, dataDir: "", remove: async () => {} });
    const readiness: boolean[] = [];
    const notices: BidNotice[] = [];
    store.onReadyChange((ready) => readiness.push(ready));
    store.onBid((notice) => notices.push(notice));
    expect(store.isReady()).toBe(true);

    // Bids keep coming while the server stops: whatever was acknowledged must survive.
    const acknowledged: number[] = [];
    let unavailable = 0;
    let bidding = true;
    const nextCents = modelRisingAmounts(100);
    const bidder = (async () => {
      while (bidding) {
        try {
          const outcome = await store.placeBid("steady", nextCents());
          if (outcome.accepted) acknowledged.push(outcome.bid.id);
        } catch (error) {
          expect(error).toBeInstanceOf(StoreUnavailableError);
          unavailable++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    })();
    await waitFor("some acknowledged bids", () => acknowledged.length >= 20);

    await cluster.stop();
    await waitFor("not ready", () => !store.isReady(), UNAVAILABLE_WITHIN_MS);
    expect(readiness).toEqual([false]);
    await waitFor("bids to be refused", () => unavailable > 0, UNAVAILABLE_WITHIN_MS);
    bidding = false;
    await bidder;

    const started = Date.now();
    await expect(store.placeBid("during", 1_000_000)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.view(10)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.bidsAfter(0, 10)).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(UNAVAILABLE_WITHIN_MS);

    await cluster.start();
    await waitFor("ready again", () => store.isReady(), RECOVERY_WITHIN_MS);
    expect(readiness).toEqual([false, true]);

    // Nothing acknowledged was lost.
    const stored = (await store.bidsAfter(0, 10_000)).bids.map((bid) => bid.id);
    expect(stored).toEqual(expect.arrayContaining(acknowledged));

    // LISTEN is back: a new bid, placed through another connection, is heard.
    const other = postgres(cluster.url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await other.unsafe(
        PLACE_BID_SQL,
        placeBidParameters("after the outage", 2_000_000, ENDLESS_ROUNDS),
      );
      await waitFor("the notice of the bid after the outage", () =>
        notices.some((notice) => notice.bid.id === Number(row?.id)),
      );
    } finally {
      await other.end();
    }
    const fresh = await store.placeBid("through the store", 3_000_000);
    expect(fresh.accepted).toBe(true);
    await waitFor("the notice of the store's own bid", () => notices.at(-1)?.bid.bidderName === "through the store");
    await store.close();
  });

  it("replaces a LISTEN connection that stops answering without closing", async () => {
    // 1 s rather than less: a heartbeat slowed by a busy machine must not look like a frozen backend.
    const heartbeatMs = 1_000;
    store = await openPostgresStore({ databaseUrl: cluster.url, logger: testLogger(), listenHeartbeatMs: heartbeatMs });
    const readiness: boolean[] = [];
    const notices: BidNotice[] = [];
    store.onReadyChange((ready) => readiness.push(ready));
    store.onBid((notice) => notices.push(notice));
    const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
    let frozenPid = 0;
    try {
      const listeners = await admin`SELECT pid FROM pg_stat_activity WHERE application_name = 'nothing-store listen'`;
      expect(listeners).toHaveLength(1);
      frozenPid = Number(listeners[0]?.pid);
      // A frozen backend keeps its socket open: only the heartbeat can tell.
      process.kill(frozenPid, "SIGSTOP");
      // The new connection usually LISTENs within milliseconds: watch the events, not the state.
      // Noticed within two heartbeats (one sent, one unanswered); the rest is slack for a busy machine.
      await waitFor("not ready", () => readiness.includes(false), 5 * heartbeatMs);
      await waitFor("ready on a new connection", () => store.isReady(), RECOVERY_WITHIN_MS);
      expect(readiness.slice(0, 2)).toEqual([false, true]);
      const outcome = await store.placeBid("heard again", 9_000_000);
      expect(outcome.accepted).toBe(true);
      await waitFor("the notice", () => notices.some((notice) => notice.bid.bidderName === "heard again"));
    } finally {
      if (frozenPid) {
        process.kill(frozenPid, "SIGCONT");
        await admin`SELECT pg_terminate_backend(${frozenPid})`;
      }
      await admin.end();
      await store.close();
    }
  });

  it("answers every bid of a batch caught by an outage: none stored, or each once, never half of it", async () => {
    store = await openTestStore({ backend: "postgres", databaseUrl: cluster.url, dataDir: "", remove: async () => {} });
    const before = await store.placeBid("before the outage", 50_000_000);
    expect(before.accepted).toBe(true);
    // Another session holds the auction's lock, so the batch waits at the database, mid-transaction.
    const holder = postgres(cluster.url, { max: 2, onnotice: () => {} });
    const lock = await holder.reserve();
    await lock`BEGIN`;
    await lock`SELECT 1 FROM auction_state FOR UPDATE`;
    const caught = Array.from({ length: 6 }, (_, index) => ({
      bidderName: `caught ${index}`,
      amountCents: 60_000_000 + index,
    }));
    const batch = store.placeBids(caught).then(
      (outcomes) => outcomes,
      (error: unknown) => error,
    );
    await waitFor("the batch waiting for the lock", async () => {
      const waiting = await holder`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`;
      return waiting[0]?.n === 1;
    });
    await cluster.stop();
    // Usually the shutdown ends the waiting batch: unavailable, rolled back whole. It may also get
    // the lock as the holder's session is ended first and commit before its own end: then answered.
    const answer = await batch;
    lock.release();
    await holder.end({ timeout: 1 }).catch(() => {});

    await cluster.start();
    await waitFor("ready again", () => store.isReady(), RECOVERY_WITHIN_MS);
    const names = (await store.bidsAfter(0, 10_000)).bids.map((bid) => bid.bidderName);
    const stored = names.filter((name) => name.startsWith("caught"));
    if (answer instanceof StoreUnavailableError) {
      // No bid of it half-stored.
      expect(stored).toEqual([]);
    } else {
      // Every bid answered, and each accepted one stored once.
      expect(Array.isArray(answer) && answer.every((outcome) => outcome.accepted)).toBe(true);
      expect(stored).toEqual(caught.map((bid) => bid.bidderName));
    }
    expect(names.filter((name) => name === "before the outage")).toHaveLength(1);
    await store.close();
  });

  it("logs the outage a service lives through in lines without a stack: it is expected, not a bug", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = testLogger((line) => lines.push(line));
    store = await openTestStore(
      { backend: "postgres", databaseUrl: cluster.url, dataDir: "", remove: async () => {} },
      { logger },
    );
    const service = await startAuctionService(store, {}, logger);
    try {
      const client = await connectClient(service.socketUrl);
      const opening = await client.opening();
      // Above what the tests before placed on this cluster (dollars, as a visitor types them).
      const dollars = Math.ceil(("highest" in opening ? (opening.highest?.amountCents ?? 0) : 0) / 100) + 1;
      expect((await client.bid("before the outage", dollars)).type).toBe("accepted");

      await cluster.stop();
      await waitFor("not ready", () => !store.isReady(), UNAVAILABLE_WITHIN_MS);
      // What visitors do meanwhile: bid, open the page (a new socket), read the winners.
      expect((await client.bid("during the outage", dollars + 1)).type).toBe("error");
      const late = await connectClient(service.socketUrl);
      expect((await late.closed).code).toBe(1013);
      expect((await fetch(`${service.httpUrl}/auction/winners`)).status).toBe(503);

      await cluster.start();
      await waitFor("ready again", () => store.isReady(), RECOVERY_WITHIN_MS);
      expect((await client.bid("after the outage", dollars + 2)).type).toBe("accepted");
      await client.close();
    } finally {
      await service.stop();
      await store.close();
    }
    const warnings = lines.filter((line) => Number(line.level) >= 40);
    expect(warnings.length).toBeGreaterThan(0);
    // Every warning of the outage is one line: no error serialised with its stack.
    const withStacks = warnings.filter((line) => JSON.stringify(line).includes('"stack"'));
    expect(withStacks.map((line) => line.msg)).toEqual([]);
    expect(warnings.filter((line) => Number(line.level) >= 50).map((line) => line.msg)).toEqual([]);
  });

  it("fails to open with StoreUnavailableError when the server is down", async () => {
    await cluster.stop();
    const started = Date.now();
    await expect(
      openTestStore(
        { backend: "postgres", databaseUrl: cluster.url, dataDir: "", remove: async () => {} },
        { logger: testLogger() },
      ),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    await cluster.start();
  });
});
