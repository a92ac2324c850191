/**
 * A fixed catalogue of hostile input, each case with the exact answer docs/protocol.md gives it:
 * frames the socket refuses (binary, oversize), text that is not a message, fields missing, extra
 * or of the wrong type, numbers JSON cannot or should not carry, amounts and names on and past
 * every edge of the bid rules, markup and Unicode tricks in names, a foreign Origin, more sockets
 * than the cap, a bid flood and a frame flood. After each case the service still serves and a bystander socket
 * still gets every broadcast; at the end every stored name is the accepted one, byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIFTED_LIMITS } from "../../../scripts/harness/liftedLimits.ts";
import type { BidStore } from "../../../service/storage/types.ts";
import { type ErrorCode, MAX_MESSAGE_BYTES, type WireBid } from "../../../src/lib/auction/protocol.ts";
import { REFUSAL_TEXTS } from "../../../src/lib/auction/refusalTexts.ts";
import { connectClient, UpgradeRefused } from "../harness/auctionClient.ts";
import { modelNextWinningCents, modelTooLowMessage, modelWinningAmounts } from "../harness/auctionModel.ts";
import { type AuctionService, startAuctionService } from "../harness/auctionService.ts";
import { connectRaw, type Outcome, type RawClient, unheardBids } from "../harness/rawClient.ts";
import {
  BACKENDS,
  createTestLocation,
  openTestStore,
  type TestLocation,
  waitFor,
  withDirectSql,
} from "../harness/stores.ts";

interface Auction {
  location: TestLocation;
  store: BidStore;
  service: AuctionService;
  /** Never sends: hears every broadcast, so a case that hurts other sockets shows here. */
  bystander: RawClient;
  sender: RawClient;
  highestCents: number | null;
  accepted: WireBid[];
  stop(): Promise<void>;
}

async function openAuction(backend: "postgres" | "pglite", overrides = LIFTED_LIMITS): Promise<Auction> {
  const location = await createTestLocation(backend);
  const store = await openTestStore(location);
  const service = await startAuctionService(store, overrides);
  const bystander = await connectRaw(service.socketUrl);
  await bystander.opening();
  const sender = await connectRaw(service.socketUrl);
  await sender.opening();
  const auction: Auction = {
    location,
    store,
    service,
    bystander,
    sender,
    highestCents: null,
    accepted: [],
    async stop() {
      await auction.sender.close();
      await bystander.close();
      await service.stop();
      await store.close();
    },
  };
  return auction;
}

// ---- What a case sends and what it must get back ---------------------------------------------

type Expected =
  | { accepted: string }
  | { refused: Exclude<ErrorCode, "bad_message" | "rate_limited" | "unavailable">; requestId: string }
  | { refused: "bad_message"; requestId?: string; says?: string }
  | { closed: number; reason: string }
  | { pong: true };

/**
 * The frame is built when the case runs, from the smallest winning amount then and the highest, so
 * a bid that should win is above whatever is highest.
 */
type Frame = string | Buffer | ((nextCents: number, highestCents: number) => string);

interface Case {
  case: string;
  frame: Frame;
  expected: Expected;
}

let caseNumber = 0;
/** A bid frame with its own requestId, for the smallest winning amount unless the case says otherwise. */
function bid(fields: Record<string, unknown> = {}): { frame: (nextCents: number) => string; requestId: string } {
  caseNumber++;
  const requestId = `case-${caseNumber}`;
  return {
    requestId,
    frame: (nextCents) =>
      JSON.stringify({ type: "bid", requestId, bidderName: "Catalogue", amount: nextCents / 100, ...fields }),
  };
}

/** A bid frame whose amount is written as raw text: tokens JSON.stringify cannot produce. */
function rawAmount(token: string) {
  caseNumber++;
  const requestId = `case-${caseNumber}`;
  return {
    requestId,
    frame: `{"type":"bid","requestId":"${requestId}","bidderName":"Catalogue","amount":${token}}`,
  };
}

