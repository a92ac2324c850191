/**
 * The PostgreSQL backend through postgres.js: a small pool for bids and reads, and one dedicated
 * connection that LISTENs. postgres.js's own `listen()` re-LISTENs once after a drop and gives up
 * if the server is still down, so this adapter keeps that connection itself: it reports not ready
 * the moment the connection closes and retries LISTEN until it succeeds.
 *
 * A write refused for lack of space (SQLSTATE 53100) makes the store not ready too (storageFaults.ts)
 * until a write succeeds: while it is full, a probe asks the server every second for a write that
 * needs a new page, since a load balancer sends no bids to find out.
 */
import postgres from "postgres";
import type { Logger } from "../logger.ts";
import { NAME_KEY_VERSION } from "../names/nameKey.ts";
import { logRepeated } from "../repeatedWarnings.ts";
import { ADMIN_SESSIONS_CHANNEL, createAdminNotices, createAdminStore } from "./admin.ts";
import { type FunctionSet, readFunctions } from "./functions.ts";
import { applyMigrations, type Migration, readMigrations } from "./migrations.ts";
import { NAME_KEY_VERSION_SETTING, rekeyNames } from "./nameKeyVersion.ts";
import {
  createPaymentNotices,
  createPaymentStore,
  type LeaseConnection,
  PAYMENT_OUTCOMES_CHANNEL,
  PAYMENT_WATCHER_CHANNEL,
  type Query,
} from "./payments.ts";
import { createNoticeListeners, NOTIFY_CHANNEL, storeQueries } from "./queries.ts";
import type { InTransaction } from "./schemaTransaction.ts";
import { createSpaceWatch, storageFaultOf } from "./storageFaults.ts";
import {
  ENDLESS_ROUNDS,
  type PlaceBidOutcome,
  type RoundSettings,
  type StorageFaultHooks,
  StorageFullError,
  StoreUnavailableError,
  type StoreWithPayments,
} from "./types.ts";

export interface PostgresStoreOptions {
  databaseUrl: string;
  logger: Logger;
  /** Connections for bids and reads; the LISTEN connection comes on top. */
  poolSize?: number;
  migrations?: Migration[];
  functions?: FunctionSet;
  /** How often the LISTEN connection is asked to answer, and how long it may take (default 10 s). */
  listenHeartbeatMs?: number;
  /** Round lengths (default: one endless round). */
  rounds?: RoundSettings;
  faults?: StorageFaultHooks;
}

/**
 * A write that needs new space, undone at once: a new relation's first page is written to its file
 * when the row is inserted (a temporary table's too, in the database's tablespace), and the file is
 * removed with the transaction.
 */
const SPACE_PROBE_SQL = [
  "CREATE TEMPORARY TABLE nothing_store_space_probe (probe text) ON COMMIT DROP",
  "INSERT INTO nothing_store_space_probe VALUES ('probe')",
];

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_LISTEN_HEARTBEAT_MS = 10_000;
const CONNECT_TIMEOUT_S = 5;
// A bid waits on the auction_state row lock; far beyond the client's 10 s acknowledgement it is moot.
const STATEMENT_TIMEOUT_MS = 5_000;
const RELISTEN_FIRST_DELAY_MS = 100;
const RELISTEN_MAX_DELAY_MS = 2_000;

// Node socket errors, postgres.js's own connection errors, and the SQLSTATEs of a server that is
// down, starting, shutting down, out of connections or too slow (statement_timeout).
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57014",
]);

function isUnavailableError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return UNAVAILABLE_CODES.has(code) || code.startsWith("08") || code.startsWith("57P") || code.startsWith("53");
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ? `${code}: ${message}` : String(message ?? error);
}

type Row = Record<string, unknown>;

async function unavailableOnLostConnection<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUnavailableError(error)) {
      throw new StoreUnavailableError(`PostgreSQL is unavailable (${describe(error)})`, { cause: error });
    }
    throw error;
  }
}

// postgres.js would back off up to 20 s after repeated failures; an outage should end in about a second.
function reconnectBackoffSeconds(attempt: number): number {
  return Math.min(0.05 * 2 ** attempt, 1);
}

function connectionOptions(logger: Logger) {
  return {
    connect_timeout: CONNECT_TIMEOUT_S,
    backoff: reconnectBackoffSeconds,
    onnotice: (notice: postgres.Notice) => logger.debug({ notice }, "postgres notice"),
    connection: {
      application_name: "nothing-store",
      statement_timeout: STATEMENT_TIMEOUT_MS,
      // The version each bid and block this code writes records with its key (sql/016).
      [NAME_KEY_VERSION_SETTING]: String(NAME_KEY_VERSION),
    },
  };
}

