/**
 * A Solana JSON-RPC endpoint on 127.0.0.1 over a LocalChain, answering the methods the payment
 * service calls (getSignaturesForAddress, getTransaction with the `json` encoding, getMultipleAccounts
 * with `base64`, getLatestBlockhash) in the RPC's documented shapes. The answers are typed with @solana/kit's RPC API
 * types, so a change of those shapes fails the type check here. u64 fields are bigint in those
 * types and go out as JSON numbers, as a validator sends them.
 *
 * Faults on demand: `failNext(n, fault, method?)` answers the next n calls (of that method) with an
 * HTTP status (429 with a Retry-After, 500...) or leaves them hanging; `refuse()` closes the port
 * until `accept()`.
 *
 *   const rpc = await startChainRpcServer(chain);  // rpc.url → http://127.0.0.1:<port>
 *   rpc.failNext(2, { status: 429, retryAfter: "1" });
 *   await rpc.stop();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type {
  Address,
  Base64EncodedBytes,
  Base64EncodedDataResponse,
  GetLatestBlockhashApi,
  GetMultipleAccountsApi,
  GetSignaturesForAddressApi,
  GetTransactionApiResponseJson,
  Signature,
} from "@solana/kit";
import type { LocalChain } from "./localChain.ts";

type ChainFault = { status: number; retryAfter?: string } | { hang: true };

type SignaturesAnswer = ReturnType<GetSignaturesForAddressApi["getSignaturesForAddress"]>;
type AccountsAnswer = ReturnType<GetMultipleAccountsApi["getMultipleAccounts"]>;
type BlockhashAnswer = ReturnType<GetLatestBlockhashApi["getLatestBlockhash"]>;
/** A blockhash is good for 150 blocks on a cluster; the local chain has no block height, so its slot stands in. */
const BLOCKHASH_VALID_BLOCKS = 150n;

class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** JSON with bigints written as plain numbers, as the RPC writes u64s. */
function toJson(value: unknown): string {
  const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;
  return JSON.stringify(value, (_key, field: unknown) =>
    typeof field === "bigint" ? rawJson(field.toString()) : field,
  );
}

export interface ChainRpcServer {
  readonly url: string;
  /** Calls answered or failed, by method (faults included), since the start or the last reset. */
  readonly calls: Map<string, number>;
  resetCalls(): void;
  failNext(count: number, fault: ChainFault, method?: string): void;
  clearFaults(): void;
  /** Leaves `signature` out of every listing until show(): an RPC node whose index trails the chain. */
  hide(signature: string): void;
  show(signature: string): void;
  /**
   * Answers getTransaction for `key` (a signature, or any account key: every transaction carrying
   * that reference) with what `rewrite` makes of the true answer: a poison answer.
   */
  tamper(key: string, rewrite: (answer: Record<string, unknown>) => Record<string, unknown>): void;
  /** Closes the port and every open connection: calls are refused until accept(). */
  refuse(): Promise<void>;
  accept(): Promise<void>;
  stop(): Promise<void>;
}

