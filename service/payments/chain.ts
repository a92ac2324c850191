/**
 * The service's calls to a Solana JSON-RPC endpoint (docs/design.md#8), through @solana/kit's
 * createSolanaRpc: its requests and answers are typed (the test chain answers in the same types),
 * u64 fields arrive as bigint, and since kit 8 its HTTP transport puts an answer's status and
 * headers into the error it throws, so a 429's Retry-After is readable without a transport of our
 * own. Every call has a deadline, is counted and timed by method, and fails as an RpcFault that
 * says how: rate limited (with Retry-After), a server error, a timeout, a refused connection, or
 * an error answer.
 */
import {
  type Address,
  type Blockhash,
  createSolanaRpc,
  getBase64Encoder,
  isSolanaError,
  type Signature,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
} from "@solana/kit";
import { findAssociatedTokenPda, getMintDecoder, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import type { Timers } from "../../src/lib/timers.ts";
import type { Metrics } from "../metrics.ts";
import type { PaymentCommitment } from "./settings.ts";
import { type Unsellable, unsellable } from "./tokenExtensions.ts";
import type { FetchedTransaction } from "./verify.ts";

export const TOKEN_2022_PROGRAM_ADDRESS = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb" as Address;
const TOKEN_PROGRAMS: readonly string[] = [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS];

const RPC_FAULT_KINDS = ["rate_limited", "server_error", "http_error", "timeout", "refused", "rpc_error"] as const;
export type RpcFaultKind = (typeof RPC_FAULT_KINDS)[number];
/** The methods the service calls; their counters start at zero, so a dashboard sees a series before the first error. */
const RPC_METHODS = ["getSignaturesForAddress", "getTransaction", "getMultipleAccounts", "getLatestBlockhash"] as const;
type RpcMethod = (typeof RPC_METHODS)[number];

export class RpcFault extends Error {
  override name = "RpcFault";
  readonly kind: RpcFaultKind;
  readonly method: string;
  /** From a 429's Retry-After, when it had one. */
  readonly retryAfterMs: number | null;
  constructor(method: string, kind: RpcFaultKind, detail: string, retryAfterMs: number | null, cause: unknown) {
    super(`${method}: ${kind} (${detail})`, { cause });
    this.kind = kind;
    this.method = method;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Retry-After as seconds or an HTTP date (RFC 9110), in ms from now; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null || value.trim() === "") return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month; Date.parse alone would read "-5" as a year.
  const date = /[a-z]{3}/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);

/** The error and its causes, outermost first (fetch hides the socket's error in `cause`). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && chain.length < 8) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function classify(method: string, error: unknown, now: number): RpcFault {
  if (error instanceof RpcFault) return error;
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const { statusCode, headers } = error.context;
    if (statusCode === 429) {
      return new RpcFault(method, "rate_limited", "HTTP 429", retryAfterMs(headers.get("retry-after"), now), error);
    }
    const kind = statusCode >= 500 ? "server_error" : "http_error";
    return new RpcFault(method, kind, `HTTP ${statusCode}`, null, error);
  }
  for (const link of causes(error)) {
    const { name, code } = link as { name?: unknown; code?: unknown };
    if (name === "TimeoutError" || name === "AbortError")
      return new RpcFault(method, "timeout", "no answer in time", null, error);
    if (typeof code === "string" && NETWORK_CODES.has(code)) return new RpcFault(method, "refused", code, null, error);
  }
  if (isSolanaError(error)) return new RpcFault(method, "rpc_error", error.message, null, error);
  if (error instanceof TypeError) return new RpcFault(method, "refused", error.message, null, error);
  return new RpcFault(method, "rpc_error", String((error as Error)?.message ?? error), null, error);
}

export interface SignatureInfo {
  signature: Signature;
  slot: bigint;
  /** Seconds since the epoch, or null. */
  blockTime: bigint | null;
  /** Set when the transaction failed. */
  err: unknown;
}

export interface ChainClient {
  /** Newest first, as the RPC lists them. */
  signaturesFor(
    address: Address,
    options: { until?: Signature; before?: Signature; limit: number },
  ): Promise<readonly SignatureInfo[]>;
  /** Null when the node does not have it (yet). */
  transaction(signature: Signature): Promise<FetchedTransaction | null>;
  /** Owner program and data of each account, null for an account that does not exist. */
  accounts(addresses: readonly Address[]): Promise<({ owner: Address; data: Uint8Array } | null)[]>;
  /** A recent blockhash and the last block height a transaction made with it lands in (transaction requests). */
  latestBlockhash(): Promise<BlockhashLifetime>;
  /** Aborts the calls in flight (on shutdown: a hung call must not hold the drain). */
  abortAll(): void;
}

export interface BlockhashLifetime {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
}

