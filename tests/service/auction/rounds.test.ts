/**
 * Rounds end to end through the real service (docs/design.md#6b): short rounds on both backends, two
 * instances on one PostgreSQL database behind the load balancer, visitors' pages on the product's
 * own auction connection. The end reaches every page once, on time, with or without a new bid; a
 * soft-close bid moves the end on every page; the next bid opens the next round; bids racing the
 * end land in exactly one round; and a page whose instance is killed, or whose connection is cut,
 * across an end shows the winner and the new round once it is back.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import type { BidStore, RoundSettings } from "../../../service/storage/types.ts";
import { type Instance, startInstances } from "../harness/auctionService.ts";
import { startCuttableProxy } from "../harness/cuttableProxy.ts";
import { balancerForThisTest } from "../harness/loadBalancer.ts";
import { openVisitor, placed, type Visitor } from "../harness/pageClient.ts";
import { startServiceProcess } from "../harness/serviceProcess.ts";
import {
  BACKENDS,
  type Backend,
  cleanUpAfter,
  databaseForThisTest,
  locationForThisTest,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

/** How late after its end a round's end may reach a page: the instances' timers, one read, one write. */
const END_ON_TIME_MS = 1_000;
/**
 * A page's heartbeat that notices a cut within about 1.3 s rather than the product's 35 s (docs/product-reference.md#9), and still
 * tolerates a stall of a second on a loaded machine (200 ms was within reach of an ordinary pause,
 * which would reconnect the page).
 */
const QUICK_HEARTBEAT = { intervalMs: 300, timeoutMs: 1_000 };

/** PostgreSQL: two instances on one database; PGlite (in-process, one opener): one. */
async function setUp(backend: Backend, rounds: RoundSettings) {
  const location = await locationForThisTest(backend);
  const instances = await startInstances(location, backend === "postgres" ? 2 : 1, { rounds });
  const balancer = await balancerForThisTest(instances.map((instance) => instance.port));
  return { location, instances, balancer, store: (instances[0] as Instance).store };
}

async function allLive(visitors: Visitor[]) {
  await waitFor("every page live", () => visitors.every((visitor) => visitor.$auction.get().status === "live"));
}

/** What a page shows of the round: its number, whether it ended, the ids listed, the leader, the count. */
function shown(visitor: Visitor) {
  const { bids, highest, bidders, round } = visitor.$auction.get();
  return {
    round: round?.number ?? null,
    ended: round?.ended ?? null,
    ids: bids.map((bid) => bid.id),
    highest: highest?.id ?? null,
    bidders,
  };
}

function endsAt(visitor: Visitor): string | null {
  return visitor.$auction.get().round?.endsAt ?? null;
}