export async function startChainRpcServer(chain: LocalChain): Promise<ChainRpcServer> {
  const calls = new Map<string, number>();
  const faults: { fault: ChainFault; method: string | undefined }[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  const hidden = new Set<string>();
  const tampered = new Map<string, (answer: Record<string, unknown>) => Record<string, unknown>>();

  function signaturesFor(
    address: Address,
    config: { before?: string; until?: string; limit?: number } = {},
  ): SignaturesAnswer {
    const limit = config.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new RpcError(-32602, "Invalid limit; max 1000");
    const touching = chain.executed.filter(
      (tx) =>
        !hidden.has(tx.signature) &&
        (tx.transaction.message.accountKeys.includes(address) || tx.meta?.loadedAddresses.writable.includes(address)),
    );
    const newestFirst = [...touching].reverse();
    let start = 0;
    if (config.before) {
      const index = newestFirst.findIndex((tx) => tx.signature === config.before);
      start = index < 0 ? newestFirst.length : index + 1;
    }
    const answer: SignaturesAnswer[number][] = [];
    for (const tx of newestFirst.slice(start)) {
      if (tx.signature === config.until || answer.length >= limit) break;
      answer.push({
        signature: tx.signature,
        slot: tx.slot,
        err: tx.meta?.err ?? null,
        memo: null,
        blockTime: tx.blockTime,
        confirmationStatus: "finalized",
      });
    }
    return answer;
  }

  function transaction(
    signature: Signature,
    config: { encoding?: string; maxSupportedTransactionVersion?: number } = {},
  ) {
    const tx = chain.executed.find((candidate) => candidate.signature === signature);
    if (!tx) return null;
    if ((config.encoding ?? "json") !== "json")
      throw new RpcError(-32602, "this test chain answers the json encoding only");
    if (config.maxSupportedTransactionVersion !== 0) {
      // What a validator answers for a version 0 transaction to a client that did not say it reads them.
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    const { signature: _, ...answer } = tx;
    const rewrite = [signature, ...tx.transaction.message.accountKeys]
      .map((key) => tampered.get(key))
      .find((found) => found !== undefined);
    if (rewrite) return rewrite(answer as unknown as Record<string, unknown>);
    return answer satisfies GetTransactionApiResponseJson<0>;
  }

  function accounts(addresses: Address[], config: { encoding?: string } = {}): AccountsAnswer {
    if (config.encoding !== "base64") throw new RpcError(-32602, "this test chain answers the base64 encoding only");
    return {
      context: { slot: chain.executed.at(-1)?.slot ?? 0n },
      value: addresses.map((address) => {
        const account = chain.svm.getAccount(address);
        if (!account.exists) return null;
        return {
          data: [
            Buffer.from(account.data).toString("base64") as Base64EncodedBytes,
            "base64",
          ] as Base64EncodedDataResponse,
          executable: account.executable,
          lamports: account.lamports,
          owner: account.programAddress,
          space: BigInt(account.data.length),
          rentEpoch: 0n,
        };
      }),
    };
  }

  function latestBlockhash(): BlockhashAnswer {
    const slot = chain.executed.at(-1)?.slot ?? 0n;
    return {
      context: { slot },
      value: { blockhash: chain.svm.latestBlockhash(), lastValidBlockHeight: slot + BLOCKHASH_VALID_BLOCKS },
    };
  }

  function answer(method: string, params: unknown[]): unknown {
    switch (method) {
      case "getSignaturesForAddress":
        return signaturesFor(params[0] as Address, params[1] as never);
      case "getTransaction":
        return transaction(params[0] as Signature, params[1] as never);
      case "getMultipleAccounts":
        return accounts(params[0] as Address[], params[1] as never);
      case "getLatestBlockhash":
        return latestBlockhash();
      default:
        throw new RpcError(-32601, "Method not found");
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const method = String(request.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    const index = faults.findIndex((entry) => entry.method === undefined || entry.method === method);
    const fault = index < 0 ? undefined : faults.splice(index, 1)[0]?.fault;
    if (fault && "hang" in fault) {
      hanging.add(res);
      return;
    }
    if (fault) {
      res
        .writeHead(fault.status, {
          "Content-Type": "application/json",
          ...(fault.retryAfter ? { "Retry-After": fault.retryAfter } : {}),
        })
        .end(JSON.stringify({ jsonrpc: "2.0", id: request.id, error: { code: -32429, message: "test fault" } }));
      return;
    }
    let body: object;
    try {
      body = {
        jsonrpc: "2.0",
        id: request.id,
        result: answer(method, Array.isArray(request.params) ? request.params : []),
      };
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      body = { jsonrpc: "2.0", id: request.id, error: { code: error.code, message: error.message } };
    }
    res.writeHead(200, { "Content-Type": "application/json" }).end(toJson(body));
  }

  let server: Server;
  let port = 0;
  async function listen() {
    server = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => {
        console.error("chain RPC server failed:", error);
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  }
  async function close() {
    hanging.clear();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
  await listen();

  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    calls,
    resetCalls: () => calls.clear(),
    failNext(count, fault, method) {
      for (let i = 0; i < count; i++) faults.push({ fault, method });
    },
    clearFaults: () => void faults.splice(0),
    tamper: (key, rewrite) => void tampered.set(key, rewrite),
    hide: (signature) => void hidden.add(signature),
    show: (signature) => void hidden.delete(signature),
    refuse: close,
    accept: listen,
    stop: close,
  };
}
