/**
 * Dialect's blink client (@dialectlabs/blinks) for the e2e suite, the store's action rendered by
 * code the project did not write: blinkClientPage.ts bundled with esbuild into a directory of its
 * own (never committed, removed on stop) and served from 127.0.0.1 on a port of its own, so its
 * page is another origin than the service's, as dial.to or X is. Its wallet signs in this process
 * with a local key and sends to the local chain, as tests/e2e/harness/testWallet.ts does.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import {
  decompileTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type KeyPairSigner,
  signTransaction,
} from "@solana/kit";
import { build } from "esbuild";
import type { LocalChain } from "../../../scripts/harness/localChain.ts";

const ENTRY = fileURLToPath(new URL("./blinkClientPage.ts", import.meta.url));

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A blink client</title><link rel="stylesheet" href="/blinkClientPage.css"></head>
<body><main id="blink"></main><script type="module" src="/blinkClientPage.js"></script></body>
</html>`;

export interface BlinkClient {
  /**
   * The client's page showing `action` (a `solana-action:` URL, or a page mapped by its
   * actions.json): the whole blink, or its button labelled `button` alone (Dialect's Miniblink).
   */
  pageFor(action: string, button?: string): string;
  stop(): Promise<void>;
}

/** Bundles the client (about a second) and serves it on 127.0.0.1. */
export async function startBlinkClient(): Promise<BlinkClient> {
  const outdir = await mkdtemp(join(tmpdir(), "nothing-blink-client-"));
  try {
    await build({
      entryPoints: [ENTRY],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      outdir,
      define: { "process.env.NODE_ENV": '"production"' },
      logLevel: "warning",
    });
    const files: Record<string, [string, Buffer]> = {
      "/": ["text/html; charset=utf-8", Buffer.from(PAGE)],
      "/blinkClientPage.js": ["text/javascript", await readFile(join(outdir, "blinkClientPage.js"))],
      "/blinkClientPage.css": ["text/css", await readFile(join(outdir, "blinkClientPage.css"))],
    };
    const server = createServer((req, res) => {
      const file = files[new URL(req.url ?? "/", "http://client").pathname];
      if (!file) res.writeHead(404).end();
      else res.writeHead(200, { "Content-Type": file[0], "Cache-Control": "no-store" }).end(file[1]);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      pageFor: (action, button) => `${origin}/?${new URLSearchParams({ action, ...(button ? { button } : {}) })}`,
      stop: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await rm(outdir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(outdir, { recursive: true, force: true });
    throw error;
  }
}

/** Dialect's registry of actions, as the client fetches it: here it knows none (the store's is not registered). */
const REGISTRY_URL = "https://actions-registry.dial.to/all";

/**
 * Keeps `page` on this machine: Dialect's registry answered empty from here, every other request
 * off 127.0.0.1 refused. The URLs refused, to expect none.
 */
export async function keepOnThisMachine(page: Page): Promise<string[]> {
  const refused: string[] = [];
  await page.route(
    (url) => url.hostname !== "127.0.0.1",
    async (route) => {
      const url = route.request().url();
      if (url === REGISTRY_URL) {
        await route.fulfill({
          json: { actions: [], websites: [], interstitials: [] },
          headers: { "Access-Control-Allow-Origin": "*" },
        });
        return;
      }
      refused.push(url);
      await route.abort("blockedbyclient");
    },
  );
  return refused;
}

export interface BlinkWallet {
  /** Each transaction the blink asked the wallet to sign, as it came (base64), then sent. */
  readonly sent: { transaction: string; signature: string }[];
  /** The transaction message of a base64 transaction, decompiled. */
  decode(transaction: string): ReturnType<typeof decompileTransactionMessage>;
}

/** The blink's wallet in `page`: `buyer` connects, signs and sends to `chain`, and confirms there. */
export async function installBlinkWallet(page: Page, chain: LocalChain, buyer: KeyPairSigner): Promise<BlinkWallet> {
  const sent: BlinkWallet["sent"] = [];
  const decodeTransaction = (base64: string) => getTransactionDecoder().decode(getBase64Encoder().encode(base64));
  await page.exposeFunction("blinkWalletConnect", () => buyer.address);
  await page.exposeFunction("blinkWalletSignAndSend", async (base64: string) => {
    try {
      const signature = await chain.submit(await signTransaction([buyer.keyPair], decodeTransaction(base64)));
      sent.push({ transaction: base64, signature });
      return { signature };
    } catch (error) {
      return { error: String(error) };
    }
  });
  // Confirmed when the chain executed it without an error: null, else what went wrong.
  await page.exposeFunction("blinkWalletConfirm", (signature: string) => {
    const executed = chain.executed.find((transaction) => transaction.signature === signature);
    if (!executed) return "The chain has no such transaction.";
    return executed.meta?.err ? `The transaction failed: ${JSON.stringify(executed.meta.err)}` : null;
  });
  return {
    sent,
    decode: (base64) =>
      decompileTransactionMessage(
        getCompiledTransactionMessageDecoder().decode(decodeTransaction(base64).messageBytes),
      ),
  };
}
