import { map } from "nanostores";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClientMessage, ServerMessage, WireBid } from "../../src/lib/auction/protocol.ts";
import { globalTimers } from "../../src/lib/timers.ts";
import { type AuctionState, BID_ACK_TIMEOUT_MS } from "../../src/stores/auctionConnection.ts";
import {
  BIDDER_SECRET_KEY,
  base64url,
  createMaximumBid,
  MAXIMUM_NAME_KEY,
  type MaximumBidOptions,
} from "../../src/stores/maximumBid.ts";

const bid = (id: number, bidderName: string, amountCents: number): WireBid => ({
  id,
  bidderName,
  amountCents,
  createdAt: "2026-11-28T12:00:00.000Z",
});

const round = (number: number, ended = false) => ({
  number,
  endsAt: "2026-11-28T13:00:00.000Z",
  ended,
  seconds: 3_600,
  softCloseSeconds: 30,
});

const snapshot = {
  type: "snapshot",
  bids: [],
  highest: null,
  bidders: 0,
  moderation: 0,
  round: round(1),
  pastWinners: [],
  now: "2026-11-28T12:00:00.000Z",
} satisfies ServerMessage;

/** Bytes 0, 1, …, 31: the secret they make is known in advance. */
const COUNTING_BYTES = (bytes: Uint8Array) => bytes.set(bytes.map((_, index) => index));
const SECRET_OF_COUNTING_BYTES = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

function memoryStorage(entries: Record<string, string> = {}) {
  const stored = new Map(Object.entries(entries));
  return {
    stored,
    getItem: (key: string) => stored.get(key) ?? null,
    setItem: (key: string, value: string) => void stored.set(key, value),
  };
}