/** The migrations runner's transaction on PostgreSQL; a script runs as a simple query (several statements). */
export function postgresTransaction(sql: postgres.Sql): InTransaction {
  return (work) =>
    sql.begin((tx) =>
      work({
        query: async (text, params) =>
          (await tx.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as unknown as Row[],
        exec: async (script) => {
          await tx.unsafe(script).simple();
        },
      }),
    ) as never;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<StoreWithPayments> {
  const { databaseUrl, logger } = options;
  const sql = postgres(databaseUrl, { ...connectionOptions(logger), max: options.poolSize ?? DEFAULT_POOL_SIZE });
  try {
    const migrations = options.migrations ?? (await readMigrations());
    const functions = options.functions ?? (await readFunctions());
    await unavailableOnLostConnection(() =>
      applyMigrations(postgresTransaction(sql), migrations, functions, logger, rekeyNames),
    );
    return await createPostgresStore(sql, {
      databaseUrl,
      logger,
      heartbeatMs: options.listenHeartbeatMs ?? DEFAULT_LISTEN_HEARTBEAT_MS,
      rounds: options.rounds ?? ENDLESS_ROUNDS,
      faults: options.faults ?? {},
    });
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
}

interface ListenOptions {
  databaseUrl: string;
  logger: Logger;
  heartbeatMs: number;
  rounds: RoundSettings;
  faults: StorageFaultHooks;
}

async function createPostgresStore(sql: postgres.Sql, options: ListenOptions): Promise<StoreWithPayments> {
  const { databaseUrl, logger, heartbeatMs, rounds, faults } = options;
  const notices = createNoticeListeners(logger);
  const paymentNotices = createPaymentNotices(logger);
  const adminNotices = createAdminNotices(logger);
  const space = createSpaceWatch({
    logger,
    probe: async () => {
      await sql.begin(async (tx) => {
        for (const statement of SPACE_PROBE_SQL) await tx.unsafe(statement);
      });
    },
    onFullChange: () => showReadiness(),
  });
  /** A failure for lack of space is the store's unavailability, and counted; so are the other storage faults. */
  function storageError(error: unknown): unknown {
    // unavailableOnLostConnection has wrapped the server's error (53100 is of class 53) already.
    const cause = error instanceof StoreUnavailableError && error.cause ? error.cause : error;
    const kind = storageFaultOf(cause);
    if (kind) faults.onWriteFailure?.(kind);
    if (kind !== "disk_full") return error;
    space.ranOut(cause);
    return new StorageFullError(`PostgreSQL could not write for lack of space (${describe(cause)})`, { cause });
  }
  const query: Query = async (text, params) => {
    try {
      return await unavailableOnLostConnection(
        // Prepared (named, once per connection): postgres.js sends an unprepared query with
        // parameters as Parse and Describe, waits for the answer, then binds, so every bid batch
        // cost two round trips to the server instead of one.
        async () => (await sql.unsafe(text, params as never[], { prepare: true })) as unknown as Row[],
      );
    } catch (error) {
      throw storageError(error);
    }
  };
  const queries = storeQueries(query, rounds);
  const watcherLease = createWatcherLease(databaseUrl, logger);
  const payments = createPaymentStore({ query, claimLease: watcherLease.claim }, paymentNotices);
  const admin = createAdminStore(query, adminNotices);
  const readyListeners = new Set<(ready: boolean) => void>();
  let listening = false;
  let ready = false;
  let closing = false;
  // Counts closes of the LISTEN connection, so a LISTEN that succeeded on a connection which has
  // closed since is not taken for an active one.
  let listenConnectionCloses = 0;
  let relistening: Promise<void> | null = null;

  // Ready: LISTEN active and the last write did not fail for lack of space.
  function showReadiness() {
    const value = listening && !space.full && !closing;
    if (ready === value) return;
    ready = value;
    for (const listener of readyListeners) listener(value);
  }

  function setReady(value: boolean) {
    if (listening === value || (closing && value)) return;
    listening = value;
    if (value) logger.info("auction store ready: LISTEN active");
    // Not ended by the next LISTEN: a database that flaps still gives one line an interval.
    else logRepeated(logger, "warn", {}, "auction store not ready: the LISTEN connection to PostgreSQL is lost");
    showReadiness();
  }

  function deliver(channel: string, payload: string) {
    if (channel === NOTIFY_CHANNEL) notices.deliver(payload);
    else if (channel === ADMIN_SESSIONS_CHANNEL) adminNotices.deliver(payload);
    else paymentNotices.deliver(channel, payload);
  }

  // One connection, replaced whole when it stops answering (postgres.js cannot drop a single one).
  function connectListener(): postgres.Sql {
    const connection: postgres.Sql = postgres(databaseUrl, {
      ...connectionOptions(logger),
      connection: { application_name: "nothing-store listen" },
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      onclose: () => {
        if (closing || connection !== listenSql) return;
        listenConnectionCloses++;
        setReady(false);
        relisten();
      },
      // Not in postgres.js's types, but the option its own listen() uses: every NotificationResponse.
      ...({ onnotify: deliver } as object),
    });
    return connection;
  }
  let listenSql = connectListener();

  function relisten(): Promise<void> {
    relistening ??= (async () => {
      let delay = RELISTEN_FIRST_DELAY_MS;
      while (!closing) {
        const closesBefore = listenConnectionCloses;
        try {
          // A notification in the same socket read as the LISTEN reply reaches onnotify before
          // setReady(true) below; consumers hold notifications from setReady(false) on for that.
          await listenSql
            .unsafe(
              `LISTEN ${NOTIFY_CHANNEL}; LISTEN ${PAYMENT_OUTCOMES_CHANNEL}; LISTEN ${PAYMENT_WATCHER_CHANNEL}; LISTEN ${ADMIN_SESSIONS_CHANNEL}`,
            )
            .simple();
          if (listenConnectionCloses === closesBefore) {
            setReady(true);
            return;
          }
        } catch (error) {
          logger.debug({ err: describe(error) }, "LISTEN failed, retrying");
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, RELISTEN_MAX_DELAY_MS);
      }
    })().finally(() => {
      relistening = null;
    });
    return relistening;
  }

  // A server that vanishes without closing the socket (a network cut, a frozen host) is noticed by
  // TCP only after many minutes: ask the LISTEN connection a question now and then instead.
  async function checkListenConnection() {
    if (!listening || closing || relistening) return;
    const probed = listenSql;
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      probed.unsafe("SELECT 1").then(
        () => true,
        () => true, // an error closes the connection: onclose takes it from there
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), heartbeatMs);
      }),
    ]);
    clearTimeout(timer);
    if (answered || closing || probed !== listenSql) return;
    logRepeated(logger, "warn", { waitedMs: heartbeatMs }, "the LISTEN connection stopped answering: replacing it");
    listenSql = connectListener();
    listenConnectionCloses++;
    setReady(false);
    probed.end({ timeout: 0 }).catch(() => {});
    relisten();
  }
  let heartbeatRunning = false;
  const heartbeat = setInterval(() => {
    if (heartbeatRunning) return;
    heartbeatRunning = true;
    checkListenConnection().finally(() => {
      heartbeatRunning = false;
    });
  }, heartbeatMs);
  heartbeat.unref();

  await relisten();

  return {
    backend: "postgres",
    ...queries,
    placeBid: (bidderName, amountCents): Promise<PlaceBidOutcome> =>
      space.placing(1, () => queries.placeBid(bidderName, amountCents)),
    placeBids: (bids) => space.placing(bids.length, () => queries.placeBids(bids)),
    placeEntries: (entries) => space.placing(entries.length, () => queries.placeEntries(entries)),
    payments,
    admin,
    onBid: notices.onBid,
    onModeration: notices.onModeration,
    onRoundClosed: notices.onRoundClosed,
    onReadyChange(listener) {
      readyListeners.add(listener);
      return () => readyListeners.delete(listener);
    },
    isReady() {
      return ready;
    },
    async close() {
      if (closing) return;
      closing = true;
      ready = false;
      space.close();
      clearInterval(heartbeat);
      notices.clear();
      paymentNotices.clear();
      adminNotices.clear();
      readyListeners.clear();
      await Promise.all([sql.end({ timeout: 5 }), listenSql.end({ timeout: 1 }), watcherLease.close()]);
    },
  };
}

