/**
 * The payments' storage (docs/design.md#8), beside the auction's and on the same database: payment
 * requests, what the watcher found under their references and its view of the chain. Both backends lend it the same few
 * primitives (a query, a transaction, the watcher's lease), so the SQL lives here once. Plain
 * parameterised statements, several in a transaction where an outcome must commit whole: the
 * request's new status, the cursor past its transaction and the NOTIFY every instance hears.
 */
import type { PaymentStatus } from "../../src/lib/payments.ts";
import type { Logger } from "../logger.ts";
import { nameKey } from "../names/nameKey.ts";

/** Every instance LISTENs here; the payload is the reference whose status changed. */
export const PAYMENT_OUTCOMES_CHANNEL = "payment_outcomes";
/** The watcher's view of the chain, `{"tokenAccount","rpcState"}`, when it changes. */
export const PAYMENT_WATCHER_CHANNEL = "payment_watcher";

/**
 * The chain as the watcher last found it: "limited" while the provider rate limits it (slower
 * confirmations, purchases go on), "unreachable" once it has been out of reach for a while
 * (purchases refused).
 */
const RPC_STATES = ["ok", "limited", "unreachable"] as const;
export type RpcState = (typeof RPC_STATES)[number];
const isRpcState = (value: unknown): value is RpcState => RPC_STATES.includes(value as RpcState);

type Row = Record<string, unknown>;
export type Query = (text: string, params: unknown[]) => Promise<Row[]>;

/** What a request asks for and whose name it carries, as created and as stored. */
interface PaymentTerms {
  reference: string;
  tierId: number;
  priceBaseUnits: bigint;
  decimals: number;
  mint: string;
  recipient: string;
  /** Trimmed and checked by the name rules; null: anonymous. */
  name: string | null;
}

interface NewPaymentRequest extends PaymentTerms {
  createdAt: Date;
  expiresAt: Date;
  /** Where it was asked from, counted while it waits (none: counted in the total only). */
  networks?: ClientNetworks;
}

/**
 * The networks a client is counted in (http/fairShares.ts's addressGroups): the client itself (an
 * IPv4 address, an IPv6 /64), its IPv6 /56, its IPv6 /48 or IPv4 /24.
 */
interface ClientNetworks {
  client: string;
  mid: string | null;
  wide: string | null;
}

/** The waiting requests a client's networks hold, and all of them. */
interface WaitingHeld {
  client: number;
  mid: number;
  wide: number;
  total: number;
}

export interface StoredPayment extends PaymentTerms {
  /** ISO 8601. */
  createdAt: string;
  expiresAt: string;
  status: PaymentStatus;
  signature: string | null;
  amountReceived: bigint | null;
  confirmedAt: string | null;
  hidden: boolean;
}

/** An operator's hide or restore of a patron: every payment of the name's key. */
export interface PatronModeration {
  action: "hide_patron" | "restore_patron";
  /** As the operator's form sent it (a payment's name); its key finds every spelling. */
  name: string;
  reason: string | null;
  sessionId: string;
}

/** "done" with the payments changed; "unchanged" when all were so already; "no_such_patron". */
type PatronModerationOutcome = { outcome: "done"; payments: number } | { outcome: "unchanged" | "no_such_patron" };

interface PatronTotal {
  name: string;
  totalBaseUnits: bigint;
  decimals: number;
  latestSignature: string;
}

/** What one transaction did to the watched token account, as the watcher verified it. */
interface ObservedTransfer {
  signature: string;
  /** Every account key of the transaction (static and loaded), where its reference hides. */
  accountKeys: readonly string[];
  /** Base units the watched account gained (post minus pre balance); positive. */
  received: bigint;
  /** The block's time; null when the chain did not give one (then the time of recording counts). */
  blockTime: Date | null;
}

export type RecordOutcome =
  | { outcome: "confirmed" | "underpaid" | "late"; payment: StoredPayment }
  /** No request of this mint and recipient has any of the transaction's keys as its reference. */
  | { outcome: "unknown_reference" }
  /** The signature already credited a request (seen again: a replay, a cursor rewound). */
  | { outcome: "already_recorded"; reference: string }
  /** Its request already has its transaction (paid twice with one reference). */
  | { outcome: "not_open"; reference: string };

/** A request the watcher looks up by its reference. */
export interface LookupTarget {
  reference: string;
  expiresAt: Date;
  /** When the last lookup of it started; null before the first. */
  lookedUpAt: Date | null;
}

