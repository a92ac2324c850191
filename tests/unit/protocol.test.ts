import { describe, expect, it } from "vitest";
import { parseClientMessage, parseServerMessage, SNAPSHOT_SIZE } from "../../src/lib/auction/protocol.ts";

const bid = { type: "bid", requestId: "r1", bidderName: "Nobody", amount: 12.5 };

function refusal(text: string) {
  const parsed = parseClientMessage(text);
  if (parsed.ok) throw new Error(`expected a refusal for ${text}`);
  return parsed;
}

describe("client messages", () => {
  it("reads a bid and a ping", () => {
    expect(parseClientMessage(JSON.stringify(bid))).toEqual({ ok: true, message: bid });
    expect(parseClientMessage('{"type":"ping"}')).toEqual({ ok: true, message: { type: "ping" } });
  });

  it("refuses text that is not JSON", () => {
    expect(refusal("{type:bid")).toEqual({ ok: false, reason: "Message is not valid JSON." });
    expect(refusal("")).toEqual({ ok: false, reason: "Message is not valid JSON." });
  });

  it("refuses JSON that is not a message object", () => {
    for (const text of ["null", "42", '"bid"', "[]", "{}"]) expect(refusal(text).ok).toBe(false);
  });

  it("refuses an unknown type", () => {
    expect(refusal('{"type":"sell","requestId":"r9"}')).toMatchObject({ ok: false, requestId: "r9" });
  });

  it("refuses a bid with a missing field, keeping its requestId", () => {
    const { amount: _amount, ...noAmount } = bid;
    expect(refusal(JSON.stringify(noAmount))).toMatchObject({
      requestId: "r1",
      reason: expect.stringContaining("amount"),
    });
    const { bidderName: _name, ...noName } = bid;
    expect(refusal(JSON.stringify(noName))).toMatchObject({
      requestId: "r1",
      reason: expect.stringContaining("bidderName"),
    });
    const { requestId: _id, ...noId } = bid;
    expect(refusal(JSON.stringify(noId)).requestId).toBeUndefined();
  });

  it("refuses extra fields, so a typo never passes silently", () => {
    expect(refusal(JSON.stringify({ ...bid, amout: 13 }))).toMatchObject({ requestId: "r1" });
    expect(refusal('{"type":"ping","requestId":"p1"}')).toMatchObject({ requestId: "p1" });
  });

  it("refuses fields of the wrong type, keeping a readable requestId", () => {
    expect(refusal(JSON.stringify({ ...bid, amount: "12.50" }))).toMatchObject({
      requestId: "r1",
      reason: expect.stringContaining("amount"),
    });
    expect(refusal(JSON.stringify({ ...bid, bidderName: 7 }))).toMatchObject({ requestId: "r1" });
    expect(refusal(JSON.stringify({ ...bid, amount: null }))).toMatchObject({ requestId: "r1" });
  });

  it("leaves out a requestId it cannot use", () => {
    expect(refusal(JSON.stringify({ ...bid, requestId: 5 })).requestId).toBeUndefined();
    expect(refusal(JSON.stringify({ ...bid, requestId: "" })).requestId).toBeUndefined();
    expect(refusal(JSON.stringify({ ...bid, requestId: "x".repeat(65) })).requestId).toBeUndefined();
    expect(parseClientMessage(JSON.stringify({ ...bid, requestId: "x".repeat(64) })).ok).toBe(true);
  });

  it("leaves the bid rules to the rules: any name and number pass the schema", () => {
    expect(parseClientMessage(JSON.stringify({ ...bid, bidderName: "", amount: -1 })).ok).toBe(true);
  });
});

