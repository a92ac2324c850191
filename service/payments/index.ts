/**
 * Real purchases (docs/design.md#8), wired: the chain's facts read once (retried until the RPC
 * answers), the watcher (which runs only on the instance holding the lease), the routes, and
 * whether a payment can be taken now. With payments off only GET /payments/config and
 * GET /payments/patrons (404) answer.
 * The auction never waits on any of this: an unreachable RPC only makes purchases unavailable.
 */
import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { globalTimers, type Timers } from "../../src/lib/timers.ts";
import type { ServiceConfig } from "../config.ts";
import { createRateLimiter } from "../http/rateLimiter.ts";
import { type Logger, loggedError } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import { createNameFilter } from "../names/nameFilter.ts";
import { logRepeated, visitorAnswered, visitorUnanswered } from "../repeatedWarnings.ts";
import type { PaymentStore, RpcState, StoredPayment } from "../storage/payments.ts";
import {
  type ChainClient,
  type ChainInfo,
  ChainSetupError,
  createChainClient,
  RpcFault,
  readChainInfo,
  UnsellableMintError,
} from "./chain.ts";
import type { PaymentDesk } from "./desk.ts";
import { createPaymentsOffRoute } from "./patronRoutes.ts";
import { createRequestReads } from "./requestReads.ts";
import { createPaymentRoutes } from "./routeDispatch.ts";
import type { PaymentRoute } from "./routeShared.ts";
import { createRpcBudget } from "./rpcBudget.ts";
import { createPaymentSockets, type PaymentSocketLink } from "./sockets.ts";
import { createPaymentWatcher, MAX_BACKOFF_MS, type PaymentWatcher } from "./watcher.ts";

/** A wrong mint or recipient may be fixed on chain (a devnet mint created late): look again this often. */
const SETUP_RETRY_MS = 60_000;
const RATE_LIMIT_SWEEP_MS = 60_000;
/** GET /payments/<reference> per client a minute: twenty pages polling every 3 s. */
const STATUS_REQUESTS_PER_MINUTE = 400;

export interface PaymentsOptions {
  config: Pick<ServiceConfig, "payments" | "allowedOrigins" | "trustProxy" | "staticDir"> &
    Partial<Pick<ServiceConfig, "networkSharePercent" | "trustedProxies">>;
  store: { payments: PaymentStore; isReady(): boolean; onReadyChange(listener: (ready: boolean) => void): () => void };
  logger: Logger;
  metrics: Metrics;
  timers?: Timers;
  now?: () => number;
  randomBytes?: (length: number) => Uint8Array;
  /** Longest one RPC call may take (default 10 s). */
  rpcTimeoutMs?: number;
  /** The chain client (default: createSolanaRpc on SOLANA_RPC_URL). */
  chain?: ChainClient;
  /**
   * The mint or the store's token account would make every purchase arrive short or fail: the
   * service's start stops (exit 2). Without it, payments stay unavailable and the chain is read
   * again now and then, as for a wrong mint.
   */
  onUnsellable?: (error: UnsellableMintError) => void;
}

export interface Payments {
  /** The HTTP hook: true when it answered. */
  route: PaymentRoute;
  /** What the Actions routes (service/actions/) make their purchases through; absent while payments are off. */
  desk?: PaymentDesk;
  /** Whether a payment can be taken now. */
  available(): boolean;
  /** How the deployment's watcher last found the chain ("limited": confirmations are slower). */
  rpcState(): RpcState;
  /** The watcher of this instance (null with payments off or before the chain could be read). */
  watcher(): PaymentWatcher | null;
  /** Settles once the first reading of the chain ended, read or not (at once with payments off). */
  firstRead(): Promise<void>;
  /** Every committed outcome, from any instance's watcher, with the request as stored. Returns unsubscribe. */
  onOutcome(listener: (payment: StoredPayment) => void): () => void;
  /** For the socket server: "watchPayment" and the "payment" and "purchase" messages; absent while payments are off. */
  sockets?: PaymentSocketLink;
  stop(): Promise<void>;
}