/** What a transaction under a reference was judged to be, when it credits nothing. */
type JudgedOutcome = "failed" | "no_payment" | "set_aside";

/** A transaction the watcher could not judge, set aside for the operator. */
export interface SetAsideTransaction {
  signature: string;
  reference: string;
  detail: string;
  /** ISO 8601. */
  judgedAt: string;
}

/** The deployment's one watcher's right to write (docs/design.md#8); lost when its connection is. */
export interface WatcherLease {
  /** Up to `limit` waiting requests of this mint and recipient, least recently looked up first. */
  dueLookups(limit: number): Promise<LookupTarget[]>;
  /** The request that ended unpaid after `since` and was looked up longest ago: the heartbeat's. */
  endedUnpaid(since: Date): Promise<LookupTarget | null>;
  /** Which of these signatures are already settled: credited to a request, or judged to credit nothing. */
  known(signatures: readonly string[]): Promise<Set<string>>;
  /** Records what the transaction did to its request, in one commit with its notification. */
  record(transfer: ObservedTransfer, now: Date): Promise<RecordOutcome>;
  /** Records a transaction under `reference` that credits nothing, so that it is never fetched again. */
  judged(signature: string, reference: string, outcome: JudgedOutcome, detail: string | null, now: Date): Promise<void>;
  /**
   * Notes a lookup of `reference` that started at `startedAt`; when it found nothing to wait for and
   * started after `expireBefore`, a request still waiting that ended before it expires. True if it did.
   */
  lookedUp(reference: string, startedAt: Date, expireBefore: Date | null): Promise<boolean>;
  /** Tells every instance how the chain answers. */
  setRpcState(state: RpcState, now: Date): Promise<void>;
  /** Deletes up to `limit` requests that ended unpaid before `endedBefore`, and what was judged under them; how many. */
  forgetUnpaid(endedBefore: Date, limit: number): Promise<number>;
  /** Whether the lease is still held (false once its connection is lost). */
  isHeld(): boolean;
  /** Fires once, when the lease is lost, with why. */
  onLost(listener: (reason: string) => void): void;
  release(): Promise<void>;
}

/** What a backend lends the payments' storage. */
export interface PaymentBackend {
  query: Query;
  /** Claims the lease of the deployment's watcher, or null while another instance holds it. */
  claimLease(): Promise<LeaseConnection | null>;
}

/** A backend's held lease: its transactions run on the connection that holds it, checked. */
export interface LeaseConnection {
  transaction<T>(work: (query: Query) => Promise<T>): Promise<T>;
  isHeld(): boolean;
  onLost(listener: (reason: string) => void): void;
  release(): Promise<void>;
}

interface WatchedAccount {
  tokenAccount: string;
  mint: string;
  recipient: string;
}

export interface PaymentStore {
  /** Stores a new request; "name_not_allowed" when the operator blocked the name. */
  create(request: NewPaymentRequest): Promise<StoredPayment | "name_not_allowed">;
  find(reference: string): Promise<StoredPayment | null>;
  /**
   * The requests waiting for a payment, every mint and recipient together, and those of `networks`
   * among them (counting stops at `cap` waiting requests).
   */
  heldWaiting(networks: ClientNetworks, cap: number): Promise<WaitingHeld>;
  /** The top names by confirmed base units of the mint, hidden and blocked names left out. */
  patrons(mint: string, limit: number): Promise<PatronTotal[]>;
  /** The newest payments of any status, newest first, for the operator console. */
  latest(limit: number): Promise<StoredPayment[]>;
  /** Hides or shows every payment of a name, with its audit row, in one statement. */
  moderatePatron(request: PatronModeration): Promise<PatronModerationOutcome>;
  /** The newest transactions the watcher set aside, unjudged, newest first, for the operator console. */
  setAside(limit: number): Promise<SetAsideTransaction[]>;
  /** The watcher's last word on the chain for this token account ("ok" before any). */
  rpcState(tokenAccount: string): Promise<RpcState>;
  /** Every outcome committed by any instance's watcher: the reference. Returns unsubscribe. */
  onOutcome(listener: (reference: string) => void): () => void;
  /** The watcher's view of the chain when it changes, from any instance. Returns unsubscribe. */
  onWatcherHealth(listener: (tokenAccount: string, rpcState: RpcState) => void): () => void;
  /** The watcher's lease for this account, or null while another instance (or watcher) holds it. */
  claimWatcher(account: WatchedAccount): Promise<WatcherLease | null>;
}

