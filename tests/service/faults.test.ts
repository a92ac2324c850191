/**
 * Faults under load (issue 6), on real PostgreSQL with every instance a real process: the database
 * restarting, an instance killed behind a load balancer, a connection cut without a close frame and
 * SIGTERM during load. Pages are the product's own realtime client (reconnect, heartbeat, resume).
 * Through each fault the operator works at the console over HTTP (issue 23): signed in with the
 * password, it hides and restores bids and blocks and unblocks a troll who keeps bidding under one
 * name, trying again whenever the console cannot answer; and rounds of 3 s keep ending. Each test
 * ends with the accounting of harness/accounting.ts: nothing acknowledged lost, nothing
 * duplicated, every page's bids in id order with none skipped, every console action applied
 * exactly once, and every page's final state equal to the database's.
 *
 * SOAK=1 (npm run soak) runs the same tests longer: more pages and bids, repeated faults.
 */
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { postgresBinariesPresent, startPostgresCluster } from "../../scripts/harness/postgresCluster.ts";
import { hashPassword } from "../../service/console/password.ts";
import { CLOSE_CODES } from "../../src/lib/auction/protocol.ts";
import { SERVICE_TEST_MS, scaled } from "../harness/timeBudgets.ts";
import {
  acknowledged,
  auditAuction,
  createLedger,
  type Ledger,
  placeRecorded,
  readStoredBids,
  startSteadyBidding,
} from "./harness/accounting.ts";
import { startCuttableProxy } from "./harness/cuttableProxy.ts";
import { balancerForThisTest } from "./harness/loadBalancer.ts";
import { openPage, type Page } from "./harness/pageClient.ts";
import { type OperatorConsole, openOperatorConsole } from "./harness/retryingOperator.ts";
import { type ServiceProcess, startServiceProcess } from "./harness/serviceProcess.ts";
import { cleanUpAfter, databaseForThisTest, waitFor } from "./harness/stores.ts";

const SOAK = process.env.SOAK === "1";
const scale = {
  pages: SOAK ? 16 : 4,
  maxBids: SOAK ? 50_000 : 2_000,
  /**
   * Database outages, instance kills, cuts, SIGTERMs: one each by default. The operator acts
   * during the first, the third…: after an action a reconnecting page gets a snapshot, as it must,
   * so at soak scale the faults without one keep the resume under load under test too.
   */
  faults: SOAK ? 8 : 1,
  /** Acknowledged bids to wait for before each fault and after the last. */
  acksBetweenFaults: SOAK ? 200 : 25,
};
const TEST_TIMEOUT_MS = SOAK ? scaled(600_000) : SERVICE_TEST_MS;
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

const PASSWORD = "the fault tests' operator password";
const SESSION_SECRET = "the fault tests' session secret, 32 bytes or more";
const ROUND_SECONDS = 3;
/**
 * The console on, at the cost the service requires of ADMIN_PASSWORD_HASH (the environment's check
 * refuses a cheaper one): hashed once per run by the code `npm run admin:hash` runs. Short real
 * rounds: the processes cannot share fake timers. No soft close: under a steady flow of bids it
 * would move every round's end, and none would end.
 */
const CONSOLE_AND_ROUNDS = {
  ADMIN_PASSWORD_HASH: await hashPassword(PASSWORD),
  ADMIN_SESSION_SECRET: SESSION_SECRET,
  AUCTION_ROUND_SECONDS: String(ROUND_SECONDS),
  AUCTION_SOFT_CLOSE_SECONDS: "0",
};
/** A bidder who bids again and again under one name, slower than the others: the one the operator blocks. */
const TROLL = "Loud Mallory";
const TROLL_INTERVAL_MS = 200;

async function startService(databaseUrl: string, env: Record<string, string> = {}, port?: number) {
  const service = await startServiceProcess({ databaseUrl, env, port });
  cleanUpAfter(() => service.stop());
  return service;
}

