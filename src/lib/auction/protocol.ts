/**
 * The auction's wire protocol: one JSON object per WebSocket text frame. The service and the
 * island both import this module, so the message shapes and their validation exist once.
 *
 * Connect to PROTOCOL_PATH for a snapshot, or to
 * `PROTOCOL_PATH?after=<last id seen>&moderation=<version>&round=<number>` to resume: the service
 * then sends every bid after that id, oldest first (a snapshot instead when more than RESUME_LIMIT
 * were missed, when the operator has hidden, restored, blocked or unblocked anything since the
 * moderation version the page last received, or when the page's round is no longer the current
 * one). Then, per accepted bid from any instance, one "bid" message, or, when bids come faster than
 * the socket's frame budget or than it reads, one "bids" message carrying every bid since its last
 * frame (docs/design.md#10); per moderation action one "moderated" message, and per round's end one
 * "roundEnded" message, each replacing the page's state the way a snapshot does.
 */
import * as v from "valibot";

export const PROTOCOL_PATH = "/realtime";
/** The resume's query parameters. */
export const RESUME_AFTER_PARAMETER = "after";
export const RESUME_MODERATION_PARAMETER = "moderation";
export const RESUME_ROUND_PARAMETER = "round";
/** Frames larger than this are refused by the socket (close 1009). A bid needs about 120 bytes. */
export const MAX_MESSAGE_BYTES = 4 * 1024;
/** Newest bids in a snapshot (docs/design.md#3). */
export const SNAPSHOT_SIZE = 50;
/** Most missed bids a resume replays; beyond it the client gets a fresh snapshot. */
export const RESUME_LIMIT = 1_000;

/** Close codes the service uses, beyond the ones `ws` sends itself (1009 for an oversized frame). */
export const CLOSE_CODES = {
  /** Service shutting down (SIGTERM): reconnect, another instance or the restarted one answers. */
  goingAway: 1001,
  /** Protocol violation the connection cannot recover from, e.g. a binary frame. */
  unsupportedData: 1003,
  /** More frames than the socket's budget, twice the bid rate limit (a flood, answered or not). */
  policyViolation: 1008,
  /** No pong to the service's heartbeat ping in time. */
  heartbeatTimeout: 4408,
  /** The database could not be read for the snapshot: reconnect later (the usual backoff). */
  tryAgainLater: 1013,
} as const;

export const ERROR_CODES = [
  "invalid_name",
  "name_not_allowed",
  "invalid_amount",
  "too_low",
  "rate_limited",
  "unavailable",
  "bad_message",
  /** A maximum not above the same secret's own leading maximum. */
  "maximum_too_low",
  /** Passed at once by someone's maximum: nothing of yours was stored (docs/protocol.md#maximum-bids). */
  "outbid_by_maximum",
  /** A maximum under the leading maximum's name from another browser (another secret). */
  "name_leads",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const BidId = v.pipe(v.number(), v.integer(), v.minValue(1));
const Cents = v.pipe(v.number(), v.integer(), v.minValue(1));
const RequestId = v.pipe(v.string(), v.minLength(1), v.maxLength(64));

const WireBidSchema = v.object({
  id: BidId,
  bidderName: v.string(),
  amountCents: Cents,
  /** ISO 8601 timestamp of the insert. */
  createdAt: v.string(),
});
export type WireBid = v.InferOutput<typeof WireBidSchema>;

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const RoundNumber = v.pipe(v.number(), v.integer(), v.minValue(1));
/** ISO 8601, by the service's database clock. */
const Time = v.string();

/** The current round (docs/design.md#6b), as of the message. */
const WireRoundSchema = v.object({
  /** 0 before the first bid opens round 1. */
  number: Count,
  /** Null while endless (rounds off) or before round 1. */
  endsAt: v.nullable(Time),
  /** Its end has passed and been recorded: `highest` won it, and the next bid opens a new round. */
  ended: v.boolean(),
  /** The service's round length (0: rounds off, one endless auction) and soft-close window. */
  seconds: Count,
  softCloseSeconds: Count,
});
export type WireRound = v.InferOutput<typeof WireRoundSchema>;

const WireWinnerSchema = v.object({
  round: RoundNumber,
  /** The round's highest visible bid. */
  bid: WireBidSchema,
  /** When the round ended. */
  endedAt: Time,
});
export type WireWinner = v.InferOutput<typeof WireWinnerSchema>;

// Client to service. Unknown fields are refused (bad_message), so a typo never passes silently.
const PlaceBidSchema = v.strictObject({
  type: v.literal("bid"),
  requestId: RequestId,
  bidderName: v.string(),
  /** Dollars as a JSON number, at most 2 decimals: the bid rules decide whether it is acceptable. */
  amount: v.number(),
});
/**
 * The browser's bidder secret (docs/design.md#6e): 32 random bytes in base64url, kept in
 * localStorage. It names a maximum's owner; the service stores only its SHA-256.
 */
const BidderSecret = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{22,128}$/));
/** A secret maximum bid: the service bids for its owner up to it, by eBay's rule. */
const SetMaximumSchema = v.strictObject({
  type: v.literal("maximum"),
  requestId: RequestId,
  bidderName: v.string(),
  /** Dollars, as a bid's amount, under the same rules. */
  maximum: v.number(),
  bidderSecret: BidderSecret,
});
/** Asks for this secret's maximum in the current round; answered to this socket only. */
const AskMaximumSchema = v.strictObject({ type: v.literal("myMaximum"), bidderSecret: BidderSecret });
const PingSchema = v.strictObject({ type: v.literal("ping") });
/** A Solana Pay reference (docs/design.md#8): 32 bytes in base58. */
const Reference = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/));
/** Asks for the status of a payment request now and at every change ("payment" messages). */
const WatchPaymentSchema = v.strictObject({ type: v.literal("watchPayment"), reference: Reference });
const ClientMessageSchema = v.variant("type", [
  PlaceBidSchema,
  SetMaximumSchema,
  AskMaximumSchema,
  PingSchema,
  WatchPaymentSchema,
]);
export type PlaceBidMessage = v.InferOutput<typeof PlaceBidSchema>;
export type SetMaximumMessage = v.InferOutput<typeof SetMaximumSchema>;
export type ClientMessage = v.InferOutput<typeof ClientMessageSchema>;