const UTC_TIME = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const utc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', ${UTC_TIME})`;

const PAYMENT_COLUMNS = `reference, tier_id, price_base_units::text AS price_base_units, decimals, mint, recipient,
  payer_name, ${utc("created_at")} AS created_at, ${utc("expires_at")} AS expires_at, status, signature,
  amount_received::text AS amount_received, ${utc("confirmed_at")} AS confirmed_at, hidden_at IS NOT NULL AS hidden`;

/** One statement: the operator's blocklist is read in the insert's own snapshot. */
const CREATE_SQL = `INSERT INTO payments
  (reference, tier_id, price_base_units, decimals, mint, recipient, payer_name, name_key, created_at, expires_at,
   client_key, client_subnet, client_network, hidden_at)
SELECT $1::text, $2::integer, $3::numeric, $4::smallint, $5::text, $6::text, $7::text, $8::text,
  $9::timestamptz, $10::timestamptz, $11::text, $12::text, $13::text,
  -- A hidden patron stays hidden: its new payments are hidden as they are made.
  CASE WHEN EXISTS (SELECT 1 FROM payments WHERE name_key = $8::text AND hidden_at IS NOT NULL) THEN $9::timestamptz END
WHERE $8::text IS NULL OR NOT EXISTS (SELECT 1 FROM auction_blocked_names WHERE name_key = $8::text)
RETURNING ${PAYMENT_COLUMNS}`;

const FIND_SQL = `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE reference = $1::text`;
/**
 * $1 the cap: counting stops there, so a flood of requests never makes the count slow; $2-$4 the
 * client's networks. Under the cap every waiting request is counted, so the counts are exact.
 */
const HELD_WAITING_SQL = `SELECT count(*)::integer AS total,
  count(*) FILTER (WHERE client_key = $2::text)::integer AS client,
  count(*) FILTER (WHERE client_subnet = $3::text)::integer AS mid,
  count(*) FILTER (WHERE client_network = $4::text)::integer AS wide
FROM (SELECT client_key, client_subnet, client_network FROM payments WHERE status = 'waiting' LIMIT $1::integer) AS capped`;

/** What an ended request no longer keeps: where it was asked from. */
const FORGET_NETWORKS = "client_key = NULL, client_subnet = NULL, client_network = NULL";

/** $1 mint, $2 limit. A name's latest spelling and transaction stand for all its payments. */
const PATRONS_SQL = `SELECT
  (array_agg(p.payer_name ORDER BY p.confirmed_at DESC, p.id DESC))[1] AS name,
  sum(p.amount_received)::text AS total,
  max(p.decimals) AS decimals,
  (array_agg(p.signature ORDER BY p.confirmed_at DESC, p.id DESC))[1] AS latest_signature
FROM payments p
WHERE p.status = 'confirmed' AND p.mint = $1::text AND p.payer_name IS NOT NULL AND p.hidden_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM auction_blocked_names b WHERE b.name_key = p.name_key)
GROUP BY p.name_key
ORDER BY sum(p.amount_received) DESC, min(p.confirmed_at), min(p.id)
LIMIT $2::integer`;

const LATEST_SQL = `SELECT ${PAYMENT_COLUMNS} FROM payments ORDER BY id DESC LIMIT $1::integer`;

/**
 * $1 name key, $2 true to hide, $3 session, $4 action, $5 name as sent, $6 reason. One statement,
 * so the payments' change and its audit row commit together or not at all.
 */
const MODERATE_PATRON_SQL = `WITH changed AS (
  UPDATE payments SET hidden_at = CASE WHEN $2::boolean THEN now() END
  WHERE name_key = $1::text AND (hidden_at IS NULL) = $2::boolean
  RETURNING id
), logged AS (
  -- A data-modifying WITH runs whether or not the query reads it.
  INSERT INTO auction_moderation_log (session_id, action, bidder_name, reason)
  SELECT $3::text, $4::text, $5::text, $6::text WHERE EXISTS (SELECT 1 FROM changed)
  RETURNING id
)
SELECT (SELECT count(*) FROM changed)::integer AS changed,
  EXISTS (SELECT 1 FROM payments WHERE name_key = $1::text) AS known`;