const named = (label: string, frame: Frame, expected: Expected): Case => ({ case: label, frame, expected });
const badMessage = (label: string, made: { frame: Frame; requestId?: string }, says?: string): Case =>
  named(label, made.frame, { refused: "bad_message", requestId: made.requestId, says });
const amountCase = (label: string, amount: number | string): Case => {
  const made = typeof amount === "string" ? rawAmount(amount) : bid({ amount });
  return named(label, made.frame, { refused: "invalid_amount", requestId: made.requestId });
};
const nameCase = (
  label: string,
  name: string,
  outcome: "accepted" | "invalid_name" | "name_not_allowed",
  stored = name,
): Case => {
  const made = bid({ bidderName: name });
  return named(
    label,
    made.frame,
    outcome === "accepted" ? { accepted: stored } : { refused: outcome, requestId: made.requestId },
  );
};

const padding = (totalBytes: number) => {
  const frame = JSON.stringify({ type: "ping", padding: "" });
  return JSON.stringify({ type: "ping", padding: "x".repeat(totalBytes - frame.length) });
};

const FRAMES: Case[] = [
  named("a binary frame", Buffer.from('{"type":"ping"}'), { closed: 1003, reason: "Text frames only" }),
  named(`a frame of ${MAX_MESSAGE_BYTES + 1} bytes`, padding(MAX_MESSAGE_BYTES + 1), { closed: 1009, reason: "" }),
  named("a frame of 1 MiB", padding(1024 * 1024), { closed: 1009, reason: "" }),
  // Exactly at the limit the frame is read, and refused only for its extra field.
  badMessage(`a frame of exactly ${MAX_MESSAGE_BYTES} bytes`, { frame: padding(MAX_MESSAGE_BYTES) }, "padding"),
];

const NOT_MESSAGES: Case[] = [
  named("a ping with white space around it, which JSON allows", ' \t{"type":"ping"}\n', { pong: true }),
  badMessage("invalid JSON", { frame: "{not json" }),
  badMessage("an empty frame", { frame: "" }),
  badMessage("a truncated message", { frame: '{"type":"bid","requestId":"cut"' }),
  badMessage("JSON null", { frame: "null" }),
  badMessage("a JSON array", { frame: '[{"type":"ping"}]' }),
  badMessage("a JSON number", { frame: "42" }),
  badMessage("a JSON string", { frame: '"bid"' }),
  badMessage("an empty object", { frame: "{}" }),
  badMessage("an unknown type, keeping its requestId", {
    frame: '{"type":"sell","requestId":"r-sell"}',
    requestId: "r-sell",
  }),
  badMessage("a type in the wrong case", bid({ type: "BID" })),
  badMessage("a ping with an extra field", { frame: '{"type":"ping","requestId":"p-1"}', requestId: "p-1" }),
];

function withoutField(field: string) {
  const made = bid();
  return {
    requestId: field === "requestId" ? undefined : made.requestId,
    frame: (nextCents: number) => {
      const message = JSON.parse(made.frame(nextCents));
      delete message[field];
      return JSON.stringify(message);
    },
  };
}

const SHAPES: Case[] = [
  badMessage("a bid without a type", withoutField("type"), "type"),
  badMessage("a bid without a requestId", withoutField("requestId"), "requestId"),
  badMessage("a bid without a bidderName", withoutField("bidderName"), "bidderName"),
  badMessage("a bid without an amount", withoutField("amount"), "amount"),
  badMessage("a bid with an extra field", bid({ bonus: 1 }), "bonus"),
  badMessage("a bid with a __proto__ field", rawFields('"amount":1,"__proto__":{"amount":1}'), "__proto__"),
  badMessage("a bid with the amount as a string", bid({ amount: "12.50" }), "amount"),
  badMessage("a bid with the amount null (what JSON.stringify makes of NaN)", bid({ amount: null }), "amount"),
  badMessage("a bid with the amount true", bid({ amount: true }), "amount"),
  badMessage("a bid with the amount in an array", bid({ amount: [12] }), "amount"),
  badMessage("a bid with the amount an object", bid({ amount: { dollars: 12 } }), "amount"),
  badMessage(
    "a bid whose second amount is a string (the last key wins)",
    rawFields('"amount":1,"amount":"1"'),
    "amount",
  ),
  badMessage("a bid with the name a number", bid({ bidderName: 7 }), "bidderName"),
  badMessage("a bid with the name null", bid({ bidderName: null }), "bidderName"),
  badMessage("a bid with the name an array", bid({ bidderName: ["Nobody"] }), "bidderName"),
  badMessage("a requestId that is a number", { ...bid({ requestId: 7 }), requestId: undefined }, "requestId"),
  badMessage("an empty requestId", { ...bid({ requestId: "" }), requestId: undefined }, "requestId"),
  badMessage(
    "a requestId of 65 characters",
    { ...bid({ requestId: "r".repeat(65) }), requestId: undefined },
    "requestId",
  ),
];

