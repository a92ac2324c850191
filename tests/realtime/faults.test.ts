/**
 * Faults under load (issue 6), on real PostgreSQL with every instance a real process: the database
 * restarting, an instance killed behind a load balancer, a connection cut without a close frame and
 * SIGTERM during load. Pages are the product's own realtime client (reconnect, heartbeat, resume),
 * and each test ends with the accounting of support/accounting.ts: nothing acknowledged lost,
 * nothing duplicated, every page saw every bid once in id order.
 *
 * SOAK=1 (npm run soak) runs the same tests longer: more pages and bids, repeated faults.
 */
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { postgresBinariesPresent, startPostgresCluster } from "../../scripts/support/postgresCluster.ts";
import { CLOSE_CODES } from "../../src/lib/auction/protocol.ts";
import {
  auditAuction,
  createLedger,
  type Ledger,
  placeRecorded,
  readStoredBids,
  startSteadyBidding,
} from "./support/accounting.ts";
import { startCuttableProxy } from "./support/cuttableProxy.ts";
import { balancerForThisTest } from "./support/loadBalancer.ts";
import { openPage, type Page } from "./support/pageClient.ts";
import { type ServiceProcess, startServiceProcess } from "./support/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, waitFor } from "./support/stores.ts";

const SOAK = process.env.SOAK === "1";
const scale = {
  pages: SOAK ? 16 : 4,
  maxBids: SOAK ? 50_000 : 2_000,
  /** Database outages, instance kills, cuts, SIGTERMs: one each by default. */
  faults: SOAK ? 8 : 1,
  /** Acknowledged bids to wait for before each fault and after the last. */
  acksBetweenFaults: SOAK ? 200 : 25,
};
const TEST_TIMEOUT_MS = SOAK ? 600_000 : 120_000;
/** A steady rate per page: about 25 bids/s each with the answer's round trip. */
const BID_INTERVAL_MS = 40;
const OUTAGE_MS = 1_500;
/** postgres.js retries a lost connection after at most 1 s; the rest is slack for a busy machine. */
const ANSWER_IN_OUTAGE_MS = 5_000;
/** The service's heartbeat in the cut test, the page's ping interval and its wait for an answer. */
const SERVICE_HEARTBEAT_MS = 1_000;
const PAGE_HEARTBEAT_MS = 300;
const PAGE_HEARTBEAT_TIMEOUT_MS = 1_000;
/** How long the service lets a close handshake run before cutting the socket (socketServer.ts). */
const CLOSE_GRACE_MS = 1_000;
/** Room for a busy machine on top of a timeout under test. */
const SLACK_MS = 3_000;

async function startService(databaseUrl: string, env: Record<string, string> = {}, port?: number) {
  const service = await startServiceProcess({ databaseUrl, env, port });
  cleanUpAfter(() => service.stop());
  return service;
}

/** A fresh database with two instances on it behind one load balancer, all removed after the test. */
async function twoInstancesBehindBalancer() {
  const database = await databaseForThisTest();
  // Mutable: a test may put a restarted instance in the place of a killed one.
  const instances: [ServiceProcess, ServiceProcess] = [
    await startService(database.url),
    await startService(database.url),
  ];
  const balancer = await balancerForThisTest(instances.map((instance) => instance.port));
  return { database, instances, balancer };
}

function openPages(prefix: string, urls: string[], count: number, options?: Parameters<typeof openPage>[2]) {
  const pages = Array.from({ length: count }, (_, index) =>
    openPage(`${prefix}${index + 1}`, urls[index % urls.length] as string, options),
  );
  cleanUpAfter(async () => {
    for (const page of pages) page.stop();
  });
  return pages;
}

async function allLive(pages: Page[], timeoutMs = 30_000) {
  await waitFor("every page live", () => pages.every((page) => page.isLive()), timeoutMs);
}

const acked = (ledger: Ledger) => ledger.attempts.filter((attempt) => attempt.outcome?.kind === "accepted").length;

