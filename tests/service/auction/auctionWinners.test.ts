/**
 * GET /auction/winners on both backends, over real HTTP against a real service instance
 * (docs/design.md#6b, Wall of Fame): each ended round's highest visible bid, newest first; a short cache;
 * CORS for the origins whose pages may open the socket and no other; 503 when the store is gone.
 * Rounds last 1 s here, so a round's end is a bounded wait of about a second.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ServiceConfig } from "../../../service/config.ts";
import { SERVICE_HEADERS } from "../../../service/http/securityHeaders.ts";
import type { Logger } from "../../../service/logger.ts";
import { VISITORS_UNANSWERED } from "../../../service/repeatedWarnings.ts";
import type { BidStore, PlaceBidOutcome, StoredBid } from "../../../service/storage/types.ts";
import { parseWinners, WINNERS_PATH } from "../../../src/lib/auctionWinners.ts";
import { type AuctionService, serviceForThisTest } from "../harness/auctionService.ts";
import { BACKENDS, freshStoreForThisTest, testLogger, waitFor } from "../harness/stores.ts";

const PAGES_ORIGIN = "https://nothing.example";

function accepted(outcome: PlaceBidOutcome) {
  if (!outcome.accepted) throw new Error(`bid refused (${outcome.code})`);
  return outcome.bid;
}

describe.each(BACKENDS)("GET /auction/winners on %s", (backend) => {
  let store: BidStore;

  beforeEach(async () => {
    ({ store } = await freshStoreForThisTest(backend, { rounds: { roundSeconds: 1, softCloseSeconds: 0 } }));
  });

  function start(overrides: Partial<ServiceConfig> = {}, logger?: Logger) {
    return serviceForThisTest(store, overrides, logger);
  }

  async function winners(service: AuctionService) {
    const response = await fetch(`${service.httpUrl}${WINNERS_PATH}`);
    expect(response.status).toBe(200);
    const body = await response.json();
    // The page's own validation accepts exactly what the service sends.
    expect(parseWinners(body)).toEqual(body.winners);
    return body.winners as { round: number; bidderName: string; amountCents: number; endedAt: string }[];
  }

  /** Waits (about a round, bounded) until `count` winners are listed, recording ended rounds as the timers would. */
  async function waitForWinners(service: AuctionService, count: number) {
    await waitFor(`${count} winners`, async () => {
      await store.settleRound();
      return (await winners(service)).length >= count;
    });
    return winners(service);
  }

  it("lists each ended round's highest visible bid, newest first; a hidden winning bid hands the round on", async () => {
    const service = await start();
    expect(await winners(service)).toEqual([]);

    const adaPlaced = await store.placeBid("Ada", 1_050);
    const ada = accepted(adaPlaced);
    // A round still running has no winner yet: judged when the answer came before the round's end
    // (a pause of a second on a loaded machine would end this one-second round first).
    const whileRunning = await winners(service);
    if (Date.now() < Date.parse(adaPlaced.endsAt ?? "")) expect(whileRunning).toEqual([]);
    const [first] = await waitForWinners(service, 1);
    expect(first).toEqual({ round: 1, bidderName: "Ada", amountCents: 1_050, endedAt: expect.any(String) });
    expect(Date.parse(first?.endedAt ?? "") - Date.parse(ada.createdAt)).toBeGreaterThanOrEqual(1_000);

    // The next bid opens round 2; its highest bid wins it. One batch, so both are surely in round 2.
    const [bob, cy] = (
      await store.placeBids([
        { bidderName: "Bob", amountCents: 2_000 },
        { bidderName: "Cy", amountCents: 3_000 },
      ])
    ).map(accepted) as [StoredBid, StoredBid];
    expect((await waitForWinners(service, 2)).map((winner) => [winner.round, winner.bidderName])).toEqual([
      [2, "Cy"],
      [1, "Ada"],
    ]);

    await store.moderate({ action: "hide", bidId: cy.id, reason: null, sessionId: "test" });
    expect(await winners(service)).toMatchObject([
      { round: 2, bidderName: "Bob", amountCents: 2_000 },
      { round: 1, bidderName: "Ada" },
    ]);

    // With no visible bid left, the round has no winner at all.
    await store.moderate({ action: "hide", bidId: bob.id, reason: null, sessionId: "test" });
    expect((await winners(service)).map((winner) => winner.round)).toEqual([1]);
  });

  it("answers with a short cache and the service's security headers; HEAD too, other methods 405", async () => {
    const service = await start();
    const url = `${service.httpUrl}${WINNERS_PATH}`;

    const response = await fetch(`${url}?ignored=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=5");
    expect(response.headers.get("vary")).toBe("Origin");
    for (const [name, value] of Object.entries(SERVICE_HEADERS)) expect(response.headers.get(name), name).toBe(value);
    expect(await response.json()).toEqual({ winners: [] });

    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("cache-control")).toBe("public, max-age=5");
    expect(await head.text()).toBe("");

    for (const method of ["POST", "DELETE", "OPTIONS"]) {
      const refused = await fetch(url, { method });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get("allow"), method).toBe("GET, HEAD");
      expect(await refused.json(), method).toEqual({ error: "method_not_allowed" });
    }
  });

  it("allows exactly the origins whose pages may open the socket (ALLOWED_ORIGINS, else the same origin)", async () => {
    const allowOrigin = async (service: AuctionService, origin: string) => {
      const response = await fetch(`${service.httpUrl}${WINNERS_PATH}`, { headers: { Origin: origin } });
      expect(response.status).toBe(200);
      expect(response.headers.get("vary")).toBe("Origin");
      return response.headers.get("access-control-allow-origin");
    };

    const listed = await start({ allowedOrigins: [PAGES_ORIGIN] });
    expect(await allowOrigin(listed, PAGES_ORIGIN)).toBe(PAGES_ORIGIN);
    expect(await allowOrigin(listed, "https://elsewhere.example")).toBeNull();
    expect(await allowOrigin(listed, listed.httpUrl)).toBeNull();
    expect(await allowOrigin(listed, "null")).toBeNull();

    const sameOrigin = await start({ allowedOrigins: [] });
    expect(await allowOrigin(sameOrigin, sameOrigin.httpUrl)).toBe(sameOrigin.httpUrl);
    expect(await allowOrigin(sameOrigin, PAGES_ORIGIN)).toBeNull();

    const anyOrigin = await start({ allowedOrigins: ["*"] });
    expect(await allowOrigin(anyOrigin, "https://elsewhere.example")).toBe("https://elsewhere.example");
  });

  it("answers 503 and logs a warning when the store cannot be read, and keeps serving", async () => {
    const lines: Record<string, unknown>[] = [];
    const service = await start(
      {},
      testLogger((line) => lines.push(line)),
    );
    await store.close();

    const response = await fetch(`${service.httpUrl}${WINNERS_PATH}`, { headers: { Origin: service.httpUrl } });
    expect(response.status).toBe(503);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ error: "unavailable" });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, what: "the auction winners", msg: VISITORS_UNANSWERED }),
    );
    // The process is still there to answer.
    expect((await fetch(`${service.httpUrl}/healthz`)).status).toBe(200);
  });
});