describe.each(BACKENDS)("rounds on %s", (backend) => {
  it("announces the end once on every page without a new bid, then the next bid opens round 2 with its own list", async () => {
    const { balancer } = await setUp(backend, { roundSeconds: 2, softCloseSeconds: 1 });
    const visitors = [0, 1, 2].map(() => openVisitor(balancer.socketUrl));
    await allLive(visitors);
    const [alice, bob, carol] = visitors as [Visitor, Visitor, Visitor];
    await placed(alice, "Alice", 500);
    const winning = await placed(bob, "Bob", 700);
    await waitFor("round 1 with its end on every page", () =>
      visitors.every((visitor) => shown(visitor).highest === winning.id && endsAt(visitor) !== null),
    );
    const end = Date.parse(endsAt(alice) as string);
    expect(end - Date.parse(winning.createdAt)).toBeGreaterThanOrEqual(1_000);
    expect(end - Date.parse(winning.createdAt)).toBeLessThanOrEqual(2_000);

    await waitFor(
      "the end on every page",
      () => visitors.every((visitor) => shown(visitor).ended === true),
      end - Date.now() + END_ON_TIME_MS,
    );
    for (const visitor of visitors) {
      expect(shown(visitor)).toMatchObject({ round: 1, ended: true, highest: winning.id, bidders: 2 });
      // The winner's own page hears it personally (docs/product-behaviour.md#4-auction).
      expect(visitor.sold()).toEqual([visitor === bob ? "You won for $7.00!" : "Sold to Bob for $7.00"]);
      expect(visitor.$auction.get().pastWinners[0]).toMatchObject({ round: 1, bid: winning });
    }
    // The winner's page, and only it, celebrates.
    expect(visitors.map((visitor) => visitor.$won.get()?.bid.id ?? null)).toEqual([null, winning.id, null]);

    // Far below round 1's highest: the next bid opens round 2 and is judged against nothing.
    const opening = await placed(carol, "Carol", 1);
    await waitFor("round 2 on every page", () => visitors.every((visitor) => shown(visitor).round === 2));
    for (const visitor of visitors) {
      expect(shown(visitor)).toEqual({ round: 2, ended: false, ids: [opening.id], highest: opening.id, bidders: 1 });
      // That bid was the barrier: every page has heard everything before it, and still one Sold!.
      expect(visitor.sold()).toHaveLength(1);
    }
    // A page that opens now sees round 2, and round 1 among the past winners, with no toast.
    const late = openVisitor(balancer.socketUrl);
    await allLive([late]);
    await waitFor("the late page's snapshot", () => shown(late).round === 2);
    expect(late.$auction.get().pastWinners.map((past) => past.round)).toEqual([1]);
    expect(late.sold()).toEqual([]);
  });

  it("moves the end on every page when a bid lands in the soft-close window, and ends then", async () => {
    const { balancer, store } = await setUp(backend, { roundSeconds: 3, softCloseSeconds: 2 });
    const visitors = [0, 1].map(() => openVisitor(balancer.socketUrl));
    await allLive(visitors);
    const [first, second] = visitors as [Visitor, Visitor];
    const opening = await placed(first, "Early", 100);
    await waitFor("the first end on every page", () => visitors.every((visitor) => endsAt(visitor) !== null));
    const firstEnd = endsAt(first) as string;
    expect(Date.parse(firstEnd) - Date.parse(opening.createdAt)).toBe(3_000);

    // Inside the last 2 s of the round (by this machine's clock, which is the database's here), as
    // early as the window allows: the bid then has 1.9 s to be stored before the round ends.
    await waitFor("the soft-close window", () => Date.parse(firstEnd) - Date.now() < 1_900, 5_000);
    const sniped = await placed(second, "Sniper", 200);
    const movedEnd = new Date(Date.parse(sniped.createdAt) + 2_000).toISOString();
    expect(Date.parse(movedEnd)).toBeGreaterThan(Date.parse(firstEnd));
    await waitFor("the moved end on every page", () => visitors.every((visitor) => endsAt(visitor) === movedEnd));

    await waitFor(
      "the end on every page",
      () => visitors.every((visitor) => shown(visitor).ended === true),
      Date.parse(movedEnd) - Date.now() + END_ON_TIME_MS,
    );
    for (const visitor of visitors) {
      expect(visitor.sold()).toEqual([visitor === second ? "You won for $2.00!" : "Sold to Sniper for $2.00"]);
    }
    expect((await store.winners(5))[0]).toEqual({
      round: 1,
      bid: expect.objectContaining({ id: sniped.id }),
      endedAt: movedEnd,
    });
  });
});