/** A bid with a valid name and requestId and the given raw fields after them (the amount included). */
function rawFields(fields: string) {
  caseNumber++;
  const requestId = `case-${caseNumber}`;
  return { requestId, frame: `{"type":"bid","requestId":"${requestId}","bidderName":"Catalogue",${fields}}` };
}

/** A bid of the amount `at` picks, given the smallest winning amount and the highest. */
function tooLow(label: string, at: (nextCents: number, highestCents: number) => number): Case {
  const made = bid();
  return named(label, (nextCents, highestCents) => made.frame(at(nextCents, highestCents)), {
    refused: "too_low",
    requestId: made.requestId,
  });
}

const notJson = (token: string) => ({ frame: rawAmount(token).frame });

const NUMBERS: Case[] = [
  // Not JSON at all, so no requestId can be read from them.
  badMessage("NaN, which JSON cannot carry", notJson("NaN")),
  badMessage("Infinity, which JSON cannot carry", notJson("Infinity")),
  badMessage("-Infinity, which JSON cannot carry", notJson("-Infinity")),
  badMessage("a hexadecimal amount", notJson("0x10")),
  badMessage("an amount with a leading zero", notJson("012")),
  badMessage("an amount with a plus sign", notJson("+12")),
  // Valid JSON that reads as Infinity: a number, so the bid rules refuse it.
  amountCase("1e309, read as Infinity", "1e309"),
  amountCase("-1e309, read as -Infinity", "-1e309"),
  amountCase("-0", "-0"),
  amountCase("zero", 0),
  amountCase("a negative amount", -5),
  amountCase("minus one cent", -0.01),
  amountCase("3 decimals", 12.345),
  amountCase("a tenth of a cent", 0.001),
  amountCase("the smallest double", 5e-324),
  amountCase("0.1 + 0.2 (not a whole number of cents)", 0.1 + 0.2),
  amountCase("one cent over the maximum", 1_000_000_000.01),
  amountCase("1e21, whose text has an exponent", 1e21),
  amountCase("the largest double", Number.MAX_VALUE),
  amountCase("3 decimals above the maximum", "1000000000.001"),
  tooLow("the highest amount again", (_next, highest) => highest),
  tooLow("one cent under the highest", (_next, highest) => highest - 1),
  tooLow("one cent under the smallest winning amount", (next) => next - 1),
];