/** A fresh database with two instances on it behind one load balancer, all removed after the test. */
async function twoInstancesBehindBalancer(env: Record<string, string> = {}) {
  const database = await databaseForThisTest();
  // Mutable: a test may put a restarted instance in the place of a killed one.
  const instances: [ServiceProcess, ServiceProcess] = [
    await startService(database.url, env),
    await startService(database.url, env),
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

/** The visitors bidding steadily, each bid under a name of its own, and the troll, under its one name. */
function startBidding(ledger: Ledger, visitors: Page[], troll: Page, intervalMs: number) {
  const flows = [
    startSteadyBidding(ledger, visitors, { intervalMs, maxBids: scale.maxBids }),
    startSteadyBidding(ledger, [troll], { intervalMs: TROLL_INTERVAL_MS, maxBids: scale.maxBids, bidderName: TROLL }),
  ];
  const stop = async () => {
    await Promise.all(flows.map((flow) => flow.stop()));
  };
  cleanUpAfter(stop);
  return { stop };
}

/**
 * The operator at the console of `url`, signing in now (a quarter of a second's scrypt, more on
 * a busy machine): `signedIn` is awaited once the first bids are on their way.
 */
function operatorAt(url: string): { operator: OperatorConsole; signedIn: Promise<void> } {
  const operator = openOperatorConsole(url, PASSWORD);
  return { operator, signedIn: operator.signIn() };
}

/** The newest acknowledged bid, not the troll's, that the operator has not acted on yet. */
function newestUntouchedBid(operator: OperatorConsole, ledger: Ledger) {
  const acted = new Set(operator.actions.map((action) => action.target));
  return acknowledged(ledger).findLast((bid) => bid.name !== TROLL && !acted.has(bid.id));
}

/**
 * One round of the operator's work, started as a fault begins (docs/design.md#6a): lift the
 * troll's block if it is on, hide the newest acknowledged bid and restore it, hide the next newest,
 * block the troll and see its next bid refused. Each action is tried until the console confirms it;
 * the next round finds the troll blocked and the last hidden bid still hidden.
 */
function operatorRounds(operator: OperatorConsole, ledger: Ledger) {
  let trollBlocked = false;
  return async function actNow(): Promise<void> {
    if (trollBlocked) await operator.unblock(TROLL);
    const first = newestUntouchedBid(operator, ledger);
    if (first) {
      await operator.hide(first.id);
      await operator.restore(first.id);
    }
    const second = newestUntouchedBid(operator, ledger);
    if (second) await operator.hide(second.id);
    const { doneAt = 0 } = await operator.block(TROLL);
    trollBlocked = true;
    await waitFor(
      "the troll's next bid to be refused",
      () =>
        ledger.attempts.some(
          ({ name, sentAt, outcome }) =>
            name === TROLL && sentAt > doneAt && outcome?.kind === "refused" && outcome.code === "name_not_allowed",
        ),
      30_000,
    );
  };
}

/** The operator's round during the first, third… fault; none during the others. */
const operatorActsDuring = (fault: number) => fault % 2 === 0;

/**
 * One more hide once the bidding has stopped, so that the pages' final state carries a fresh
 * action, then the audit, its line printed, with the checks every fault test shares.
 */
async function audited(ledger: Ledger, pages: Page[], databaseUrl: string, crashed: number, operator: OperatorConsole) {
  const last = newestUntouchedBid(operator, ledger);
  if (last) await operator.hide(last.id);
  const audit = await auditAuction(ledger, pages, databaseUrl, { crashes: crashed, operator });
  console.log(audit.line);
  expect(audit.problems).toEqual([]);
  expect(audit.counts.crashes).toBe(0);
  // Every kind of action was confirmed, the troll was refused while blocked, and rounds ended.
  expect(new Set(operator.actions.map((action) => action.kind))).toEqual(
    new Set(["hide", "restore", "block", "unblock"]),
  );
  expect(audit.counts.nameNotAllowed).toBeGreaterThan(0);
  expect(audit.counts.roundsEnded).toBeGreaterThan(0);
  return audit;
}

describe.skipIf(!postgresBinariesPresent())("faults under load, real PostgreSQL", () => {
  it(
    "PostgreSQL stops and restarts while bids flow through 2 instances: bids meanwhile are answered unavailable, and every acknowledged bid reaches every socket that stayed open",
    async () => {
      // Its own cluster: the run's shared one must keep serving the other tests.
      const cluster = await startPostgresCluster();
      cleanUpAfter(() => cluster.destroy());
      const instances = [
        await startService(cluster.url, CONSOLE_AND_ROUNDS),
        await startService(cluster.url, CONSOLE_AND_ROUNDS),
      ];
      const urls = instances.map((instance) => instance.socketUrl);
      const visitors = openPages("outage-", urls, scale.pages);
      const troll = openPages("outage-troll-", urls, 1)[0] as Page;
      const pages = [...visitors, troll];
      await allLive(pages);
      const { operator, signedIn } = operatorAt((instances[0] as ServiceProcess).httpUrl);
      const ledger = createLedger("outage");
      const bidding = startBidding(ledger, visitors, troll, BID_INTERVAL_MS);
      await signedIn;
      const operatorRound = operatorRounds(operator, ledger);

      const outages: { from: number; to: number }[] = [];
      for (let outage = 0; outage < scale.faults; outage++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        await cluster.stop();
        const from = performance.now();
        const acting = operatorActsDuring(outage) && operatorRound();
        for (const instance of instances) {
          await waitFor("/readyz 503", async () => (await readyStatus(instance)) === 503, 10_000);
        }
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        outages.push({ from, to: performance.now() });
        await cluster.start();
        for (const instance of instances) {
          await waitFor("/readyz 200", async () => (await readyStatus(instance)) === 200, 30_000);
        }
        await acting;
      }
      const acting = operatorRound();
      await moreAcks(ledger, scale.acksBetweenFaults);
      await acting;
      await bidding.stop();

      const audit = await audited(ledger, pages, cluster.url, crashes(instances), operator);
      // The console could not act while the database was down: its answers said so, and the
      // operator's tries again were applied once each (the audit log holds each action once).
      expect(audit.counts.consoleRefused).toBeGreaterThan(0);
      // Every bid sent while both instances reported not ready was answered unavailable, promptly:
      // the desk refuses at once instead of letting the bid wait for the database to return. The
      // troll's, while blocked, are refused as such first, from what the instance knows.
      const duringOutages = ledger.attempts.filter((attempt) =>
        outages.some(({ from, to }) => attempt.sentAt >= from && attempt.sentAt < to),
      );
      expect(duringOutages.length).toBeGreaterThan(0);
      for (const attempt of duringOutages) {
        const code = attempt.name === TROLL ? expect.stringMatching(/^(unavailable|name_not_allowed)$/) : "unavailable";
        expect(attempt.outcome).toEqual({ kind: "refused", code });
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
      const { database, instances, balancer } = await twoInstancesBehindBalancer(CONSOLE_AND_ROUNDS);
      const ports = instances.map((instance) => instance.port);
      const visitors = openPages("kill-", [balancer.socketUrl], scale.pages);
      const troll = openPages("kill-troll-", [balancer.socketUrl], 1)[0] as Page;
      const pages = [...visitors, troll];
      await allLive(pages);
      const { operator, signedIn } = operatorAt(balancer.httpUrl);
      const ledger = createLedger("kill");
      const bidding = startBidding(ledger, visitors, troll, BID_INTERVAL_MS);
      await signedIn;
      const operatorRound = operatorRounds(operator, ledger);

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
        const acting = operatorActsDuring(round) && operatorRound();
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
        await acting;
        if (round + 1 < scale.faults) {
          instances[index] = await startService(database.url, CONSOLE_AND_ROUNDS, victim.port);
        }
      }
      const acting = operatorRound();
      await moreAcks(ledger, scale.acksBetweenFaults);
      await acting;
      await bidding.stop();

      const survivors = instances.filter((instance) => !killed.includes(instance));
      const audit = await audited(ledger, pages, database.url, crashes(survivors), operator);
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
        ...CONSOLE_AND_ROUNDS,
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
      const troll = openPages("cut-troll-", [instance.socketUrl], 1)[0] as Page;
      const pages = [watched, ...others, troll];
      await allLive(pages);
      const { operator, signedIn } = operatorAt(instance.httpUrl);
      const ledger = createLedger("cut");
      const bidding = startBidding(ledger, [watched, ...others], troll, BID_INTERVAL_MS);
      await signedIn;
      const operatorRound = operatorRounds(operator, ledger);

      let placedWhileAway = 0;
      for (let cut = 0; cut < scale.faults; cut++) {
        await moreAcks(ledger, scale.acksBetweenFaults);
        const reconnectsBefore = watched.reopenings;
        const closesBefore = watched.closeCodes.length;
        const heartbeatClosesBefore = heartbeatCloses();
        const cutAt = performance.now();
        expect(relay.cutAll()).toBe(1);
        // The operator's lists cannot reach the cut page: it learns of them when it is back.
        const acting = operatorActsDuring(cut) && operatorRound();
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
        await acting;
      }
      const acting = operatorRound();
      await moreAcks(ledger, scale.acksBetweenFaults);
      await acting;
      await bidding.stop();

      await audited(ledger, pages, database.url, crashes([instance]), operator);
      expect(watched.reopenings).toBe(scale.faults);
      expect([...others, troll].map((page) => page.reopenings)).toEqual([...others, troll].map(() => 0));
      // Bids were accepted while the page was away, and it got them through its resumes.
      expect(placedWhileAway).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "SIGTERM during load behind a load balancer: in-flight bids finish, sockets close with 1001, the pages move to the survivor and nothing acknowledged is lost",
    async () => {
      const { database, instances, balancer } = await twoInstancesBehindBalancer(CONSOLE_AND_ROUNDS);
      const visitors = openPages("term-", [balancer.socketUrl], scale.pages);
      const troll = openPages("term-troll-", [balancer.socketUrl], 1)[0] as Page;
      const pages = [...visitors, troll];
      await allLive(pages);
      const { operator, signedIn } = operatorAt(balancer.httpUrl);
      const ledger = createLedger("sigterm");
      // No pause between bids: a flood, so bids are at the database when the signal comes.
      const bidding = startBidding(ledger, visitors, troll, 0);
      await signedIn;
      const operatorRound = operatorRounds(operator, ledger);

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
        const acting = operatorActsDuring(round) && operatorRound();
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
        await acting;
        if (round + 1 < scale.faults) {
          instances[index] = await startService(database.url, CONSOLE_AND_ROUNDS, victim.port);
        }
      }
      const acting = operatorRound();
      await moreAcks(ledger, scale.acksBetweenFaults);
      await acting;
      await bidding.stop();

      const survivors = instances.filter((instance) => !stopped.includes(instance));
      const audit = await audited(ledger, pages, database.url, crashes(survivors), operator);
      console.log(`[sigterm] acknowledged after the signal: ${ackedAfterSignal}`);
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