describe("bids racing a round's end (PostgreSQL, two instances)", () => {
  it("puts each accepted bid in the old round before its end or in the new one, never both, none lost", async () => {
    const { location, instances, balancer } = await setUp("postgres", { roundSeconds: 1, softCloseSeconds: 0 });
    const watcher = openVisitor(balancer.socketUrl);
    await allLive([watcher]);
    const stores = instances.map((instance) => instance.store);
    const first = await (stores[0] as BidStore).placeBid("Opener", 100);
    if (!first.accepted || first.endsAt === null) throw new Error("the first bid did not open a timed round");
    const end = Date.parse(first.endsAt);

    // Waves of concurrent bids through both instances' stores, from 300 ms before the end to
    // 300 ms after it, each above every earlier one so that any may be accepted.
    await waitFor("300 ms before the end", () => end - Date.now() < 300, 5_000);
    const outcomes = [];
    for (let wave = 0; wave < 12 && Date.now() < end + 300; wave++) {
      const placements = Array.from({ length: 8 }, (_, index) =>
        (stores[index % stores.length] as BidStore).placeBid(`Racer ${wave}.${index}`, 200 + (wave * 8 + index) * 100),
      );
      outcomes.push(...(await Promise.all(placements)));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const acceptedBids = outcomes.filter((outcome) => outcome.accepted);
    expect(acceptedBids.length).toBeGreaterThan(0);
    // Every bid was answered as in one round or the other, and round 1's end was recorded once:
    // by an instance's timer or by the first bid after it (these go to the stores directly), never both.
    expect(outcomes.every((outcome) => outcome.round === 1 || outcome.round === 2)).toBe(true);
    expect(outcomes.some((outcome) => outcome.round === 2)).toBe(true);
    const closedByTimers = await Promise.all(
      instances.map(async ({ service }) => (await service.metrics.roundsClosed.get()).values[0]?.value ?? 0),
    );
    const closedByBids = outcomes.filter((outcome) => outcome.closedRoundBids !== null).length;
    expect(closedByTimers.reduce((sum, count) => sum + count, closedByBids)).toBe(1);

    const rows = await withDirectSql(location, (query) =>
      query(`SELECT b.id::int AS id, b.round_number::int AS round, (b.amount * 100)::int AS cents,
                 b.created_at < (SELECT r.ends_at FROM auction_rounds r WHERE r.number = 1) AS before_end
               FROM auction_bids b ORDER BY b.id`),
    );
    const roundOneEnd = await withDirectSql(location, (query) =>
      query("SELECT auction_time_text(ends_at) AS ends_at FROM auction_rounds WHERE number = 1"),
    );
    expect(roundOneEnd[0]?.ends_at).toBe(first.endsAt);
    // Stored once each: exactly the acknowledged bids, the opener included.
    const acknowledged = [first, ...acceptedBids].map((outcome) => (outcome.accepted ? outcome.bid.id : 0));
    expect(rows.map((row) => row.id).sort((a, b) => Number(a) - Number(b))).toEqual(
      [...acknowledged].sort((a, b) => a - b),
    );
    for (const outcome of acceptedBids) {
      if (!outcome.accepted) continue;
      const row = rows.find((stored) => stored.id === outcome.bid.id);
      expect(row?.round).toBe(outcome.round);
      // Round 1's bids came before its end; round 2's at or after it.
      expect(row?.before_end).toBe(outcome.round === 1);
    }
    // Within each round the accepted amounts rise strictly in id order.
    for (const round of [1, 2]) {
      const amounts = rows.filter((row) => row.round === round).map((row) => Number(row.cents));
      expect(amounts).toEqual([...amounts].sort((a, b) => a - b));
      expect(new Set(amounts).size).toBe(amounts.length);
    }
    // The page ends up showing what was stored for the round it is in.
    const last = rows.at(-1);
    await waitFor("the watcher in the last round", () => shown(watcher).highest === last?.id);
    expect(shown(watcher).ids).toEqual(
      rows
        .filter((row) => row.round === last?.round)
        .map((row) => row.id)
        .reverse(),
    );
  });
});

describe("a page away across a round's end (PostgreSQL)", () => {
  it("shows the winner once and the new round after its instance is killed across the end", async () => {
    const database = await databaseForThisTest();
    const env = { AUCTION_ROUND_SECONDS: "2", AUCTION_SOFT_CLOSE_SECONDS: "0" };
    const processes = [
      await startServiceProcess({ databaseUrl: database.url, env }),
      await startServiceProcess({ databaseUrl: database.url, env }),
    ];
    for (const service of processes) cleanUpAfter(() => service.stop());
    const balancer = await balancerForThisTest(processes.map((service) => service.port));
    // One after the other: the balancer records its routes in the order their probes finish.
    const away = openVisitor(balancer.socketUrl, QUICK_HEARTBEAT);
    await allLive([away]);
    const awayOn = balancer.routed[0] as number;
    const other = openVisitor(balancer.socketUrl);
    await allLive([other]);

    const winning = await placed(other, "Winner", 4_200);
    await waitFor("the bid on the page", () => shown(away).highest === winning.id);
    const end = Date.parse(endsAt(away) as string);
    // The page's instance dies before the end; the page reconnects to the survivor after it.
    processes.find((service) => service.port === awayOn)?.signal("SIGKILL");
    await waitFor("the end on the page that moved", () => shown(away).ended === true, end - Date.now() + 15_000);
    expect(away.$auction.get().status).toBe("live");
    expect(shown(away)).toMatchObject({ round: 1, ended: true, highest: winning.id });
    expect(away.sold()).toEqual(["Sold to Winner for $42.00"]);

    const next = await placed(other, "Next", 100);
    await waitFor("round 2 on the page", () => shown(away).highest === next.id);
    expect(shown(away)).toEqual({ round: 2, ended: false, ids: [next.id], highest: next.id, bidders: 1 });
    expect(away.sold()).toHaveLength(1);
  });

  it("shows the winner once and the new round after its connection was cut across the end and a new bid", async () => {
    const { instances } = await setUp("postgres", { roundSeconds: 2, softCloseSeconds: 0 });
    const [instanceA, instanceB] = instances as [Instance, Instance];
    const relay = await startCuttableProxy(instanceA.port);
    onTestFinished(() => relay.close());
    const away = openVisitor(`ws://127.0.0.1:${relay.port}/realtime`, QUICK_HEARTBEAT);
    const other = openVisitor(instanceB.service.socketUrl);
    await allLive([away, other]);

    const winning = await placed(other, "Winner", 900);
    // Both pages: the answer to Winner's bid can reach the other page before the bid's broadcast
    // does, and the round's end comes with the broadcast.
    await waitFor("the bid and its round's end on both pages", () =>
      [away, other].every((visitor) => shown(visitor).highest === winning.id && endsAt(visitor) !== null),
    );
    // Cut while the round ends and the next one opens: the page hears none of it.
    relay.goDown();
    const end = Date.parse(endsAt(other) as string);
    await waitFor("the end on the other page", () => shown(other).ended === true, end - Date.now() + END_ON_TIME_MS);
    const next = await placed(other, "Next", 50);
    relay.comeBack();
    await waitFor("the page back in round 2", () => shown(away).highest === next.id, 10_000);
    expect(shown(away)).toEqual({ round: 2, ended: false, ids: [next.id], highest: next.id, bidders: 1 });
    expect(away.sold()).toEqual(["Sold to Winner for $9.00"]);
    expect(away.$auction.get().pastWinners[0]).toMatchObject({ round: 1, bid: winning });
  });
});