const EMOJI = "\u{1f600}";
const NAMES: Case[] = [
  nameCase("an empty name", "", "invalid_name"),
  nameCase("a name of spaces", "   ", "invalid_name"),
  nameCase("a name of tabs and newlines", "\t\n\r", "invalid_name"),
  nameCase("a name of ideographic and no-break spaces", "\u3000\u00a0", "invalid_name"),
  nameCase("a name of 41 letters", "x".repeat(41), "invalid_name"),
  nameCase("a name of 40 letters", "x".repeat(40), "accepted"),
  nameCase("a name of 40 emoji (80 UTF-16 units, 40 code points)", EMOJI.repeat(40), "accepted"),
  nameCase("a name of 41 emoji", EMOJI.repeat(41), "invalid_name"),
  nameCase("40 emoji between spaces, trimmed", `  ${EMOJI.repeat(40)}\u3000`, "accepted", EMOJI.repeat(40)),
  nameCase("a name with NUL (U+0000)", "No\u0000body", "invalid_name"),
  nameCase("a name with U+001F", "No\u001fbody", "invalid_name"),
  nameCase("a name with DEL (U+007F)", "No\u007fbody", "invalid_name"),
  nameCase("a name with NEL (U+0085)", "No\u0085body", "invalid_name"),
  nameCase("a name with an escape sequence", "\u001b[31mRed", "invalid_name"),
  nameCase("a name with a right-to-left override (U+202E)", "\u202egnihtoN", "invalid_name"),
  nameCase("a name with a zero-width space (U+200B)", "No\u200bbody", "invalid_name"),
  nameCase("a name with a zero-width joiner (U+200D)", "No\u200dbody", "invalid_name"),
  // U+200D joins two emoji, and only that (docs/design.md#11).
  nameCase("a family emoji, which joins with U+200D", "\u{1f468}\u200d\u{1f469}\u200d\u{1f467}", "accepted"),
  nameCase("a woman astronaut among letters", "Ana \u{1f469}\u200d\u{1f680}", "accepted"),
  nameCase("a rainbow flag (U+FE0F before the joiner)", "\u{1f3f3}\ufe0f\u200d\u{1f308}", "accepted"),
  nameCase("a technologist with a skin tone", "\u{1f469}\u{1f3fd}\u200d\u{1f4bb}", "accepted"),
  nameCase("a lone zero-width joiner", "\u200d", "invalid_name"),
  nameCase("a zero-width joiner before an emoji", "\u200d\u{1f680}", "invalid_name"),
  nameCase("a zero-width joiner after an emoji", "\u{1f469}\u200d", "invalid_name"),
  nameCase("two zero-width joiners between emoji", "\u{1f469}\u200d\u200d\u{1f680}", "invalid_name"),
  nameCase("a zero-width joiner between an emoji and a letter", "\u{1f469}\u200dNobody", "invalid_name"),
  nameCase("a zero-width space between emoji (U+200B)", "\u{1f469}\u200b\u{1f680}", "invalid_name"),
  nameCase("a name with a byte order mark inside (U+FEFF)", "No\ufeffbody", "invalid_name"),
  nameCase("a byte order mark at the start, trimmed as white space", "\ufeffNobody", "accepted", "Nobody"),
  nameCase("a lone surrogate (a JSON \\ud800 escape)", "\ud800", "invalid_name"),
  nameCase("a lone low surrogate after a letter", "a\udc00", "invalid_name"),
  nameCase("combining marks (Mn) on letters", "Zoe\u0308 Nguye\u0302\u0303n", "accepted"),
  nameCase("20 letters with an accent each (40 code points)", "e\u0301".repeat(20), "accepted"),
  nameCase("20 accented letters and one more (41 code points)", `${"e\u0301".repeat(20)}a`, "invalid_name"),
  nameCase("one letter under 39 combining marks", `Z${"\u0336".repeat(39)}`, "accepted"),
  nameCase(
    "right-to-left script without overrides",
    "\u05e9\u05dc\u05d5\u05dd \u0645\u0632\u0627\u064a\u062f",
    "accepted",
  ),
  nameCase("a flag and a skin tone", "\u{1f1f3}\u{1f1f4}\u{1f44d}\u{1f3fd}", "accepted"),
  nameCase("the last code point (U+10FFFF), a noncharacter that shows nothing", "\u{10ffff}", "invalid_name"),
  nameCase("a letter and the last code point", "x\u{10ffff}", "accepted"),
  // Issue 20: names that looked blank were accepted (docs/design.md#11).
  nameCase("a name of Hangul fillers (U+3164)", "\u3164\u3164\u3164", "invalid_name"),
  nameCase("a name of blank braille patterns (U+2800)", "\u2800\u2800", "invalid_name"),
  nameCase("a name of choseong and jungseong fillers (U+115F, U+1160)", "\u115f\u1160", "invalid_name"),
  nameCase("a name of a halfwidth Hangul filler (U+FFA0)", "\uffa0", "invalid_name"),
  nameCase("a name of combining marks alone", "\u0301\u0308", "invalid_name"),
  nameCase("a Hangul filler inside a name, stored as sent", "No\u3164one", "accepted"),
  nameCase("an img tag with onerror", "<img src=x onerror=alert(1)>", "accepted"),
  nameCase("a script element", "<script>alert(1)</script>", "accepted"),
  nameCase("an attribute breakout", '"><svg onload=alert(1)>', "accepted"),
  nameCase("an HTML entity", "&lt;b&gt;&amp;", "accepted"),
  nameCase("SQL in a name", "Robert'); DROP TABLE auction_bids;--", "accepted"),
  nameCase("a profanity", "fuck", "name_not_allowed"),
  nameCase("a profanity in capitals, stretched", "FUUUUCK", "name_not_allowed"),
  nameCase("a profanity in leetspeak", "sh1t happens", "name_not_allowed"),
  nameCase("a slur spelt with digits", "n1gg3r", "name_not_allowed"),
  nameCase("a place that contains a rude word (the Scunthorpe problem)", "Scunthorpe", "accepted"),
  nameCase("a word that contains one", "Cocktail Assassin", "accepted"),
  nameCase("a URL", "https://nothing.example", "name_not_allowed"),
  nameCase("another scheme", "ftp://x", "name_not_allowed"),
  nameCase("www.", "www.nothing", "name_not_allowed"),
  nameCase("a host name with a top-level domain", "buy at nothing.store", "name_not_allowed"),
  nameCase("a host name in capitals", "NOTHING.COM", "name_not_allowed"),
  nameCase("an e-mail address", "me@nothing.io", "name_not_allowed"),
  // Issue 20: the filter read the name as sent, so these passed it (docs/design.md#11).
  nameCase("a profanity in circled letters", "\u24d5\u24e4\u24d2\u24da", "name_not_allowed"),
  nameCase("a profanity with a combining grapheme joiner (U+034F)", "f\u034fuck", "name_not_allowed"),
  nameCase("a profanity with Greek and Cyrillic lookalikes", "f\u03c5\u0441k", "name_not_allowed"),
  nameCase("a host name with an ideographic full stop", "nothing\u3002store", "name_not_allowed"),
  nameCase("a host name with a one dot leader (U+2024)", "nothing\u2024store", "name_not_allowed"),
  nameCase("a URL with a fullwidth colon", "http\uff1a//evil", "name_not_allowed"),
  nameCase("initials with dots", "J.R. Nobody", "accepted"),
  nameCase("a dot before a word that is no top-level domain", "Mr.Nobody", "accepted"),
  nameCase("digits that leetspeak would read as a rude word, alone", "Agent 455", "accepted"),
];