describe("a maximum's messages", () => {
  // 32 bytes in base64url, as a browser makes it: 43 characters.
  const secret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
  const maximum = { type: "maximum", requestId: "m1", bidderName: "Nobody", maximum: 25, bidderSecret: secret };

  it("reads a maximum and the question about one", () => {
    expect(parseClientMessage(JSON.stringify(maximum))).toEqual({ ok: true, message: maximum });
    const ask = { type: "myMaximum", bidderSecret: secret };
    expect(parseClientMessage(JSON.stringify(ask))).toEqual({ ok: true, message: ask });
  });

  it("refuses a secret that is not 22 to 128 base64url characters, naming the field", () => {
    for (const bidderSecret of [
      "",
      "short",
      "a".repeat(21),
      "a".repeat(129),
      `${secret.slice(1)}+`,
      `${secret}=`,
      7,
      null,
    ]) {
      expect(refusal(JSON.stringify({ ...maximum, bidderSecret }))).toMatchObject({
        requestId: "m1",
        reason: expect.stringContaining("bidderSecret"),
      });
      expect(refusal(JSON.stringify({ type: "myMaximum", bidderSecret })).ok).toBe(false);
    }
    expect(parseClientMessage(JSON.stringify({ ...maximum, bidderSecret: "a".repeat(22) })).ok).toBe(true);
    expect(parseClientMessage(JSON.stringify({ ...maximum, bidderSecret: "a".repeat(128) })).ok).toBe(true);
  });

  it("refuses a maximum without an amount, with one that is not a number, or with a field too many", () => {
    const { maximum: _amount, ...noAmount } = maximum;
    expect(refusal(JSON.stringify(noAmount))).toMatchObject({
      requestId: "m1",
      reason: expect.stringContaining("maximum"),
    });
    expect(refusal(JSON.stringify({ ...maximum, maximum: "25" }))).toMatchObject({ requestId: "m1" });
    // A bid's field on a maximum is a typo, not a bid.
    expect(refusal(JSON.stringify({ ...maximum, amount: 25 }))).toMatchObject({ requestId: "m1" });
    const { bidderSecret: _secret, ...noSecret } = maximum;
    expect(refusal(JSON.stringify(noSecret))).toMatchObject({ requestId: "m1" });
  });
});

describe("service messages", () => {
  it("reads what the service sends and refuses anything else", () => {
    const wire = { id: 1, bidderName: "Nobody", amountCents: 1250, createdAt: "2026-01-01T00:00:00.000Z" };
    const round = { number: 1, endsAt: "2026-11-21T13:00:00.000Z", ended: false, seconds: 3600, softCloseSeconds: 30 };
    const snapshot = {
      type: "snapshot",
      bids: [wire],
      highest: wire,
      bidders: 1,
      moderation: 0,
      round,
      pastWinners: [],
      now: "2026-11-21T12:00:00.000Z",
    };
    expect(parseServerMessage(JSON.stringify(snapshot))).toEqual({ ok: true, message: snapshot });
    // A snapshot from before rounds (no round, no clock) is not the protocol any more.
    expect(parseServerMessage(JSON.stringify({ ...snapshot, round: undefined })).ok).toBe(false);
    const broadcast = { type: "bid", bid: wire, bidders: 1, round: 1, endsAt: round.endsAt };
    expect(parseServerMessage(JSON.stringify(broadcast))).toEqual({ ok: true, message: broadcast });
    expect(parseServerMessage(JSON.stringify({ ...broadcast, round: 0 })).ok).toBe(false);
    expect(parseServerMessage('{"type":"bid","bid":{"id":0}}').ok).toBe(false);
    expect(parseServerMessage("nope").ok).toBe(false);
  });

  it("reads several bids in one frame (docs/design.md#10): oldest first, at most the page's list, lastId the newest's", () => {
    const wire = (id: number) => ({
      id,
      bidderName: `Bidder ${id}`,
      amountCents: id * 100,
      createdAt: "2026-01-01T00:00:00.000Z",
    });
    const frame = { type: "bids", lastId: 3, bidders: 2, round: 1, endsAt: null, bids: [wire(1), wire(3)] };
    expect(parseServerMessage(JSON.stringify(frame))).toEqual({ ok: true, message: frame });
    const full = Array.from({ length: SNAPSHOT_SIZE }, (_, index) => wire(index + 1));
    expect(parseServerMessage(JSON.stringify({ ...frame, lastId: SNAPSHOT_SIZE, bids: full })).ok).toBe(true);
    for (const [what, change] of [
      ["no bids", { bids: [] }],
      ["more than the page's list", { lastId: SNAPSHOT_SIZE + 1, bids: [...full, wire(SNAPSHOT_SIZE + 1)] }],
      ["newest first", { lastId: 1, bids: [wire(3), wire(1)] }],
      ["an id twice", { bids: [wire(3), wire(3)] }],
      ["lastId not the last bid's", { lastId: 4 }],
      ["no lastId", { lastId: undefined }],
      ["no bidders", { bidders: 0 }],
      ["round 0", { round: 0 }],
    ] as const) {
      expect(parseServerMessage(JSON.stringify({ ...frame, ...change })).ok, what).toBe(false);
    }
  });
});
