/**
 * A database outage with payments on, in the log (docs/decisions/2026-11-28-repeated-warnings-once-per-interval.md):
 * a 20-s outage used to log "could not try for the payment watcher lease" every second. Now, with
 * visitors opening pages, reading the winners and asking for payments throughout, the outage is
 * at most 5 lines at warn or above, each condition's first; one interval on, a condition still
 * failing writes one more line with its count; its end is one info line with its failures.
 *
 * The outage is real (PostgreSQL stopped), the warnings' clock is the test's: it runs four times
 * as fast as the real one, so 5 s of outage are the 20 s of the issue, and it jumps an interval.
 */
import { describe, expect, it } from "vitest";
import { postgresBinariesPresent, startPostgresCluster } from "../../../scripts/harness/postgresCluster.ts";
import {
  attachRepeatedWarnings,
  createRepeatedWarnings,
  REPEATED_WARNING_INTERVAL_MS,
  VISITORS_UNANSWERED,
} from "../../../service/repeatedWarnings.ts";
import type { CreatedPayment } from "../../../src/lib/payments.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { openPaymentService, waitForPaymentsAvailable } from "../harness/paymentChain.ts";
import { cleanUpAfter, waitFor } from "../harness/stores.ts";

const CLOCK_SPEEDUP = 4;
const OUTAGE_MS = 20_000;
const MAX_OUTAGE_LINES = 5;
const VISIT_EVERY_MS = 250;
/** Bounds every loop of visits: far more than the outage's 5 real seconds need. */
const MAX_VISITS = 200;
const LEASE_TRY_FAILED = "could not try for the payment watcher lease";
const RECOVERY_WITHIN_MS = 20_000;

describe.skipIf(!postgresBinariesPresent())("a database outage with payments on", () => {
  it(`logs a ${OUTAGE_MS / 1000}-s outage in at most ${MAX_OUTAGE_LINES} lines, then one line an interval with a count, then its end`, async () => {
    const cluster = await startPostgresCluster();
    cleanUpAfter(() => cluster.destroy());
    const shop = await openPaymentService(
      { backend: "postgres", databaseUrl: cluster.url, dataDir: "", remove: async () => {} },
      { decimals: 6 },
    );
    await waitForPaymentsAvailable(shop.url);
    const created = await shop.post("/payments", { tierId: "2" });
    expect(created.status).toBe(201);
    const { reference } = (await created.json()) as CreatedPayment;
    const page = await connectClient(shop.service.socketUrl);
    await page.opening();

    let jumpedMs = 0;
    const clock = () => performance.now() * CLOCK_SPEEDUP + jumpedMs;
    attachRepeatedWarnings(shop.logger, createRepeatedWarnings({ now: clock }));
    const cutAt = shop.logs.length;
    const warnings = () => shop.logs.slice(cutAt).filter((line) => Number(line.level) >= 40);
    const statuses = new Map<string, number>();
    /** What visitors do meanwhile: open a page, read the winners and a payment, ask for one, probe readiness. */
    async function visit() {
      const late = await connectClient(shop.service.socketUrl);
      const answers = await Promise.all([
        late.closed.then(({ code }) => code),
        fetch(`${shop.url}/auction/winners`).then((response) => response.status),
        shop.get(`/payments/${reference}`).then((response) => response.status),
        shop.post("/payments", { tierId: "2" }).then((response) => response.status),
        fetch(`${shop.url}/readyz`).then((response) => response.status),
      ]);
      const key = answers.join(" ");
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, VISIT_EVERY_MS));
    }

    await cluster.stop();
    const outageEnds = clock() + OUTAGE_MS;
    for (let visits = 0; visits < MAX_VISITS && clock() < outageEnds; visits++) await visit();
    const outage = warnings();
    console.log(
      `${OUTAGE_MS / 1000}-s outage on the warnings' clock: ${outage.length} lines at warn or above: ` +
        `${JSON.stringify(outage.map((line) => line.msg))}; visitors' answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    // Every visit was turned away: the socket closed 1013, 503s, /readyz 503.
    expect([...statuses.keys()]).toEqual(["1013 503 503 503 503"]);
    expect(outage.length).toBeGreaterThanOrEqual(3);
    expect(outage.length).toBeLessThanOrEqual(MAX_OUTAGE_LINES);
    expect(outage.every((line) => line.repeated === 0)).toBe(true);
    expect(outage.map((line) => line.msg)).toEqual(expect.arrayContaining([LEASE_TRY_FAILED, VISITORS_UNANSWERED]));
    expect(JSON.stringify(outage)).not.toContain('"stack"');

    // An interval on, the conditions still failing write one line each, counting what they held back.
    jumpedMs += REPEATED_WARNING_INTERVAL_MS;
    const countedLine = (msg: string) => warnings().find((line) => line.msg === msg && Number(line.repeated) > 0);
    for (
      let visits = 0;
      visits < MAX_VISITS && !(countedLine(LEASE_TRY_FAILED) && countedLine(VISITORS_UNANSWERED));
      visits++
    ) {
      await visit();
    }
    const later = warnings().slice(outage.length);
    expect(countedLine(LEASE_TRY_FAILED)?.repeated).toBeGreaterThanOrEqual(2);
    expect(countedLine(VISITORS_UNANSWERED)?.repeated).toBeGreaterThanOrEqual(2);
    expect(later.every((line) => Number(line.repeated) > 0)).toBe(true);
    const laterMessages = later.map((line) => line.msg);
    expect(new Set(laterMessages).size).toBe(laterMessages.length);

    // The end of each: one info line with its failures in all.
    await cluster.start();
    await waitFor("ready again", async () => (await fetch(`${shop.url}/readyz`)).status === 200, RECOVERY_WITHIN_MS);
    await waitFor(
      "the watcher's lease again",
      () =>
        shop.logs.slice(cutAt).some((line) => line.msg === "payment watcher started: this instance holds the lease"),
      RECOVERY_WITHIN_MS,
    );
    expect((await fetch(`${shop.url}/auction/winners`)).status).toBe(200);
    const ended = (msg: string) => shop.logs.slice(cutAt).find((line) => line.after === msg);
    await waitFor("the lease's end line", () => ended(LEASE_TRY_FAILED) !== undefined);
    expect(ended(LEASE_TRY_FAILED)).toMatchObject({ level: 30, failures: expect.any(Number) });
    expect(Number(ended(LEASE_TRY_FAILED)?.failures)).toBeGreaterThan(Number(countedLine(LEASE_TRY_FAILED)?.repeated));
    expect(ended(VISITORS_UNANSWERED)).toMatchObject({ level: 30 });
    expect(Number(ended(VISITORS_UNANSWERED)?.failures)).toBeGreaterThan(
      Number(countedLine(VISITORS_UNANSWERED)?.repeated),
    );
    expect(warnings().length).toBe(outage.length + later.length);
    await page.close();
  }, 120_000);
});