// ---- Running a case ----------------------------------------------------------------------------

async function send(auction: Auction, frame: Frame): Promise<Outcome> {
  const text =
    typeof frame === "function" ? frame(modelNextWinningCents(auction.highestCents), auction.highestCents ?? 0) : frame;
  return auction.sender.exchange(text, { binary: Buffer.isBuffer(text) });
}

function expectAnswer(auction: Auction, outcome: Outcome, expected: Expected) {
  if ("accepted" in expected) {
    expect(outcome).toMatchObject({ type: "accepted", bid: { bidderName: expected.accepted } });
    if (outcome.type === "accepted") {
      auction.highestCents = outcome.bid.amountCents;
      auction.accepted.push(outcome.bid);
    }
  } else if ("closed" in expected) {
    expect(outcome).toEqual({ type: "closed", code: expected.closed, reason: expected.reason });
  } else if ("pong" in expected) {
    expect(outcome).toEqual({ type: "pong" });
  } else if (expected.refused === "bad_message") {
    const answer = {
      type: "error",
      code: "bad_message",
      message: expect.stringMatching(/^The message could not be read\. /),
    };
    expect(outcome).toEqual(expected.requestId === undefined ? answer : { ...answer, requestId: expected.requestId });
    if (expected.says !== undefined && outcome.type === "error") expect(outcome.message).toContain(expected.says);
  } else {
    expect(outcome).toEqual({
      type: "error",
      code: expected.refused,
      requestId: expected.requestId,
      message:
        expected.refused === "too_low"
          ? modelTooLowMessage(auction.highestCents ?? 0)
          : REFUSAL_TEXTS[expected.refused],
      highestCents: auction.highestCents,
    });
  }
}

