/**
 * Moderation end to end through the real service (docs/design.md#6a): two instances on one PostgreSQL
 * database behind the load balancer, visitors' pages on the product's own auction connection, and
 * the operator acting through the console's HTTP routes of either instance. Every open page must
 * show the action within a second; a page that was cut off during actions shows the right list
 * once it is back; and generated interleavings of bids and actions keep every page equal to a model.
 */
import fc from "fast-check";
import { describe, expect, it, onTestFinished } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import type { AdminSettings } from "../../../service/config.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { nameKey } from "../../../service/names/nameKey.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";
import type { BidStore, ModerationOutcome } from "../../../service/storage/types.ts";
import { MAX_BID_CENTS } from "../../../src/lib/auction/bidRules.ts";
import type { WireBid } from "../../../src/lib/auction/protocol.ts";
import { modelNextWinningCents, modelTooLow, modelWinningAmounts } from "../harness/auctionModel.ts";
import { type AuctionService, type Instance, startInstances } from "../harness/auctionService.ts";
import { startCuttableProxy } from "../harness/cuttableProxy.ts";
import { balancerForThisTest } from "../harness/loadBalancer.ts";
import { openVisitor, placed, type Visitor } from "../harness/pageClient.ts";
import { locationForThisTest, waitFor } from "../harness/stores.ts";

const PASSWORD = "the operator's moderation password";
const SECRET = "a moderation session secret, thirty-two bytes or more";
// Below the cost ADMIN_PASSWORD_HASH must have, so passed in code rather than through the environment's check.
const ADMIN: AdminSettings = {
  passwordHash: parsePasswordHash(await hashPassword(PASSWORD, { logN: 14, r: 8, p: 1 })),
  sessionSecret: SECRET,
};
/** docs/design.md#6a: live on every page within a second. */
const LIVE_WITHIN_MS = 1_000;

async function setUp(count = 2) {
  const location = await locationForThisTest("postgres");
  const instances = await startInstances(location, count, { overrides: { admin: ADMIN, ...LIFTED_LIMITS } });
  const balancer = await balancerForThisTest(instances.map((instance) => instance.port));
  return { instances, balancer };
}

/** What a page shows: the ids listed, the leader's id, the bidder count. */
function shown(visitor: Visitor) {
  const { bids, highest, bidders } = visitor.$auction.get();
  return { ids: bids.map((bid) => bid.id), highest: highest?.id ?? null, bidders };
}

/** The operator, signed in to one instance's console. */
async function signInOperator(service: AuctionService) {
  const origin = service.httpUrl;
  const login = await fetch(`${origin}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
    body: new URLSearchParams({ password: PASSWORD }).toString(),
  });
  expect(login.status).toBe(303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  async function post(path: string, form: Record<string, string>) {
    const response = await fetch(`${origin}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin, Cookie: cookie },
      body: new URLSearchParams(form).toString(),
    });
    expect(response.status).toBe(303);
    return response.headers.get("location");
  }
  return {
    cookie,
    hide: (id: number, reason = "") => post(`/admin/bids/${id}/hide`, { reason }),
    restore: (id: number) => post(`/admin/bids/${id}/restore`, {}),
    block: (name: string, reason = "") => post("/admin/blocks", { name, reason }),
    unblock: (name: string) => post("/admin/blocks/remove", { name }),
    page: async (query = "") => (await fetch(`${origin}/admin${query}`, { headers: { Cookie: cookie } })).text(),
  };
}

async function everyPage(visitors: Visitor[], what: string, check: (visitor: Visitor) => boolean) {
  await waitFor(what, () => visitors.every(check), LIVE_WITHIN_MS);
}