// Service to client. Hidden bids (and bids of blocked names) are in no message; the bids, the
// highest and the bidder count are the current round's.
const standingEntries = {
  /** The highest visible bid (the earliest of equal amounts). */
  highest: v.nullable(WireBidSchema),
  /** Distinct trimmed names over the visible bids. */
  bidders: Count,
  /** The moderation version the list reflects: a resume sends it back. */
  moderation: Count,
  round: WireRoundSchema,
  /** The last rounds' winners, newest first (the current round's too once it has ended). */
  pastWinners: v.array(WireWinnerSchema),
  /** The service's clock when the message was read: pages count down from it, not their own. */
  now: Time,
};
const snapshotEntries = {
  /** Newest first, at most SNAPSHOT_SIZE. */
  bids: v.array(WireBidSchema),
  ...standingEntries,
};
const SnapshotSchema = v.object({ type: v.literal("snapshot"), ...snapshotEntries });
/** After a moderation action: the auction as it now stands, replacing the page's. */
const ModeratedSchema = v.object({ type: v.literal("moderated"), ...snapshotEntries });
/** After a round's end: the auction as it now stands (the round ended, or the next one), replacing the page's. */
const RoundEndedSchema = v.object({ type: v.literal("roundEnded"), ...snapshotEntries });
const ResumeSchema = v.object({
  type: v.literal("resume"),
  /** Every visible bid of the round after the requested id, oldest first. */
  bids: v.array(WireBidSchema),
  ...standingEntries,
});
/** What a broadcast says besides its bids, as of its newest. */
const broadcastEntries = {
  bidders: v.pipe(v.number(), v.integer(), v.minValue(1)),
  round: RoundNumber,
  /** The round's end after this bid (a bid in the soft-close window moves it); null while endless. */
  endsAt: v.nullable(Time),
};
const BidBroadcastSchema = v.object({ type: v.literal("bid"), bid: WireBidSchema, ...broadcastEntries });
/**
 * Several bids in one frame (docs/design.md#10): every bid of the round since the socket's last
 * frame, oldest first, up to the page's list (SNAPSHOT_SIZE: older ones would fall off it anyway),
 * with the standing after the newest. `lastId` comes first on the wire so a reader can tell where it
 * stands without reading the list.
 */