const RPC_STATE_SQL = "SELECT rpc_state FROM payment_watcher WHERE token_account = $1::text";
/** rpc_ok too, for an instance of the release before still running during a rolling deploy. */
const SET_RPC_STATE_SQL = `INSERT INTO payment_watcher (token_account, rpc_state, rpc_ok, updated_at)
VALUES ($1::text, $2::text, $2::text <> 'unreachable', $3::timestamptz)
ON CONFLICT (token_account) DO UPDATE
SET rpc_state = excluded.rpc_state, rpc_ok = excluded.rpc_ok, updated_at = excluded.updated_at`;
const NOTIFY_SQL = "SELECT pg_notify($1::text, $2::text)";
const SET_ASIDE_SQL = `SELECT signature, reference, detail, ${utc("judged_at")} AS judged_at
FROM payment_transactions WHERE outcome = 'set_aside' ORDER BY judged_at DESC, signature LIMIT $1::integer`;

/** $1 mint, $2 recipient, $3 limit. */
const DUE_LOOKUPS_SQL = `SELECT reference, ${utc("expires_at")} AS expires_at, ${utc("looked_up_at")} AS looked_up_at FROM payments
WHERE status = 'waiting' AND mint = $1::text AND recipient = $2::text
ORDER BY looked_up_at NULLS FIRST, id
LIMIT $3::integer`;
/** $1 mint, $2 recipient, $3 the earliest end. */
const ENDED_UNPAID_SQL = `SELECT reference, ${utc("expires_at")} AS expires_at, ${utc("looked_up_at")} AS looked_up_at FROM payments
WHERE status = 'expired' AND signature IS NULL AND expires_at >= $3::timestamptz AND mint = $1::text AND recipient = $2::text
ORDER BY looked_up_at NULLS FIRST, id
LIMIT 1`;
/** $1 JSON array of signatures. */
const KNOWN_SQL = `WITH wanted AS (SELECT json_array_elements_text($1::text::json) AS signature)
SELECT w.signature FROM wanted w
WHERE EXISTS (SELECT 1 FROM payments p WHERE p.signature = w.signature)
  OR EXISTS (SELECT 1 FROM payment_transactions t WHERE t.signature = w.signature)`;
const JUDGED_SQL = `INSERT INTO payment_transactions (signature, reference, outcome, detail, judged_at)
VALUES ($1::text, $2::text, $3::text, $4::text, $5::timestamptz)
ON CONFLICT (signature) DO NOTHING`;
const LOOKED_UP_SQL = "UPDATE payments SET looked_up_at = $2::timestamptz WHERE reference = $1::text";
/** $1 mint, $2 recipient, $3 the end before which, $4 the most. Unpaid: expired with no transaction. */
const FORGET_UNPAID_SQL = `WITH forgotten AS (
  DELETE FROM payments
  WHERE id IN (SELECT id FROM payments
    WHERE status = 'expired' AND signature IS NULL AND expires_at < $3::timestamptz AND mint = $1::text AND recipient = $2::text
    ORDER BY expires_at LIMIT $4::integer)
  RETURNING reference
), judged AS (
  DELETE FROM payment_transactions WHERE reference IN (SELECT reference FROM forgotten) RETURNING 1
)
SELECT count(*)::integer AS forgotten FROM forgotten`;
/** $1 reference, $2 the end before which the request, still waiting, expires. */
const EXPIRE_SQL = `UPDATE payments SET status = 'expired', ${FORGET_NETWORKS}
WHERE reference = $1::text AND status = 'waiting' AND expires_at < $2::timestamptz
RETURNING reference`;

const SIGNATURE_RECORDED_SQL = "SELECT reference FROM payments WHERE signature = $1::text";
/** $1 JSON array of account keys; locked, so two recordings of one request queue. */
const CANDIDATES_SQL = `SELECT ${PAYMENT_COLUMNS}, (expires_at >= $4::timestamptz) AS open_at_block
FROM payments
WHERE reference IN (SELECT json_array_elements_text($1::text::json)) AND mint = $2::text AND recipient = $3::text
ORDER BY id
FOR UPDATE`;
const SETTLE_SQL = `UPDATE payments
SET status = $2::text, signature = $3::text, amount_received = $4::numeric, confirmed_at = $5::timestamptz,
  ${FORGET_NETWORKS}
WHERE reference = $1::text
RETURNING ${PAYMENT_COLUMNS}`;