export function startPayments(options: PaymentsOptions): Payments {
  const { config, store, metrics } = options;
  const allowedOrigins = config.allowedOrigins ?? [];
  if (!config.payments) {
    return {
      route: createPaymentsOffRoute({ allowedOrigins }),
      available: () => false,
      rpcState: () => "ok",
      watcher: () => null,
      firstRead: () => Promise.resolve(),
      onOutcome: () => () => {},
      stop: async () => {},
    };
  }
  const settings = config.payments;
  const logger = options.logger.child({ component: "payments" });
  const timers = options.timers ?? globalTimers;
  const now = options.now ?? Date.now;
  const chain =
    options.chain ??
    createChainClient({
      rpcUrl: settings.rpcUrl,
      commitment: settings.commitment,
      metrics,
      timers,
      now,
      timeoutMs: options.rpcTimeoutMs,
    });
  const budget = createRpcBudget(settings.rpcCallsPerSecond, now);
  const reads = createRequestReads({
    chain,
    budget,
    timers,
    now,
    callsPerSecond: settings.rpcCallsPerSecond,
    networkSharePercent: config.networkSharePercent,
  });
  let chainInfo: ChainInfo | null = null;
  let rpcState: RpcState = "ok";
  let watcher: PaymentWatcher | null = null;
  let stopped = false;
  let setupTimer: unknown;
  const outcomeListeners = new Set<(payment: StoredPayment) => void>();
  const firstRead = Promise.withResolvers<void>();

  const unsubscribeHealth = store.payments.onWatcherHealth((tokenAccount, state) => {
    if (chainInfo && tokenAccount === chainInfo.tokenAccount) {
      rpcState = state;
      showAvailability();
    }
  });
  const unsubscribeReady = store.onReadyChange(() => showAvailability());
  const unsubscribeOutcomes = store.payments.onOutcome((reference) => {
    if (outcomeListeners.size === 0) return;
    store.payments.find(reference).then(
      (payment) => {
        visitorAnswered(logger);
        if (payment) for (const listener of outcomeListeners) listener(payment);
      },
      (error: unknown) => visitorUnanswered(logger, "a payment's outcome", loggedError(error)),
    );
  });

  async function setUp(attempt: number): Promise<void> {
    if (stopped) return;
    try {
      const info = await readChainInfo(chain, settings.mint, settings.recipient);
      if (stopped) return;
      rpcState = await store.payments.rpcState(info.tokenAccount).catch((): RpcState => "ok");
      chainInfo = info;
      showAvailability();
      logger.info(
        {
          mint: settings.mint,
          decimals: info.decimals,
          tokenProgram: info.tokenProgram,
          tokenAccount: info.tokenAccount,
        },
        "payments are on",
      );
      watcher = createPaymentWatcher({
        store: store.payments,
        chain,
        budget,
        account: { tokenAccount: info.tokenAccount, recipient: settings.recipient, mint: settings.mint },
        pollMs: settings.pollMs,
        unreachableAfterMs: settings.unreachableAfterMs,
        retentionMs: settings.retentionDays * 24 * 60 * 60_000,
        logger: options.logger,
        metrics,
        timers,
        now,
      });
      watcher.start();
    } catch (error) {
      if (error instanceof UnsellableMintError && options.onUnsellable) {
        options.onUnsellable(error);
        return;
      }
      const delay =
        error instanceof ChainSetupError
          ? SETUP_RETRY_MS
          : Math.min(MAX_BACKOFF_MS, settings.pollMs * 2 ** Math.min(attempt, 16));
      if (error instanceof ChainSetupError)
        logRepeated(logger, "error", { retryInMs: delay }, `payments are unavailable: ${error.message}`);
      else if (error instanceof RpcFault)
        logRepeated(
          logger,
          "warn",
          { kind: error.kind, retryInMs: delay },
          "could not read the mint from the Solana RPC",
        );
      else logRepeated(logger, "warn", { err: loggedError(error), retryInMs: delay }, "could not read the mint");
      setupTimer = timers.setTimeout(() => void setUp(attempt + 1), delay);
    } finally {
      firstRead.resolve();
    }
  }
  void setUp(0);

  const onOutcome = (listener: (payment: StoredPayment) => void) => {
    outcomeListeners.add(listener);
    return () => void outcomeListeners.delete(listener);
  };
  const sockets = createPaymentSockets({ store, logger, onOutcome });
  const rateLimiter = createRateLimiter(settings.rateLimit, settings.rateWindowMs);
  const statusLimiter = createRateLimiter(STATUS_REQUESTS_PER_MINUTE, 60_000);
  // A wallet's own bucket, as strict as POST /payments: each transaction request costs two RPC calls.
  const transactionLimiter = createRateLimiter(settings.rateLimit, settings.rateWindowMs);
  const sweep = setInterval(() => {
    rateLimiter.sweep();
    statusLimiter.sweep();
    transactionLimiter.sweep();
  }, RATE_LIMIT_SWEEP_MS);
  sweep.unref();
  function available() {
    return chainInfo !== null && rpcState !== "unreachable" && store.isReady();
  }
  function showAvailability() {
    metrics.paymentsAvailable.set(available() ? 1 : 0);
  }
  showAvailability();

  return {
    ...createPaymentRoutes({
      settings,
      store: store.payments,
      allowedOrigins,
      trustProxy: config.trustProxy ?? 0,
      networkSharePercent: config.networkSharePercent,
      trustedProxies: config.trustedProxies,
      chainInfo: () => chainInfo,
      available,
      nameFilter: createNameFilter(),
      rateLimiter,
      statusLimiter,
      transactionLimiter,
      reads,
      servesPages: Boolean(config.staticDir),
      slow: () => rpcState === "limited",
      logger,
      metrics,
      now,
      randomBytes: options.randomBytes ?? ((length) => new Uint8Array(cryptoRandomBytes(length))),
    }),
    available,
    rpcState: () => rpcState,
    watcher: () => watcher,
    firstRead: () => firstRead.promise,
    onOutcome,
    sockets,
    async stop() {
      sockets.stop();
      stopped = true;
      timers.clearTimeout(setupTimer);
      clearInterval(sweep);
      unsubscribeHealth();
      unsubscribeReady();
      unsubscribeOutcomes();
      outcomeListeners.clear();
      // A hung call would hold the watcher's stop, and the drain with it, for its whole deadline.
      const stopping = watcher?.stop();
      chain.abortAll();
      await stopping;
    },
  };
}