/** A page's connection as the maximum sees it: what it sends is kept, what the service says is passed in. */
function fakeConnection(live = true) {
  const $auction = map<AuctionState>({
    status: live ? "live" : "connecting",
    bids: [],
    highest: null,
    bidders: 0,
    round: round(1),
    pastWinners: [],
    serviceOffsetMs: 0,
    leaderNote: null,
  });
  const sent: ClientMessage[] = [];
  const claimed: number[] = [];
  const answered = { current: (_bid: WireBid) => false };
  const listeners = new Set<(message: ServerMessage) => void>();
  let open = true;
  return {
    sent,
    claimed,
    /** Whether the page's maximum answers this bid at once (no outbid toast for it). */
    answers: (placed: WireBid) => answered.current(placed),
    connection: {
      $auction,
      claimBid: (id: number) => void claimed.push(id),
      answerWithMaximum(answers: (bid: WireBid) => boolean) {
        answered.current = answers;
      },
      send: (message: ClientMessage) => open && sent.push(message) > 0,
      listen(listener: (message: ServerMessage) => void) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    /** A message from the service, as the connection hands it on after its own stores. */
    receive(message: unknown) {
      for (const listener of listeners) listener(message as ServerMessage);
    },
    setOpen(value: boolean) {
      open = value;
    },
    /** The highest bid as the page's stores show it after a frame. */
    showHighest(highest: WireBid | null) {
      $auction.setKey("highest", highest);
    },
  };
}

type Overrides = Partial<Omit<MaximumBidOptions, "storage">> & {
  live?: boolean;
  storage?: ReturnType<typeof memoryStorage>;
  /** Reading localStorage itself throws, as where a browser blocks it. */
  blockedStorage?: boolean;
};

function openMaximum({ live = true, storage = memoryStorage(), blockedStorage = false, ...overrides }: Overrides = {}) {
  const page = fakeConnection(live);
  const maximum = createMaximumBid({
    connection: page.connection,
    storage: () => {
      if (blockedStorage) throw new DOMException("The operation is insecure.", "SecurityError");
      return storage;
    },
    fillRandom: COUNTING_BYTES,
    timers: globalTimers,
    ...overrides,
  });
  return { ...page, storage, ...maximum };
}

/** The service's answer to a maximum it set: it leads, in round 1 unless told otherwise. */
const maximumSetAnswer = (requestId: string, maximumCents: number, fields: { bid?: WireBid; round?: number } = {}) => ({
  type: "maximumSet",
  requestId,
  maximumCents,
  leading: true,
  bid: fields.bid ?? null,
  round: fields.round ?? 1,
});

/** Sets a maximum of $50 as Ada and has the service accept it. */
async function setAcceptedMaximum(page: ReturnType<typeof openMaximum>) {
  const outcome = page.setMaximum("Ada", 5_000);
  page.receive(maximumSetAnswer("maximum-1", 5_000));
  await expect(outcome).resolves.toEqual({ ok: true, maximumCents: 5_000 });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the bidder secret", () => {
  it("is base64url without padding: 32 bytes make 43 characters of [A-Za-z0-9_-]", () => {
    // 0xfb and 0xff bytes make the characters base64 and base64url spell differently (+/ against -_).
    for (const bytes of [
      new Uint8Array(32).fill(0xfb),
      new Uint8Array(32).fill(0xff),
      crypto.getRandomValues(new Uint8Array(32)),
    ]) {
      expect(base64url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
      expect(base64url(bytes)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    }
  });

  it("is made on the first maximum only, kept in storage, and sent with it", async () => {
    const page = openMaximum();
    page.receive(snapshot);
    expect(page.sent, "no secret yet: nothing to ask").toEqual([]);
    expect(page.storage.stored.has(BIDDER_SECRET_KEY)).toBe(false);

    const outcome = page.setMaximum("Ada", 5_000);
    expect(page.sent).toEqual([
      {
        type: "maximum",
        requestId: "maximum-1",
        bidderName: "Ada",
        maximum: 50,
        bidderSecret: SECRET_OF_COUNTING_BYTES,
      },
    ]);
    expect(page.storage.stored.get(BIDDER_SECRET_KEY)).toBe(SECRET_OF_COUNTING_BYTES);
    expect(page.storage.stored.get(MAXIMUM_NAME_KEY)).toBe("Ada");
    page.receive(maximumSetAnswer("maximum-1", 5_000));
    await outcome;

    // A second maximum reuses the secret: no new randomness.
    const fillRandom = vi.fn();
    const reloaded = openMaximum({ storage: memoryStorage(Object.fromEntries(page.storage.stored)), fillRandom });
    void reloaded.setMaximum("Ada", 6_000);
    expect(fillRandom).not.toHaveBeenCalled();
    expect(reloaded.sent.at(-1)).toMatchObject({ bidderSecret: SECRET_OF_COUNTING_BYTES, maximum: 60 });
  });

  it("lives for the visit when storage is blocked or full", async () => {
    const full = memoryStorage();
    full.setItem = () => {
      throw new DOMException("Quota exceeded.", "QuotaExceededError");
    };
    for (const page of [openMaximum({ blockedStorage: true }), openMaximum({ storage: full })]) {
      await setAcceptedMaximum(page);
      expect(page.$maximum.get()).toEqual({ round: 1, maximumCents: 5_000, bidderName: "Ada", leading: true });
      page.receive(snapshot);
      expect(page.sent.at(-1)).toEqual({ type: "myMaximum", bidderSecret: SECRET_OF_COUNTING_BYTES });
    }
  });
});

describe("setting a maximum", () => {
  it("answers no_connection at once when nothing could be sent", async () => {
    const page = openMaximum({ live: false });
    page.setOpen(false);
    await expect(page.setMaximum("Ada", 5_000)).resolves.toEqual({ ok: false, code: "no_connection" });
  });

  it("passes the service's refusal on, with the highest it lost to", async () => {
    const page = openMaximum();
    const outcome = page.setMaximum("Ada", 5_000);
    // Another request's answer is not this one's.
    page.receive({ type: "error", requestId: "bid-1", code: "too_low", message: "", highestCents: 1 });
    page.receive({ type: "error", requestId: "maximum-1", code: "too_low", message: "", highestCents: 9_000 });
    await expect(outcome).resolves.toEqual({ ok: false, code: "too_low", highestCents: 9_000 });
    expect(page.$maximum.get()).toBeNull();
  });

  it("times out after the bid's acknowledgement time, and fails at once when the connection is lost", async () => {
    const page = openMaximum();
    const timedOut = page.setMaximum("Ada", 5_000);
    await vi.advanceTimersByTimeAsync(BID_ACK_TIMEOUT_MS - 1);
    let settled = false;
    void timedOut.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(timedOut).resolves.toEqual({ ok: false, code: "timeout" });

    const lost = page.setMaximum("Ada", 5_000);
    page.connection.$auction.setKey("status", "reconnecting");
    await expect(lost).resolves.toEqual({ ok: false, code: "connection_lost" });
    // A late answer settles nothing more, but shows the maximum the service did set.
    page.receive(maximumSetAnswer("maximum-1", 5_000));
    expect(vi.getTimerCount()).toBe(0);
    expect(page.$maximum.get()).toEqual({ round: 1, maximumCents: 5_000, bidderName: "Ada", leading: true });
  });
});

describe("the owner's state", () => {
  it("leads while the highest bid is the owner's and not above the maximum", async () => {
    const page = openMaximum();
    await setAcceptedMaximum(page);
    page.showHighest(bid(2, "Bo", 3_000));
    expect(page.$maximum.get()?.leading).toBe(false);
    // The automatic bid answers Bo's: the owner leads again.
    page.showHighest(bid(3, " Ada ", 3_100));
    expect(page.$maximum.get()?.leading).toBe(true);
    page.showHighest(bid(4, "Bo", 5_100));
    expect(page.$maximum.get()).toEqual({ round: 1, maximumCents: 5_000, bidderName: "Ada", leading: false });
    // A plain bid of the owner's above the maximum is theirs, not the maximum's.
    page.showHighest(bid(5, "Ada", 6_000));
    expect(page.$maximum.get()?.leading).toBe(false);
  });

  it("answers another name's bid below it at once, so the page does not call it an outbid", async () => {
    const page = openMaximum();
    expect(page.answers(bid(2, "Bo", 3_000)), "no maximum yet").toBe(false);
    await setAcceptedMaximum(page);
    expect(page.answers(bid(2, "Bo", 3_000))).toBe(true);
    // Even once the page counts Bo as leading: the automatic bid is on its way in the next frame.
    page.showHighest(bid(2, "Bo", 3_000));
    expect(page.answers(bid(2, "Bo", 3_000))).toBe(true);
    // A tie goes to the earlier maximum: Bo's bid at the maximum is never stored, so never heard.
    expect(page.answers(bid(3, "Bo", 5_000))).toBe(false);
    expect(page.answers(bid(3, "Bo", 5_100))).toBe(false);
    // The maximum's own automatic bid, up to the maximum itself (a tie answered at it), is no outbid either.
    expect(page.answers(bid(3, "Ada", 5_000))).toBe(true);
    expect(page.answers(bid(3, "Ada", 5_001)), "the owner's name above the maximum: a plain bid").toBe(false);
  });

  it("claims its automatic bids as the page's own, so outbid and won toasts follow them", async () => {
    const page = openMaximum();
    const outcome = page.setMaximum("Ada", 5_000);
    // The maximum's first automatic bid, placed at once against Bo's $10.
    page.receive(maximumSetAnswer("maximum-1", 5_000, { bid: bid(2, "Ada", 1_100) }));
    await outcome;
    page.receive({ type: "bid", bid: bid(3, "Bo", 2_000), bidders: 2, round: 1, endsAt: null });
    page.receive({ type: "bid", bid: bid(4, "Ada ", 2_100), bidders: 2, round: 1, endsAt: null });
    page.receive({
      type: "bids",
      lastId: 7,
      bids: [bid(5, "Bo", 5_000), bid(6, "Ada", 5_000), bid(7, "Ada", 5_001)],
      bidders: 2,
      round: 1,
      endsAt: null,
    });
    // Not Bo's, and not a bid of Ada's above the maximum: that one the service never placed for it.
    expect(page.claimed).toEqual([2, 4, 6]);
  });

  it("keeps the service's answer while the page is behind it: a round not yet shown, a bid not yet broadcast", async () => {
    const page = openMaximum();
    page.showHighest(bid(2, "Bo", 3_000));
    page.connection.$auction.setKey("round", round(1, true));
    // The maximum opens round 2 with its first bid, answered before that bid's broadcast arrives.
    const outcome = page.setMaximum("Ada", 5_000);
    page.receive(maximumSetAnswer("maximum-1", 5_000, { bid: bid(3, "Ada", 1), round: 2 }));
    await outcome;
    page.connection.$auction.setKey("status", "live");
    expect(page.$maximum.get()).toEqual({ round: 2, maximumCents: 5_000, bidderName: "Ada", leading: true });
    page.connection.$auction.setKey("round", round(2));
    page.showHighest(bid(3, "Ada", 1));
    expect(page.$maximum.get()?.leading).toBe(true);
    page.showHighest(bid(4, "Bo", 6_000));
    expect(page.$maximum.get()?.leading).toBe(false);
  });

  it("ends with its round", async () => {
    const page = openMaximum();
    await setAcceptedMaximum(page);
    page.connection.$auction.setKey("round", round(1, true));
    expect(page.$maximum.get()).toBeNull();

    // The next round's maximum, ended by the round after it.
    page.connection.$auction.setKey("round", round(2));
    const outcome = page.setMaximum("Ada", 7_000);
    page.receive(maximumSetAnswer("maximum-2", 7_000, { bid: bid(9, "Ada", 100), round: 2 }));
    await outcome;
    expect(page.$maximum.get()?.maximumCents).toBe(7_000);
    page.connection.$auction.setKey("round", round(3));
    expect(page.$maximum.get()).toBeNull();
  });

  it("is asked for after every snapshot, resume and moderation, and shown from the answer", async () => {
    const first = openMaximum();
    await setAcceptedMaximum(first);

    // The same browser, reloaded: the secret and the name are in storage.
    const page = openMaximum({ storage: memoryStorage(Object.fromEntries(first.storage.stored)), live: false });
    expect(page.sent).toEqual([]);
    for (const type of ["snapshot", "resume", "moderated"]) page.receive({ ...snapshot, type });
    expect(page.sent).toEqual(Array(3).fill({ type: "myMaximum", bidderSecret: SECRET_OF_COUNTING_BYTES }));

    page.receive({ type: "myMaximum", round: 1, maximumCents: 5_000, leading: false });
    expect(page.$maximum.get()).toEqual({ round: 1, maximumCents: 5_000, bidderName: "Ada", leading: false });
    page.showHighest(bid(7, "Ada", 4_000));
    expect(page.$maximum.get()?.leading).toBe(true);
    // Blocked, or the round moved on: the service knows of no maximum any more.
    page.receive({ type: "myMaximum", round: 1, maximumCents: null, leading: false });
    expect(page.$maximum.get()).toBeNull();
  });

  it("asks at once when the island loads after the connection is live", () => {
    const storage = memoryStorage({ [BIDDER_SECRET_KEY]: SECRET_OF_COUNTING_BYTES });
    expect(openMaximum({ storage }).sent).toEqual([{ type: "myMaximum", bidderSecret: SECRET_OF_COUNTING_BYTES }]);
    expect(openMaximum({ storage, live: false }).sent).toEqual([]);
  });

  it("keeps the service's word when the page has forgotten the name", () => {
    const storage = memoryStorage({ [BIDDER_SECRET_KEY]: SECRET_OF_COUNTING_BYTES });
    const page = openMaximum({ storage });
    page.receive({ type: "myMaximum", round: 1, maximumCents: 5_000, leading: true });
    page.showHighest(bid(2, "Someone", 4_000));
    expect(page.$maximum.get()).toEqual({ round: 1, maximumCents: 5_000, bidderName: null, leading: true });
  });
});