async function moreAcks(ledger: Ledger, count: number, timeoutMs = 60_000) {
  const target = acked(ledger) + count;
  await waitFor(`${target} acknowledged bids (have ${acked(ledger)})`, () => acked(ledger) >= target, timeoutMs);
}

async function readyStatus(service: ServiceProcess): Promise<number> {
  return (await fetch(`${service.httpUrl}/readyz`).catch(() => null))?.status ?? 0;
}

async function openSockets(service: ServiceProcess): Promise<number> {
  const text = await (await fetch(service.metricsUrl)).text();
  return Number(/^auction_open_sockets (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

const crashes = (services: ServiceProcess[]) => services.filter((service) => service.crashed()).length;

describe.skipIf(!postgresBinariesPresent())("faults under load, real PostgreSQL", () => {
  it(
    "PostgreSQL stops and restarts while bids flow through 2 instances: bids meanwhile are answered unavailable, and every acknowledged bid reaches every socket that stayed open",
    async () => {
      // Its own cluster: the run's shared one must keep serving the other tests.
      const cluster = await startPostgresCluster();
      cleanUpAfter(() => cluster.destroy());
      const instances = [await startService(cluster.url), await startService(cluster.url)];
      const pages = openPages(
        "outage-",
        instances.map((instance) => instance.socketUrl),
        scale.pages,
      );
      await allLive(pages);
      const ledger = createLedger("outage");
      const bidding = startSteadyBidding(ledger, pages, { intervalMs: BID_INTERVAL_MS, maxBids: scale.maxBids });
      cleanUpAfter(() => bidding.stop());

      const outages: { from: number; to: number }[] = [];
      for (let outage = 0; outage < scale.faults; outage++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        await cluster.stop();
        const from = performance.now();
        for (const instance of instances) {
          await waitFor("/readyz 503", async () => (await readyStatus(instance)) === 503, 10_000);
        }
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        outages.push({ from, to: performance.now() });
        await cluster.start();
        for (const instance of instances) {
          await waitFor("/readyz 200", async () => (await readyStatus(instance)) === 200, 30_000);
        }
      }
      await moreAcks(ledger, scale.acksBetweenFaults);
      await bidding.stop();

      const audit = await auditAuction(ledger, pages, cluster.url, { crashes: crashes(instances) });
      console.log(audit.line);
      expect(audit.problems).toEqual([]);
      expect(audit.counts.crashes).toBe(0);
      // Every bid sent while both instances reported not ready was answered unavailable, promptly:
      // the desk refuses at once instead of letting the bid wait for the database to return.
      const duringOutages = ledger.attempts.filter((attempt) =>
        outages.some(({ from, to }) => attempt.sentAt >= from && attempt.sentAt < to),
      );
      expect(duringOutages.length).toBeGreaterThan(0);
      for (const attempt of duringOutages) {
        expect(attempt.outcome).toEqual({ kind: "refused", code: "unavailable" });
        expect((attempt.settledAt ?? Number.POSITIVE_INFINITY) - attempt.sentAt).toBeLessThan(ANSWER_IN_OUTAGE_MS);
      }
      // The sockets stayed open through it all: the catch-up, not a reconnect, brought the bids.
      expect(pages.map((page) => page.reopenings)).toEqual(pages.map(() => 0));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "one of 2 instances killed with SIGKILL behind a load balancer: its pages reconnect through it to the survivor and catch up",
    async () => {
      const { database, instances, balancer } = await twoInstancesBehindBalancer();
      const ports = instances.map((instance) => instance.port);
      const pages = openPages("kill-", [balancer.socketUrl], scale.pages);
      await allLive(pages);
      const ledger = createLedger("kill");
      const bidding = startSteadyBidding(ledger, pages, { intervalMs: BID_INTERVAL_MS, maxBids: scale.maxBids });
      cleanUpAfter(() => bidding.stop());

      let expectedReconnects = 0;
      const killed: ServiceProcess[] = [];
      for (let round = 0; round < scale.faults; round++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        // Alternate victims; a killed instance comes back on its port for the next round.
        const index = round % 2;
        const victim = instances[index] as ServiceProcess;
        const onVictim = balancer.openTo(victim.port);
        const routedBefore = balancer.routed.length;
        victim.signal("SIGKILL");
        expect((await victim.exited).signal).toBe("SIGKILL");
        killed.push(victim);
        expectedReconnects += onVictim;
        await waitFor(
          "the killed instance's pages to reconnect",
          () => pages.reduce((sum, page) => sum + page.reopenings, 0) >= expectedReconnects,
          30_000,
        );
        await allLive(pages);
        // Every reconnect went to the survivor.
        expect(new Set(balancer.routed.slice(routedBefore))).toEqual(new Set([ports[1 - index]]));
        if (round + 1 < scale.faults) {
          instances[index] = await startService(database.url, {}, victim.port);
        }
      }
      await moreAcks(ledger, scale.acksBetweenFaults);
      await bidding.stop();

      const audit = await auditAuction(ledger, pages, database.url, {
        crashes: crashes(instances.filter((instance) => !killed.includes(instance))),
      });
      console.log(audit.line);
      expect(audit.problems).toEqual([]);
      expect(audit.counts.crashes).toBe(0);
      expect(expectedReconnects).toBeGreaterThan(0);
      expect(audit.counts.reconnects).toBe(expectedReconnects);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a page whose acknowledgement outran the broadcasts resumes after the last bid it received, skipping none, when its instance is killed",
    async () => {
      const {
        database,
        instances: [victim, survivor],
        balancer,
      } = await twoInstancesBehindBalancer();
      // One at a time, so round-robin puts the first page on the victim and the second on the survivor.
      const onVictim = openPages("ahead-", [balancer.socketUrl], 1)[0] as Page;
      await allLive([onVictim]);
      const onSurvivor = openPages("other-", [balancer.socketUrl], 1)[0] as Page;
      await allLive([onSurvivor]);
      expect([balancer.openTo(victim.port), balancer.openTo(survivor.port)]).toEqual([1, 1]);

      // A first bid that both pages receive: the page on the victim has a bid to resume after.
      const ledger = createLedger("ahead");
      await placeRecorded(ledger, onSurvivor, "ahead survivor 1");
      await waitFor("the first broadcast", () => onVictim.lastReceivedId() > 0 && onSurvivor.lastReceivedId() > 0);

      // Notifications held up on their way (frozen LISTEN backends): acknowledgements still arrive.
      const admin = postgres(database.url, { max: 1, onnotice: () => {} });
      cleanUpAfter(() => admin.end());
      const listeners = (
        await admin`SELECT pid FROM pg_stat_activity
          WHERE application_name = 'nothing-store listen' AND datname = current_database()`
      ).map((row) => Number(row.pid));
      expect(listeners).toHaveLength(2);
      for (const pid of listeners) process.kill(pid, "SIGSTOP");
      const thaw = () => {
        for (const pid of listeners) {
          try {
            process.kill(pid, "SIGCONT");
          } catch {
            // Already gone: the killed instance's backend exits once thawed.
          }
        }
      };
      cleanUpAfter(async () => thaw());
      expect((await placeRecorded(ledger, onSurvivor, "ahead survivor 2")).kind).toBe("accepted");
      expect((await placeRecorded(ledger, onVictim, "ahead victim 3")).kind).toBe("accepted");
      // The page on the victim has its own bid acknowledged, but not the broadcast of the one before.
      expect(onVictim.received.map((bid) => bid.id)).toEqual([1]);
      expect(onVictim.acknowledged.map((bid) => bid.id)).toEqual([3]);

      victim.signal("SIGKILL");
      await waitFor("the page to resume on the survivor", () => onVictim.reopenings === 1 && onVictim.isLive(), 30_000);
      thaw();

      const audit = await auditAuction(ledger, [onVictim, onSurvivor], database.url, { crashes: crashes([survivor]) });
      console.log(audit.line);
      expect(audit.problems).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a connection cut without a close frame: both heartbeats notice within their timeouts, and the page resumes with nothing missed",
    async () => {
      const database = await databaseForThisTest();
      // Debug logs: the service says when it closes a socket for a missed heartbeat.
      const instance = await startService(database.url, {
        HEARTBEAT_INTERVAL_MS: String(SERVICE_HEARTBEAT_MS),
        LOG_LEVEL: "debug",
      });
      const heartbeatCloses = () =>
        instance.logs.filter((line) => line.msg === "closing a socket that missed its heartbeat").length;
      const relay = await startCuttableProxy(instance.port);
      cleanUpAfter(() => relay.close());
      const watched = openPages("cut-", [`ws://127.0.0.1:${relay.port}/realtime`], 1, {
        heartbeatIntervalMs: PAGE_HEARTBEAT_MS,
        heartbeatTimeoutMs: PAGE_HEARTBEAT_TIMEOUT_MS,
      })[0] as Page;
      const others = openPages("steady-", [instance.socketUrl], scale.pages - 1);
      const pages = [watched, ...others];
      await allLive(pages);
      const ledger = createLedger("cut");
      const bidding = startSteadyBidding(ledger, pages, { intervalMs: BID_INTERVAL_MS, maxBids: scale.maxBids });
      cleanUpAfter(() => bidding.stop());

      let placedWhileAway = 0;
      for (let cut = 0; cut < scale.faults; cut++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        const reconnectsBefore = watched.reopenings;
        const closesBefore = watched.closeCodes.length;
        const heartbeatClosesBefore = heartbeatCloses();
        const cutAt = performance.now();
        expect(relay.cutAll()).toBe(1);
        await waitFor(
          "the page to notice the dead connection",
          () => watched.statuses.at(-1) === "reconnecting",
          PAGE_HEARTBEAT_MS + PAGE_HEARTBEAT_TIMEOUT_MS + SLACK_MS,
        );
        const noticedMs = performance.now() - cutAt;
        // The heartbeat noticed, not a close event: nothing at all reached the page.
        expect(watched.closeCodes).toHaveLength(closesBefore);
        // A ping sent just before the cut may already have started the wait.
        expect(noticedMs).toBeGreaterThanOrEqual(PAGE_HEARTBEAT_TIMEOUT_MS - PAGE_HEARTBEAT_MS);
        await waitFor("the page to resume", () => watched.reopenings > reconnectsBefore && watched.isLive(), 30_000);
        const backAt = performance.now();
        const acceptedWhileAway = ledger.attempts.filter(
          ({ page, outcome, settledAt = 0 }) =>
            page !== watched.label && outcome?.kind === "accepted" && settledAt > cutAt && settledAt < backAt,
        ).length;
        placedWhileAway += acceptedWhileAway;
        // The service's heartbeat closes its side of the dead connection (4408, then cut when the
        // close handshake cannot finish): one socket per page again, not one more. Bounded from the cut.
        const serviceDeadline = cutAt + 2 * SERVICE_HEARTBEAT_MS + CLOSE_GRACE_MS + SLACK_MS;
        await waitFor(
          "the service to drop the dead socket",
          async () => heartbeatCloses() > heartbeatClosesBefore && (await openSockets(instance)) === pages.length,
          Math.max(0, serviceDeadline - performance.now()),
        );
        console.log(
          `[cut] noticed by the page after ${Math.round(noticedMs)} ms, resumed after ${Math.round(backAt - cutAt)} ms, ` +
            `dropped by the service within ${Math.round(performance.now() - cutAt)} ms; ${acceptedWhileAway} bids accepted while away`,
        );
      }
      await moreAcks(ledger, scale.acksBetweenFaults);
      await bidding.stop();

      const audit = await auditAuction(ledger, pages, database.url, { crashes: crashes([instance]) });
      console.log(audit.line);
      expect(audit.problems).toEqual([]);
      expect(watched.reopenings).toBe(scale.faults);
      expect(others.map((page) => page.reopenings)).toEqual(others.map(() => 0));
      // Bids were accepted while the page was away, and it got them through its resumes.
      expect(placedWhileAway).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "SIGTERM during load behind a load balancer: in-flight bids finish, sockets close with 1001, the pages move to the survivor and nothing acknowledged is lost",
    async () => {
      const { database, instances, balancer } = await twoInstancesBehindBalancer();
      const pages = openPages("term-", [balancer.socketUrl], scale.pages);
      await allLive(pages);
      const ledger = createLedger("sigterm");
      // No pause between bids: a flood, so bids are at the database when the signal comes.
      const bidding = startSteadyBidding(ledger, pages, { intervalMs: 0, maxBids: scale.maxBids });
      cleanUpAfter(() => bidding.stop());

      let drained = 0;
      const stopped: ServiceProcess[] = [];
      let ackedAfterSignal = 0;
      for (let round = 0; round < scale.faults; round++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        const index = round % 2;
        const victim = instances[index] as ServiceProcess;
        const onVictim = balancer.openTo(victim.port);
        const reconnectsBefore = pages.reduce((sum, page) => sum + page.reopenings, 0);
        const inFlight = ledger.attempts.filter((attempt) => !attempt.outcome);
        victim.signal("SIGTERM");
        const signalledAt = performance.now();
        expect(await victim.exited).toEqual({ code: 0, signal: null });
        stopped.push(victim);
        drained += onVictim;
        ackedAfterSignal += inFlight.filter(
          (attempt) => attempt.outcome?.kind === "accepted" && (attempt.settledAt ?? 0) > signalledAt,
        ).length;
        await waitFor(
          "the drained instance's pages to reconnect",
          () => pages.reduce((sum, page) => sum + page.reopenings, 0) >= reconnectsBefore + onVictim,
          30_000,
        );
        await allLive(pages);
        if (round + 1 < scale.faults) instances[index] = await startService(database.url, {}, victim.port);
      }
      await moreAcks(ledger, scale.acksBetweenFaults);
      await bidding.stop();

      const audit = await auditAuction(ledger, pages, database.url, {
        crashes: crashes(instances.filter((instance) => !stopped.includes(instance))),
      });
      console.log(`${audit.line} acked_after_sigterm=${ackedAfterSignal}`);
      expect(audit.problems).toEqual([]);
      expect(audit.counts.crashes).toBe(0);
      expect(drained).toBeGreaterThan(0);
      expect(audit.counts.reconnects).toBe(drained);
      // Each drained socket was closed with 1001, none cut.
      const closes = pages.flatMap((page) => page.closeCodes);
      expect(closes).toEqual(closes.map(() => CLOSE_CODES.goingAway));
      expect(closes).toHaveLength(drained);
    },
    TEST_TIMEOUT_MS,
  );
});

describe.skipIf(!postgresBinariesPresent())("SIGTERM with a bid held at the database", () => {
  /** Holds the auction_state row lock in an open transaction: every bid waits at the database. */
  /** Backends the service's pool left on the database (its LISTEN connection has another name). */
  async function serviceBackends(databaseUrl: string): Promise<number> {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'nothing-store'`;
      return Number(row?.n);
    } finally {
      await sql.end();
    }
  }

  async function holdBidLock(databaseUrl: string) {
    // Two connections: one holds the lock, the other watches who waits for it.
    const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    const session = await sql.reserve();
    await session`BEGIN`;
    await session`SELECT * FROM auction_state FOR UPDATE`;
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await session`ROLLBACK`;
      session.release();
      await sql.end();
    };
    cleanUpAfter(release);
    return {
      release,
      /** Backends waiting for the lock: a bid at the database. */
      async waiting(): Promise<number> {
        const [row] = await sql`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND application_name = 'nothing-store'`;
        return Number(row?.n);
      },
    };
  }

  /** One instance on a fresh database, and one page on it whose bid of $42 waits for the lock the test holds. */
  async function bidHeldAtTheDatabase(bidderName: string, env: Record<string, string> = {}) {
    const database = await databaseForThisTest();
    const instance = await startService(database.url, env);
    const page = openPages("held-", [instance.socketUrl], 1)[0] as Page;
    await allLive([page]);
    const lock = await holdBidLock(database.url);
    const outcome = page.placeBid(bidderName, 4200);
    await waitFor("the bid to wait for the lock", async () => (await lock.waiting()) === 1);
    return { database, instance, page, lock, outcome };
  }

  it(
    "the drain waits for the held bid: acknowledged once released, then 1001 and exit code 0",
    async () => {
      const { database, instance, page, lock, outcome } = await bidHeldAtTheDatabase("Held at the database");

      instance.signal("SIGTERM");
      await waitFor("the drain to begin", () => instance.logs.some((line) => line.msg === "shutting down"));
      // Drained means not accepting: the balancer's probe and new pages are refused from now on.
      await waitFor("the port to close", async () => (await readyStatus(instance)) === 0);
      // Still running: the acknowledgement below can only come from a process that waited for the bid.
      expect(instance.child.exitCode).toBeNull();
      expect(page.closeCodes).toEqual([]);

      await lock.release();
      const answer = await outcome;
      expect(answer).toMatchObject({
        kind: "accepted",
        bid: { bidderName: "Held at the database", amountCents: 4200 },
      });
      await waitFor("the socket to close", () => page.closeCodes.length > 0);
      expect(page.closeCodes[0]).toBe(CLOSE_CODES.goingAway);
      expect(await instance.exited).toEqual({ code: 0, signal: null });
      expect((await readStoredBids(database.url)).map((row) => row.name)).toEqual(["Held at the database"]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a held bid that outlasts SHUTDOWN_TIMEOUT_MS: exit code 1 with a log line, the bid unacknowledged and stored at most once",
    async () => {
      const timeoutMs = 1_500;
      const { database, instance, page, lock, outcome } = await bidHeldAtTheDatabase("Stuck at the database", {
        SHUTDOWN_TIMEOUT_MS: String(timeoutMs),
      });

      instance.signal("SIGTERM");
      const signalledAt = performance.now();
      expect(await instance.exited).toEqual({ code: 1, signal: null });
      const tookMs = performance.now() - signalledAt;
      expect(tookMs).toBeGreaterThanOrEqual(timeoutMs - 100);
      expect(tookMs).toBeLessThan(timeoutMs + SLACK_MS);
      expect(instance.logs.map((line) => line.msg)).toContain("shutdown took too long; exiting anyway");
      expect(await outcome).toEqual({ kind: "no_answer" });
      // No drain, no close frame: the page sees the connection drop (1006) and reconnects.
      expect(page.closeCodes[0]).toBe(1006);

      // Released after the process is gone, the statement it left behind may still commit: the
      // bid is then stored, unacknowledged, once. It is never stored twice.
      await lock.release();
      // A barrier instead of a pause: once the dead instance's backend is gone, its statement is done.
      await waitFor("the dead instance's statement to finish", async () => (await serviceBackends(database.url)) === 0);
      const stored = (await readStoredBids(database.url)).filter((row) => row.name === "Stuck at the database");
      console.log(
        `[drain timeout] exit 1 after ${Math.round(tookMs)} ms; the unacknowledged bid stored ${stored.length} time(s)`,
      );
      expect(stored.length).toBeLessThanOrEqual(1);
    },
    TEST_TIMEOUT_MS,
  );
});
