/**
 * A blocked name's disguises through the real service, on both backends (docs/design.md#11):
 * the operator blocks "Nobody" in the console, and the spellings that bid freely before issue 20
 * (a Cyrillic о, a combining grapheme joiner, a variation selector, a Hangul filler) are refused
 * on the socket, and by the database too when the instance's quick check is not asked.
 */
import { describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import { hashPassword } from "../../../service/console/password.ts";
import { parsePasswordHash } from "../../../service/passwordHash.ts";
import { connectClient } from "../harness/auctionClient.ts";
import { startAuctionService } from "../harness/auctionService.ts";
import { BACKENDS, cleanUpAfter, createTestLocation, openTestStore, waitFor } from "../harness/stores.ts";

const PASSWORD = "the operator's password for disguised names";
const SECRET = "a session secret for the disguised names, thirty-two bytes or more";
const HASH = await hashPassword(PASSWORD, { logN: 14, r: 8, p: 1 });

const DISGUISES = ["N\u043ebody", "No\u034fbody", "Nobody\ufe0f", "No\u3164body"];

/** The console's block form, posted as a signed-in operator would. */
async function blockInConsole(origin: string, name: string): Promise<string | null> {
  const login = await fetch(`${origin}/admin/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin },
    body: new URLSearchParams({ password: PASSWORD }).toString(),
  });
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const blocked = await fetch(`${origin}/admin/blocks`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: origin, Cookie: cookie },
    body: new URLSearchParams({ name, reason: "troll" }).toString(),
  });
  return blocked.headers.get("location");
}

describe.each(BACKENDS)("a blocked name's disguises on %s", (backend) => {
  it("are refused on the socket and by the database, and their earlier bids vanish", async () => {
    const location = await createTestLocation(backend);
    cleanUpAfter(() => location.remove());
    const store = await openTestStore(location);
    cleanUpAfter(() => store.close());
    // Below the cost ADMIN_PASSWORD_HASH must have (docs/design.md#11), so passed in code, not through the environment's check.
    const admin = { passwordHash: parsePasswordHash(HASH), sessionSecret: SECRET };
    const service = await startAuctionService(store, { ...LIFTED_LIMITS, admin });
    cleanUpAfter(() => service.stop());
    const page = await connectClient(service.socketUrl);
    cleanUpAfter(() => page.close());
    await page.opening();

    // Before the block each disguise bids, as every one did while "Nobody" was blocked.
    expect(await page.bid("Alice", 1)).toMatchObject({ type: "accepted" });
    for (const [index, name] of DISGUISES.entries()) {
      expect(await page.bid(name, 2 + index), name).toMatchObject({ type: "accepted" });
    }

    expect(await blockInConsole(service.httpUrl, "Nobody")).toBe("/admin?done=blocked");
    await waitFor("the page to hear the block", () =>
      page.messages.some((message) => message.type === "moderated" && message.bids.length === 1),
    );
    const moderated = page.messages.findLast((message) => message.type === "moderated");
    expect(moderated).toMatchObject({ bids: [{ bidderName: "Alice" }], highest: { bidderName: "Alice" }, bidders: 1 });

    for (const name of DISGUISES) {
      expect(await page.bid(name, 100), name).toMatchObject({ type: "error", code: "name_not_allowed" });
    }
    // The database path, as an instance that had not yet heard of the block would take it.
    for (const name of DISGUISES) {
      expect(await store.placeBid(name, 200), name).toMatchObject({ accepted: false, code: "name_not_allowed" });
    }
    const batch = await store.placeBids(DISGUISES.map((bidderName) => ({ bidderName, amountCents: 300 })));
    expect(batch.map((outcome) => !outcome.accepted && outcome.code)).toEqual(DISGUISES.map(() => "name_not_allowed"));
    expect(await page.bid("Alice", 100)).toMatchObject({ type: "accepted" });
  });
});