function nullableText(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function toStoredPayment(row: Row | undefined): StoredPayment {
  if (!row) throw new Error("the payment read returned no row");
  const amountReceived = nullableText(row.amount_received);
  return {
    reference: String(row.reference),
    tierId: Number(row.tier_id),
    priceBaseUnits: BigInt(String(row.price_base_units)),
    decimals: Number(row.decimals),
    mint: String(row.mint),
    recipient: String(row.recipient),
    name: nullableText(row.payer_name),
    createdAt: String(row.created_at),
    expiresAt: String(row.expires_at),
    status: String(row.status) as PaymentStatus,
    signature: nullableText(row.signature),
    amountReceived: amountReceived === null ? null : BigInt(amountReceived),
    confirmedAt: nullableText(row.confirmed_at),
    hidden: row.hidden === true,
  };
}

/** The listeners of the payments' notifications, and the delivery of one to them. */
export function createPaymentNotices(logger: Logger) {
  const outcomeListeners = new Set<(reference: string) => void>();
  const healthListeners = new Set<(tokenAccount: string, rpcState: RpcState) => void>();
  return {
    deliver(channel: string, payload: string): void {
      if (channel === PAYMENT_OUTCOMES_CHANNEL) {
        for (const listener of outcomeListeners) listener(payload);
        return;
      }
      try {
        const { tokenAccount, rpcState } = JSON.parse(payload) as { tokenAccount: unknown; rpcState: unknown };
        if (typeof tokenAccount !== "string" || !isRpcState(rpcState)) throw new Error("bad fields");
        for (const listener of healthListeners) listener(tokenAccount, rpcState);
      } catch {
        logger.error({ payload }, "unreadable payment watcher notification");
      }
    },
    onOutcome(listener: (reference: string) => void) {
      outcomeListeners.add(listener);
      return () => void outcomeListeners.delete(listener);
    },
    onWatcherHealth(listener: (tokenAccount: string, rpcState: RpcState) => void) {
      healthListeners.add(listener);
      return () => void healthListeners.delete(listener);
    },
    clear(): void {
      outcomeListeners.clear();
      healthListeners.clear();
    },
  };
}

type PaymentNotices = ReturnType<typeof createPaymentNotices>;

const toTarget = (row: Row): LookupTarget => ({
  reference: String(row.reference),
  expiresAt: new Date(String(row.expires_at)),
  lookedUpAt: row.looked_up_at === null || row.looked_up_at === undefined ? null : new Date(String(row.looked_up_at)),
});

function createLease(connection: LeaseConnection, account: WatchedAccount): WatcherLease {
  const { tokenAccount, mint, recipient } = account;
  return {
    async dueLookups(limit) {
      return connection.transaction(async (query) =>
        (await query(DUE_LOOKUPS_SQL, [mint, recipient, limit])).map(toTarget),
      );
    },
    async endedUnpaid(since) {
      const row = await connection.transaction(
        async (query) => (await query(ENDED_UNPAID_SQL, [mint, recipient, since.toISOString()]))[0],
      );
      return row ? toTarget(row) : null;
    },
    async known(signatures) {
      if (signatures.length === 0) return new Set();
      const rows = await connection.transaction((query) => query(KNOWN_SQL, [JSON.stringify(signatures)]));
      return new Set(rows.map((row) => String(row.signature)));
    },
    async record(transfer, now) {
      return connection.transaction(async (query): Promise<RecordOutcome> => {
        const recordedFor = (await query(SIGNATURE_RECORDED_SQL, [transfer.signature]))[0];
        if (recordedFor) return { outcome: "already_recorded", reference: String(recordedFor.reference) };
        const blockTime = transfer.blockTime ?? now;
        const candidates = await query(CANDIDATES_SQL, [
          JSON.stringify(transfer.accountKeys),
          mint,
          recipient,
          blockTime.toISOString(),
        ]);
        if (candidates.length === 0) return { outcome: "unknown_reference" };
        // One signature credits one request: the oldest open one among its references.
        const open = candidates.find(
          (row) => row.signature === null && (row.status === "waiting" || row.status === "expired"),
        );
        if (!open) return { outcome: "not_open", reference: String(candidates[0]?.reference) };
        const payment = toStoredPayment(open);
        const outcome =
          open.open_at_block !== true
            ? "late"
            : transfer.received >= payment.priceBaseUnits
              ? "confirmed"
              : "underpaid";
        const status: PaymentStatus = outcome === "late" ? "expired" : outcome;
        const settled = toStoredPayment(
          (
            await query(SETTLE_SQL, [
              payment.reference,
              status,
              transfer.signature,
              transfer.received.toString(),
              now.toISOString(),
            ])
          )[0],
        );
        await query(NOTIFY_SQL, [PAYMENT_OUTCOMES_CHANNEL, payment.reference]);
        return { outcome, payment: settled };
      });
    },
    async judged(signature, reference, outcome, detail, now) {
      await connection.transaction((query) =>
        query(JUDGED_SQL, [signature, reference, outcome, detail, now.toISOString()]),
      );
    },
    async lookedUp(reference, startedAt, expireBefore) {
      return connection.transaction(async (query) => {
        await query(LOOKED_UP_SQL, [reference, startedAt.toISOString()]);
        if (expireBefore === null) return false;
        const expired = (await query(EXPIRE_SQL, [reference, expireBefore.toISOString()])).length > 0;
        if (expired) await query(NOTIFY_SQL, [PAYMENT_OUTCOMES_CHANNEL, reference]);
        return expired;
      });
    },
    async setRpcState(state, now) {
      await connection.transaction(async (query) => {
        await query(SET_RPC_STATE_SQL, [tokenAccount, state, now.toISOString()]);
        await query(NOTIFY_SQL, [PAYMENT_WATCHER_CHANNEL, JSON.stringify({ tokenAccount, rpcState: state })]);
      });
    },
    async forgetUnpaid(endedBefore, limit) {
      const row = await connection.transaction(
        async (query) => (await query(FORGET_UNPAID_SQL, [mint, recipient, endedBefore.toISOString(), limit]))[0],
      );
      return Number(row?.forgotten ?? 0);
    },
    isHeld: () => connection.isHeld(),
    onLost: (listener) => connection.onLost(listener),
    release: () => connection.release(),
  };
}

export function createPaymentStore(backend: PaymentBackend, notices: PaymentNotices): PaymentStore {
  const { query } = backend;
  return {
    async create(request) {
      const key = request.name === null ? null : nameKey(request.name);
      const rows = await query(CREATE_SQL, [
        request.reference,
        request.tierId,
        request.priceBaseUnits.toString(),
        request.decimals,
        request.mint,
        request.recipient,
        request.name,
        key,
        request.createdAt.toISOString(),
        request.expiresAt.toISOString(),
        request.networks?.client ?? null,
        request.networks?.mid ?? null,
        request.networks?.wide ?? null,
      ]);
      return rows.length === 0 ? "name_not_allowed" : toStoredPayment(rows[0]);
    },
    async find(reference) {
      const row = (await query(FIND_SQL, [reference]))[0];
      return row ? toStoredPayment(row) : null;
    },
    async heldWaiting(networks, cap) {
      const row = (await query(HELD_WAITING_SQL, [cap, networks.client, networks.mid, networks.wide]))[0];
      return {
        client: Number(row?.client ?? 0),
        mid: Number(row?.mid ?? 0),
        wide: Number(row?.wide ?? 0),
        total: Number(row?.total ?? 0),
      };
    },
    async patrons(mint, limit) {
      return (await query(PATRONS_SQL, [mint, limit])).map((row) => ({
        name: String(row.name),
        totalBaseUnits: BigInt(String(row.total)),
        decimals: Number(row.decimals),
        latestSignature: String(row.latest_signature),
      }));
    },
    async latest(limit) {
      return (await query(LATEST_SQL, [limit])).map(toStoredPayment);
    },
    async moderatePatron({ action, name, reason, sessionId }) {
      const row = (
        await query(MODERATE_PATRON_SQL, [nameKey(name), action === "hide_patron", sessionId, action, name, reason])
      )[0];
      const changed = Number(row?.changed ?? 0);
      if (changed > 0) return { outcome: "done", payments: changed };
      return { outcome: row?.known === true ? "unchanged" : "no_such_patron" };
    },
    async setAside(limit) {
      return (await query(SET_ASIDE_SQL, [limit])).map((row) => ({
        signature: String(row.signature),
        reference: String(row.reference),
        detail: String(row.detail ?? ""),
        judgedAt: String(row.judged_at),
      }));
    },
    async rpcState(tokenAccount) {
      const state = (await query(RPC_STATE_SQL, [tokenAccount]))[0]?.rpc_state;
      return isRpcState(state) ? state : "ok";
    },
    onOutcome: notices.onOutcome,
    onWatcherHealth: notices.onWatcherHealth,
    async claimWatcher(account) {
      const connection = await backend.claimLease();
      return connection ? createLease(connection, account) : null;
    },
  };
}