/** The service still answers a new socket, and a new bid reaches the bystander that was open all along. */
async function expectUnharmed(auction: Auction) {
  if (auction.sender.socket.readyState !== auction.sender.socket.OPEN) {
    auction.sender = await connectRaw(auction.service.socketUrl);
    await auction.sender.opening();
  }
  const amountCents = modelNextWinningCents(auction.highestCents);
  const outcome = await auction.sender.exchange(
    JSON.stringify({ type: "bid", requestId: "after", bidderName: "Still Here", amount: amountCents / 100 }),
  );
  expect(outcome).toMatchObject({ type: "accepted", bid: { amountCents } });
  if (outcome.type !== "accepted") return;
  auction.highestCents = amountCents;
  auction.accepted.push(outcome.bid);
  await waitFor("the bystander to hear the new bid", () => auction.bystander.broadcasts.at(-1)?.id === outcome.bid.id);
}

describe.each(BACKENDS)("adversarial catalogue on %s", (backend) => {
  let auction: Auction;
  beforeAll(async () => {
    auction = await openAuction(backend);
  });
  afterAll(async () => {
    await auction?.stop();
    await auction?.location.remove();
  });

  describe.each([
    ["frames the socket refuses", FRAMES],
    ["text that is not a message", NOT_MESSAGES],
    ["messages of the wrong shape", SHAPES],
    ["numbers", NUMBERS],
    ["names", NAMES],
  ] as const)("%s", (_group, cases) => {
    it.each(cases)("$case", async ({ frame, expected }) => {
      expectAnswer(auction, await send(auction, frame), expected);
      await expectUnharmed(auction);
    });
  });

  it("broadcast every accepted bid once, in order, and stored each name exactly as accepted", async () => {
    await waitFor("the last broadcast", () => auction.bystander.broadcasts.at(-1)?.id === auction.accepted.at(-1)?.id);
    expect(unheardBids(auction.bystander.bidFrames, auction.accepted)).toEqual([]);
    await auction.stop();
    const rows = await withDirectSql(auction.location, (query) =>
      query("SELECT id::int AS id, bidder_name, (amount * 100)::bigint::text AS cents FROM auction_bids ORDER BY 1"),
    );
    expect(rows.map((row) => [row.id, row.bidder_name, Number(row.cents)])).toEqual(
      auction.accepted.map((bid) => [bid.id, bid.bidderName, bid.amountCents]),
    );
    expect(rows.map((row) => row.bidder_name)).toContain("<script>alert(1)</script>");
  });
});

// ---- Limits at the door and over time (in front of the store, so one backend) ----------------