export interface ChainClientOptions {
  rpcUrl: string;
  commitment: PaymentCommitment;
  metrics: Metrics;
  /** Longest a call may take (default 10 s). */
  timeoutMs?: number;
  timers: Timers;
  now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

export function createChainClient(options: ChainClientOptions): ChainClient {
  const { commitment, metrics, timers, now = Date.now } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const rpc = createSolanaRpc(options.rpcUrl);
  const inFlight = new Set<AbortController>();

  for (const method of RPC_METHODS) {
    metrics.paymentRpcCalls.inc({ method }, 0);
    for (const kind of RPC_FAULT_KINDS) metrics.paymentRpcErrors.inc({ method, kind }, 0);
  }

  async function call<T>(method: RpcMethod, send: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    metrics.paymentRpcCalls.inc({ method });
    const controller = new AbortController();
    inFlight.add(controller);
    // The injected timers, not AbortSignal.timeout: a test's clock drives the deadline.
    const deadline = timers.setTimeout(() => {
      controller.abort(new DOMException(`no answer in ${timeoutMs} ms`, "TimeoutError"));
    }, timeoutMs);
    const stopTimer = metrics.paymentRpcLatency.startTimer({ method });
    try {
      return await send(controller.signal);
    } catch (error) {
      const fault = classify(method, controller.signal.aborted ? controller.signal.reason : error, now());
      metrics.paymentRpcErrors.inc({ method, kind: fault.kind });
      throw fault;
    } finally {
      stopTimer();
      timers.clearTimeout(deadline);
      inFlight.delete(controller);
    }
  }

  return {
    abortAll() {
      for (const controller of inFlight) controller.abort(new DOMException("the service is stopping", "AbortError"));
    },
    signaturesFor(address, { until, before, limit }) {
      return call("getSignaturesForAddress", (abortSignal) =>
        rpc
          .getSignaturesForAddress(address, {
            commitment,
            limit,
            ...(until ? { until } : {}),
            ...(before ? { before } : {}),
          })
          .send({ abortSignal }),
      );
    },
    transaction(signature) {
      return call("getTransaction", async (abortSignal) => {
        const answer = await rpc
          .getTransaction(signature, { commitment, encoding: "json", maxSupportedTransactionVersion: 0 })
          .send({ abortSignal });
        // The RPC's proxy loses the generic: with maxSupportedTransactionVersion 0 the answer has its version.
        return answer as FetchedTransaction | null;
      });
    },
    async latestBlockhash() {
      const { value } = await call("getLatestBlockhash", (abortSignal) =>
        rpc.getLatestBlockhash({ commitment }).send({ abortSignal }),
      );
      return value;
    },
    async accounts(addresses) {
      const { value } = await call("getMultipleAccounts", (abortSignal) =>
        rpc.getMultipleAccounts(addresses as Address[], { commitment, encoding: "base64" }).send({ abortSignal }),
      );
      const base64 = getBase64Encoder();
      return value.map((account) =>
        account ? { owner: account.owner, data: new Uint8Array(base64.encode(account.data[0])) } : null,
      );
    },
  };
}

/** What the service must know of the chain before it can ask for a payment; read once, kept. */
export interface ChainInfo {
  decimals: number;
  /** Token or Token-2022: the mint's owner. */
  tokenProgram: Address;
  /** The recipient's associated token account for the mint: where payments land, what the watcher reads. */
  tokenAccount: Address;
}

/** The settings name an account that cannot be what they say: no retry will help. */
export class ChainSetupError extends Error {
  override name = "ChainSetupError";
}

/** The mint or the store's token account would make every purchase arrive short or fail (tokenExtensions.ts). */
export class UnsellableMintError extends ChainSetupError {
  override name = "UnsellableMintError";
  readonly extension: string;
  readonly fields: Record<string, unknown>;
  constructor({ extension, msg, fields }: Unsellable) {
    super(msg);
    this.extension = extension;
    this.fields = fields;
  }
}

const MINT_SIZE = 82;
const TOKEN_ACCOUNT_SIZE = 165;
/** Token-2022 writes its account type after the base token account's bytes when extensions follow. */
const ACCOUNT_TYPE_MINT = 1;

/**
 * The mint, the recipient and its associated token account under either program, in one call: the
 * mint's program says which of the two is the store's.
 */
export async function readChainInfo(chain: ChainClient, mint: Address, recipient: Address): Promise<ChainInfo> {
  const tokenAccounts = await Promise.all(
    TOKEN_PROGRAMS.map(async (tokenProgram) => {
      const [address] = await findAssociatedTokenPda({ owner: recipient, mint, tokenProgram: tokenProgram as Address });
      return address;
    }),
  );
  const [mintAccount, recipientAccount, ...tokenAccountReads] = await chain.accounts([
    mint,
    recipient,
    ...tokenAccounts,
  ]);
  if (!mintAccount) throw new ChainSetupError(`PUBLIC_CONTRACT_ADDRESS ${mint} does not exist on this chain`);
  const { owner, data } = mintAccount;
  const mintLayout =
    data.length === MINT_SIZE ||
    (owner === TOKEN_2022_PROGRAM_ADDRESS &&
      data.length > TOKEN_ACCOUNT_SIZE &&
      data[TOKEN_ACCOUNT_SIZE] === ACCOUNT_TYPE_MINT);
  if (!TOKEN_PROGRAMS.includes(owner) || !mintLayout) {
    throw new ChainSetupError(`PUBLIC_CONTRACT_ADDRESS ${mint} is not a token mint (owner ${owner})`);
  }
  const decoded = getMintDecoder().decode(data.subarray(0, MINT_SIZE));
  if (!decoded.isInitialized) throw new ChainSetupError(`PUBLIC_CONTRACT_ADDRESS ${mint} is not an initialised mint`);
  // A wallet address, not a token account: the wallet pays the recipient's associated token account.
  if (recipientAccount && TOKEN_PROGRAMS.includes(recipientAccount.owner)) {
    throw new ChainSetupError(
      `PUBLIC_PAYMENT_ADDRESS ${recipient} is a token account; set the wallet's address, whose associated token account receives`,
    );
  }
  const index = TOKEN_PROGRAMS.indexOf(owner);
  const tokenAccount = tokenAccounts[index] as Address;
  const tokenAccountRead = tokenAccountReads[index];
  const tokenAccountData =
    tokenAccountRead?.owner === owner && tokenAccountRead.data.length >= TOKEN_ACCOUNT_SIZE
      ? tokenAccountRead.data
      : null;
  const refusal = unsellable({ mint, mintData: data, recipient, tokenAccount, tokenAccountData });
  if (refusal) throw new UnsellableMintError(refusal);
  return { decimals: decoded.decimals, tokenProgram: owner, tokenAccount };
}