/** Any constant works; it only has to be the same for every instance of this service. */
const WATCHER_LOCK_KEY = 4_711_022;
/** How often the holder proves it still holds the lock; also keeps its session from idling out. */
const LEASE_CHECK_MS = 2_000;
/**
 * The server ends the holder's session after this long without a statement (PostgreSQL 14+), so a
 * frozen holder frees the lock for another instance well within docs/design.md#8's 10 s; a dead
 * one frees it at once, with its socket.
 */
const LEASE_IDLE_TIMEOUT_MS = 5_000;
const HOLDS_LOCK_SQL = `SELECT EXISTS (
  SELECT 1 FROM pg_locks
  WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = 0 AND objid = $1::integer AND objsubid = 1 AND granted
) AS held`;

class LeaseLostError extends Error {
  override name = "LeaseLostError";
}

/**
 * The payment watcher's lease: a session-level advisory lock on a connection of its own, one per
 * deployment. Every write of the holder runs on that connection and checks first that its session
 * still holds the lock, so a holder whose connection dropped (and was silently replaced) writes
 * nothing, whatever it believes.
 */
function createWatcherLease(databaseUrl: string, logger: Logger) {
  let connection: postgres.Sql | null = null;
  let held: { lost: boolean; listeners: Set<(reason: string) => void>; check: NodeJS.Timeout } | null = null;
  let closed = false;

  function lose(reason: string) {
    const lease = held;
    if (!lease || lease.lost) return;
    lease.lost = true;
    held = null;
    clearInterval(lease.check);
    // The watcher says so, with this reason: one line for one loss.
    logger.debug({ reason }, "payment watcher lease lost");
    const lost = connection;
    connection = null;
    // Its session may still hold the lock: end it so another instance can take over.
    lost?.end({ timeout: 0 }).catch(() => {});
    for (const listener of lease.listeners) listener(reason);
  }

  function connect(): postgres.Sql {
    const sql: postgres.Sql = postgres(databaseUrl, {
      ...connectionOptions(logger),
      connection: {
        application_name: "nothing-store payment watcher",
        statement_timeout: STATEMENT_TIMEOUT_MS,
        idle_in_transaction_session_timeout: LEASE_IDLE_TIMEOUT_MS,
      },
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      onclose: () => {
        if (sql === connection) lose("the connection closed");
      },
    });
    return sql;
  }

  async function holdsLock(run: (text: string, params: unknown[]) => Promise<Row[]>): Promise<boolean> {
    return (await run(HOLDS_LOCK_SQL, [WATCHER_LOCK_KEY]))[0]?.held === true;
  }

  async function claim(): Promise<LeaseConnection | null> {
    if (closed || held) return null;
    connection ??= connect();
    const sql = connection;
    const run = async (text: string, params: unknown[]) =>
      (await sql.unsafe(text, params as never[])) as unknown as Row[];
    const [row] = await unavailableOnLostConnection(() =>
      run("SELECT pg_try_advisory_lock($1::bigint) AS locked", [WATCHER_LOCK_KEY]),
    );
    if (row?.locked !== true) return null;
    try {
      await run("SELECT set_config('idle_session_timeout', $1::text, false)", [String(LEASE_IDLE_TIMEOUT_MS)]);
    } catch (error) {
      logger.warn({ err: error }, "idle_session_timeout needs PostgreSQL 14: a frozen watcher keeps its lease");
    }
    const lease = {
      lost: false,
      listeners: new Set<(reason: string) => void>(),
      check: setInterval(() => {
        holdsLock(run).then(
          (stillHeld) => {
            if (!stillHeld) lose("the lock is no longer held");
          },
          (error: unknown) => lose(describe(error)),
        );
      }, LEASE_CHECK_MS),
    };
    lease.check.unref();
    held = lease;
    return {
      async transaction(work) {
        if (lease.lost) throw new LeaseLostError("the payment watcher lease is lost");
        return unavailableOnLostConnection(
          () =>
            sql.begin(async (tx) => {
              const query: Query = async (text, params) =>
                (await tx.unsafe(text, params as never[], { prepare: true })) as unknown as Row[];
              if (!(await holdsLock(query))) {
                lose("the lock is no longer held");
                throw new LeaseLostError("the payment watcher lease is lost");
              }
              return work(query);
            }) as Promise<never>,
        );
      },
      isHeld: () => !lease.lost,
      onLost(listener) {
        if (lease.lost) listener("lost before it was watched");
        else lease.listeners.add(listener);
      },
      async release() {
        if (lease.lost) return;
        lease.lost = true;
        held = null;
        clearInterval(lease.check);
        const released = connection;
        connection = null;
        await released?.end({ timeout: 1 }).catch(() => {});
      },
    };
  }

  return {
    claim,
    async close() {
      closed = true;
      if (held) clearInterval(held.check);
      held = null;
      const open = connection;
      connection = null;
      await open?.end({ timeout: 1 }).catch(() => {});
    },
  };
}