const BidsBroadcastSchema = v.object({
  type: v.literal("bids"),
  /** The newest bid's id, the last of `bids`: a resume continues after it. */
  lastId: BidId,
  ...broadcastEntries,
  bids: v.pipe(v.array(WireBidSchema), v.minLength(1), v.maxLength(SNAPSHOT_SIZE)),
});
const AcceptedSchema = v.object({
  type: v.literal("accepted"),
  requestId: RequestId,
  bid: WireBidSchema,
  round: RoundNumber,
  /** Your bid was stored and at once passed by someone's automatic bid (a "bid" broadcast follows). */
  outbidByMaximum: v.optional(v.literal(true)),
});
/** Only to the socket that sent the maximum: it now leads. */
const MaximumSetSchema = v.object({
  type: v.literal("maximumSet"),
  requestId: RequestId,
  maximumCents: Cents,
  leading: v.literal(true),
  /** The bid placed for you, or null when the maximum was only set or raised. */
  bid: v.nullable(WireBidSchema),
  round: RoundNumber,
});
/** Only to the socket that asked: the secret's maximum in the current round (null: none). */
const MyMaximumSchema = v.object({
  type: v.literal("myMaximum"),
  round: Count,
  maximumCents: v.nullable(Cents),
  leading: v.boolean(),
});
const ErrorSchema = v.object({
  type: v.literal("error"),
  /** Present when the refused message carried a usable requestId. */
  requestId: v.optional(RequestId),
  code: v.picklist(ERROR_CODES),
  message: v.string(),
  /** The highest accepted bid when the error was decided (null: no bids yet); sent with bid errors. */
  highestCents: v.optional(v.nullable(Cents)),
});
const PongSchema = v.object({ type: v.literal("pong") });
/** A watched payment request as it stands (GET /payments/<reference>'s answer), docs/design.md#8. */
const PaymentSchema = v.object({
  type: v.literal("payment"),
  reference: Reference,
  status: v.picklist(["waiting", "confirmed", "underpaid", "expired"]),
  tierId: v.string(),
  tierName: v.string(),
  spins: Count,
  priceAmount: v.string(),
  receivedAmount: v.optional(v.string()),
  signature: v.optional(v.string()),
  expiresAt: Time,
});
/** To every socket, for each confirmed payment: "<name, or Someone> just bought <tier>!". */
const PurchaseSchema = v.object({ type: v.literal("purchase"), name: v.nullable(v.string()), tierName: v.string() });
const ServerMessageSchema = v.pipe(
  v.variant("type", [
    SnapshotSchema,
    ModeratedSchema,
    RoundEndedSchema,
    ResumeSchema,
    BidBroadcastSchema,
    BidsBroadcastSchema,
    AcceptedSchema,
    MaximumSetSchema,
    MyMaximumSchema,
    ErrorSchema,
    PongSchema,
    PaymentSchema,
    PurchaseSchema,
  ]),
  // One check for the bids frame, kept small for the home page's script: ids rising, lastId the last.
  v.check(
    (message) =>
      message.type !== "bids" ||
      (message.bids.every((bid, index, bids) => bid.id < (bids[index + 1]?.id ?? message.lastId + 1)) &&
        message.lastId === message.bids.at(-1)?.id),
  ),
);
export type ServerMessage = v.InferOutput<typeof ServerMessageSchema>;
export type SnapshotMessage = v.InferOutput<typeof SnapshotSchema>;
/** The messages that replace a page's whole state. */
export type StateMessage = v.InferOutput<typeof SnapshotSchema | typeof ModeratedSchema | typeof RoundEndedSchema>;
export type ResumeMessage = v.InferOutput<typeof ResumeSchema>;
export type BidMessage = v.InferOutput<typeof BidBroadcastSchema>;
export type BidsMessage = v.InferOutput<typeof BidsBroadcastSchema>;
export type ErrorMessage = v.InferOutput<typeof ErrorSchema>;

export type Parsed<T> = { ok: true; message: T } | { ok: false; requestId?: string; reason: string };

/** The frame's JSON value, or the refusal of a frame that is not JSON. */
function readJson(text: string): { ok: true; data: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, data: JSON.parse(text) };
  } catch {
    return { ok: false, reason: "Message is not valid JSON." };
  }
}

/** Parses one text frame from a client; a refusal keeps the requestId when one can be read. */
export function parseClientMessage(text: string): Parsed<ClientMessage> {
  const json = readJson(text);
  if (!json.ok) return json;
  const { data } = json;
  const result = v.safeParse(ClientMessageSchema, data);
  if (result.success) return { ok: true, message: result.output };
  const requestId = v.is(v.object({ requestId: RequestId }), data) ? data.requestId : undefined;
  const issue = result.issues[0];
  const where = issue.path?.map((item) => String(item.key)).join(".");
  return { ok: false, requestId, reason: where ? `${where}: ${issue.message}` : issue.message };
}

/** Parses one text frame from the service; anything unexpected is reported, never trusted. */
export function parseServerMessage(text: string): Parsed<ServerMessage> {
  const json = readJson(text);
  if (!json.ok) return json;
  const result = v.safeParse(ServerMessageSchema, json.data);
  return result.success ? { ok: true, message: result.output } : { ok: false, reason: result.issues[0].message };
}