describe("adversarial catalogue: the limits", () => {
  let auction: Auction | undefined;
  afterAll(async () => {
    await auction?.stop();
    await auction?.location.remove();
  });

  async function refusal(url: string, options: Parameters<typeof connectClient>[1]) {
    const error = await connectClient(url, options).then(
      async (client) => {
        await client.close();
        return null;
      },
      (reason: unknown) => reason,
    );
    if (!(error instanceof UpgradeRefused)) throw new Error(`expected a refused upgrade, got ${String(error)}`);
    return [error.status, error.body];
  }

  it("refuses a foreign Origin, and a null one, with 403 at the upgrade", async () => {
    auction = await openAuction("pglite", { bidRateLimit: 5, bidRateWindowMs: 600_000, maxSocketsPerAddress: 4 });
    const forbidden = [403, "This origin may not connect to the auction."];
    expect(await refusal(auction.service.socketUrl, { origin: "https://evil.example" })).toEqual(forbidden);
    expect(await refusal(auction.service.socketUrl, { origin: "null" })).toEqual(forbidden);
    expect(await refusal(auction.service.socketUrl, { origin: "http://127.0.0.1.evil.example" })).toEqual(forbidden);
    await expectUnharmed(auction);
  });

  it("refuses sockets over the per-address cap with 429, and keeps the open ones", async () => {
    if (!auction) throw new Error("the auction of the first case is missing");
    // The bystander and the sender hold 2 of the 4 slots.
    const more = [await connectRaw(auction.service.socketUrl), await connectRaw(auction.service.socketUrl)];
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(await refusal(auction.service.socketUrl, {})).toEqual([429, "Too many connections from your address."]);
      }
      await expectUnharmed(auction);
    } finally {
      await Promise.all(more.map((client) => client.close()));
    }
  });

  it("answers a bid flood over the rate limit with rate_limited, accepting exactly the limit", async () => {
    if (!auction) throw new Error("the auction of the first case is missing");
    // A fresh socket, with its whole frame budget: twice the rate limit, 10 frames (docs/design.md#11).
    await auction.sender.close();
    auction.sender = await connectRaw(auction.service.socketUrl);
    await auction.sender.opening();
    // Refusals before the limit do not count against it (they do against the frame budget): 3 bad names first.
    const badNames = [];
    for (let i = 0; i < 3; i++) badNames.push(await send(auction, bid({ bidderName: "" }).frame));
    expect(new Set(badNames.map((answer) => answer.type === "error" && answer.code))).toEqual(
      new Set(["invalid_name"]),
    );

    // expectUnharmed of the earlier cases placed 2 bids; the window allows 5.
    const flood = modelWinningAmounts(7, auction.highestCents).map((cents, index) =>
      JSON.stringify({ type: "bid", requestId: `flood-${index}`, bidderName: "Flooder", amount: cents / 100 }),
    );
    for (const frame of flood) auction.sender.socket.send(frame);
    const answers: Outcome[] = [];
    for (let i = 0; i < flood.length; i++) answers.push(await auction.sender.next());
    const accepted = answers.filter((answer) => answer.type === "accepted");
    const limited = answers.filter((answer) => answer.type === "error" && answer.code === "rate_limited");
    expect([accepted.length, limited.length]).toEqual([3, 4]);
    expect(limited[0]).toMatchObject({ message: REFUSAL_TEXTS.rate_limited });
    const lastAccepted = accepted.at(-1);
    if (lastAccepted?.type !== "accepted") throw new Error("no bid accepted");
    await waitFor(
      "the bystander to hear the flood's bids",
      () => auction?.bystander.broadcasts.at(-1)?.id === lastAccepted.bid.id,
    );
    expect(auction.bystander.broadcasts.filter((heard) => heard.bidderName === "Flooder")).toHaveLength(3);
    const health = await fetch(`${auction.service.httpUrl}/healthz`);
    expect(health.status).toBe(200);
  });

  it("closes a socket over its frame budget with 1008, pings included, and answers the others", async () => {
    if (!auction) throw new Error("the auction of the first case is missing");
    // The flood's socket has spent its budget: one more frame, a ping, closes it.
    auction.sender.socket.send('{"type":"ping"}');
    const overBudget = { type: "closed", code: 1008, reason: "Too many messages" };
    expect(await auction.sender.next()).toEqual(overBudget);
    // A fresh socket's flood of pings, which the rate limit does not cover: the budget's pongs, then the close.
    const pinger = await connectRaw(auction.service.socketUrl);
    await pinger.opening();
    for (let i = 0; i < 2_000; i++) pinger.socket.send('{"type":"ping"}');
    for (let i = 0; i < 10; i++) expect(await pinger.next()).toEqual({ type: "pong" });
    expect(await pinger.next()).toEqual(overBudget);
    expect((await fetch(`${auction.service.httpUrl}/healthz`)).status).toBe(200);
    const bystander = auction.bystander.socket;
    expect(bystander.readyState).toBe(bystander.OPEN);
  });
});