describe("moderation across two instances behind the load balancer", () => {
  it("hides a troll's maximum bid on every page within a second, lets a lower bid win, and restores it everywhere", async () => {
    const { instances, balancer } = await setUp();
    const visitors = [0, 1, 2, 3].map(() => openVisitor(balancer.socketUrl));
    await waitFor("every page live", () => visitors.every((visitor) => visitor.$auction.get().status === "live"));
    const [first, second, third] = visitors as [Visitor, Visitor, Visitor];
    const alice = await placed(first, "Alice", 1_000);
    const troll = await placed(second, "Troll", MAX_BID_CENTS);
    await everyPage(visitors, "the troll's bid on every page", (visitor) => shown(visitor).highest === troll.id);
    expect((await third.placeBid("Bob", 5_000)).ok).toBe(false);

    const operatorA = await signInOperator((instances[0] as Instance).service);
    expect(await operatorA.hide(troll.id, "a slur")).toBe(`/admin?done=hidden&bid=${troll.id}`);
    await everyPage(
      visitors,
      "the troll's bid gone from every page",
      (visitor) => !shown(visitor).ids.includes(troll.id) && shown(visitor).highest === alice.id,
    );
    for (const visitor of visitors) expect(shown(visitor)).toEqual({ ids: [alice.id], highest: alice.id, bidders: 1 });

    // Above the next visible bid, far below the hidden one: accepted, through either instance.
    const bob = await placed(third, "Bob", 5_000);
    await everyPage(visitors, "Bob's bid everywhere", (visitor) => shown(visitor).highest === bob.id);

    const operatorB = await signInOperator((instances[1] as Instance).service);
    await operatorB.restore(troll.id);
    await everyPage(visitors, "the troll's bid back on every page", (visitor) => shown(visitor).highest === troll.id);
    for (const visitor of visitors) {
      expect(shown(visitor)).toEqual({ ids: [bob.id, troll.id, alice.id], highest: troll.id, bidders: 3 });
    }
    expect(await third.placeBid("Carol", 6_000)).toMatchObject({ ok: false, code: "too_low" });

    // The console lists both actions, with the reason and the sessions that took them.
    const console = await operatorA.page();
    expect(console).toContain(`Hid bid ${troll.id} by <span>Troll</span>`);
    expect(console).toContain(`Restored bid ${troll.id} by <span>Troll</span>`);
    expect(console).toContain("<td>a slur</td>");
  });

  it("blocks a name: its bids vanish everywhere, its next bid in any case or NFKC spelling is refused; unblock lets it bid again", async () => {
    const { instances, balancer } = await setUp();
    const visitors = [0, 1].map(() => openVisitor(balancer.socketUrl));
    await waitFor("every page live", () => visitors.every((visitor) => visitor.$auction.get().status === "live"));
    const [first, second] = visitors as [Visitor, Visitor];
    const troll = await placed(first, "Troll", 500);
    const alice = await placed(second, "Alice", 600);
    const trollAgain = await placed(first, "troll", 700);

    const operator = await signInOperator((instances[1] as Instance).service);
    expect(await operator.block("TROLL", "spam")).toBe("/admin?done=blocked");
    await everyPage(visitors, "the name's bids gone", (visitor) => shown(visitor).ids.join() === String(alice.id));
    for (const visitor of visitors) expect(shown(visitor)).toEqual({ ids: [alice.id], highest: alice.id, bidders: 1 });

    for (const spelling of ["Troll", "tRoLl", "ｔｒｏｌｌ", "ＴＲＯＬＬ"]) {
      expect(await first.placeBid(spelling, 10_000), spelling).toEqual({
        ok: false,
        code: "name_not_allowed",
        highestCents: 600,
      });
    }
    expect(await operator.page()).toContain("Unblock TROLL</button>");

    expect(await operator.unblock("troll")).toBe("/admin?done=unblocked");
    await everyPage(visitors, "the name's bids back", (visitor) => shown(visitor).ids.length === 3);
    for (const visitor of visitors) {
      expect(shown(visitor)).toEqual({ ids: [trollAgain.id, alice.id, troll.id], highest: trollAgain.id, bidders: 3 });
    }
    expect((await second.placeBid("Troll", 10_000)).ok).toBe(true);
  });

  it("brings a page that was cut off during a hide and a restore back to the right list, nothing lost or doubled", async () => {
    const { instances, balancer } = await setUp();
    const [instanceA] = instances as [Instance, Instance];
    const relay = await startCuttableProxy(instanceA.port);
    onTestFinished(() => relay.close());
    // A short heartbeat, so the cut is noticed within about 1.3 s rather than the product's 35 s (docs/product-reference.md#9); not
    // shorter, or a pause of the event loop these pages share with both instances reconnects it.
    const cutOff = openVisitor(`ws://127.0.0.1:${relay.port}/realtime`, { intervalMs: 300, timeoutMs: 1_000 });
    const other = openVisitor(balancer.socketUrl);
    await waitFor("both pages live", () =>
      [cutOff, other].every((visitor) => visitor.$auction.get().status === "live"),
    );
    const operator = await signInOperator(instanceA.service);

    // Each wins after the one before: Dee's comes between Ben's and Cy's, Eve's above them all.
    const [annCents, benCents, deeCents, cyCents, eveCents] = modelWinningAmounts(5) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const bids = [
      await placed(other, "Ann", annCents),
      await placed(other, "Ben", benCents),
      await placed(other, "Cy", cyCents),
    ];
    await waitFor("the cut-off page has every bid", () => shown(cutOff).ids.length === 3);
    const truth = async () => {
      const view = await instanceA.store.view(50);
      return { ids: view.bids.map((bid) => bid.id), highest: view.highest?.id ?? null, bidders: view.bidders };
    };

    // Cut: the page hears nothing while Cy's top bid is hidden and more bids arrive around it.
    expect(relay.cutAll()).toBe(1);
    await operator.hide((bids[2] as WireBid).id);
    // Dee bids below Cy once her page shows Cy's bid gone. Before that, the instance behind her page
    // may not have heard the hide yet, and it would still refuse her bid as too low from what it knows.
    await waitFor("the live page without Cy's bid", () => !shown(other).ids.includes((bids[2] as WireBid).id));
    const dee = await placed(other, "Dee", deeCents);
    await waitFor("the cut-off page back after the hide", async () => {
      const { status } = cutOff.$auction.get();
      return status === "live" && JSON.stringify(shown(cutOff)) === JSON.stringify(await truth());
    });
    expect(shown(cutOff)).toEqual({ ids: [dee.id, bids[1]?.id, bids[0]?.id], highest: dee.id, bidders: 3 });

    expect(relay.cutAll()).toBe(1);
    await operator.restore((bids[2] as WireBid).id);
    const eve = await placed(other, "Eve", eveCents);
    await waitFor("the cut-off page back after the restore", async () => {
      const { status } = cutOff.$auction.get();
      return status === "live" && JSON.stringify(shown(cutOff)) === JSON.stringify(await truth());
    });
    const ids = shown(cutOff).ids;
    expect(ids).toEqual([eve.id, dee.id, ...bids.map((bid) => bid.id).reverse()]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("moderation interleaved with bids, generated (two instances)", () => {
  it("keeps every page's list, highest and bidder count equal to the model's", async () => {
    const { instances, balancer } = await setUp();
    const stores = instances.map((instance) => instance.store);
    const visitors = [0, 1, 2].map(() => openVisitor(balancer.socketUrl));
    await waitFor("every page live", () => visitors.every((visitor) => visitor.$auction.get().status === "live"));

    // Spellings that fold to the same few keys, so blocks catch bids in other spellings.
    const NAMES = ["Ann", "ANN", "ａｎｎ", "Bo", "bo", "Cy", "Straße", "STRASSE"];
    const command = fc.oneof(
      fc.record({
        kind: fc.constant("bid" as const),
        visitor: fc.nat(visitors.length - 1),
        name: fc.constantFrom(...NAMES),
        // From the smallest winning amount.
        step: fc.integer({ min: -301, max: 499 }),
      }),
      fc.record({ kind: fc.constantFrom("hide" as const, "restore" as const), pick: fc.nat(), store: fc.nat(1) }),
      fc.record({
        kind: fc.constantFrom("block" as const, "unblock" as const),
        name: fc.constantFrom(...NAMES),
        store: fc.nat(1),
      }),
    );

    // The model: every stored bid, which are hidden, which keys are blocked; the amount rule is
    // auctionModel.ts's.
    interface ModelBid {
      id: number;
      name: string;
      cents: number;
      hidden: boolean;
    }
    const model: ModelBid[] = [];
    const blocked = new Set<string>();
    const visible = () => model.filter((bid) => !bid.hidden && !blocked.has(nameKey(bid.name)));
    const highest = () =>
      visible().reduce<ModelBid | null>((top, bid) => (top === null || bid.cents > top.cents ? bid : top), null);
    const expected = () => ({
      ids: visible()
        .map((bid) => bid.id)
        .reverse()
        .slice(0, 50),
      highest: highest()?.id ?? null,
      bidders: new Set(visible().map((bid) => bid.name)).size,
    });

    // Both instances have pages: once every page has the action's list, both instances have read
    // it (and the blocks with it), even when the list looks the same as before.
    const heardEverywhere = (outcome: ModerationOutcome) =>
      waitFor(
        `moderation ${outcome.moderation} on every page`,
        () => visitors.every((visitor) => visitor.moderation() >= outcome.moderation),
        5_000,
      );

    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
        runs++;
        for (const step of commands) {
          if (step.kind === "bid") {
            const cents = Math.max(1, modelNextWinningCents(highest()?.cents ?? null) + step.step);
            const outcome = await (visitors[step.visitor] as Visitor).placeBid(step.name, cents);
            const refusedByName = blocked.has(nameKey(step.name));
            const refusedLow = modelTooLow(cents, highest()?.cents ?? null);
            if (refusedByName) expect(outcome).toMatchObject({ ok: false, code: "name_not_allowed" });
            else if (refusedLow) expect(outcome).toMatchObject({ ok: false, code: "too_low" });
            else {
              expect(outcome, `${JSON.stringify(step)} at ${cents}`).toMatchObject({ ok: true });
              if (outcome.ok) model.push({ id: outcome.bid.id, name: step.name, cents, hidden: false });
            }
          } else if (step.kind === "hide" || step.kind === "restore") {
            const target = model[step.pick % Math.max(1, model.length)];
            if (!target) continue;
            const store = stores[step.store] as BidStore;
            await heardEverywhere(
              await store.moderate({ action: step.kind, bidId: target.id, reason: null, sessionId: "generated" }),
            );
            target.hidden = step.kind === "hide";
          } else if (step.kind === "block" || step.kind === "unblock") {
            const store = stores[step.store] as BidStore;
            await heardEverywhere(
              await store.moderate({ action: step.kind, bidderName: step.name, reason: null, sessionId: "generated" }),
            );
            if (step.kind === "block") blocked.add(nameKey(step.name));
            else blocked.delete(nameKey(step.name));
          }
          // Every step shows on every page (an instance's quick too_low refusal relies on it too).
          const want = JSON.stringify(expected());
          await waitFor(
            `every page equal to the model after ${JSON.stringify(step)}`,
            () => visitors.every((visitor) => JSON.stringify(shown(visitor)) === want),
            5_000,
          );
        }
      }),
      { numRuns: 15, seed: 20261122, endOnFailure: true },
    );
    expect(runs).toBe(15);
    // The generated runs did moderate: some bids are hidden or blocked by now.
    expect(model.length).toBeGreaterThan(visible().length);
  });
});
