/**
 * A blink client the project did not write, in the browser: Dialect's `Blink` (@dialectlabs/blinks:
 * the layouts; @dialectlabs/blinks-core: fetching, the adapter, the execution) rendering the
 * action named in the page's `?action=` (a `solana-action:` URL, or a page whose actions.json maps
 * it), as X or a wallet would with Dialect's code; with `?button=<label>`, that one button alone, as
 * Dialect's `Miniblink` shows it (then the receipt's button). Bundled at test time by
 * blinkClient.ts, never built into the site. The wallet behind its adapter is the test's: connect,
 * sign-and-send and confirm are functions the test exposed (blinkClient.ts), which sign in Node and
 * send to the local chain.
 */
import "@dialectlabs/blinks/index.css";
import { Blink, Miniblink } from "@dialectlabs/blinks";
import {
  type AbstractActionComponent,
  type BlinkAdapter,
  type BlinkInstance,
  BlockchainIds,
  setProxyUrl,
  useAction,
} from "@dialectlabs/blinks-core";
import { createElement } from "react";
import { createRoot } from "react-dom/client";

/** What blinkClient.ts exposes to the page (page.exposeFunction). */
interface TestBlinkWallet {
  blinkWalletConnect(): Promise<string>;
  blinkWalletSignAndSend(transaction: string): Promise<{ signature: string } | { error: string }>;
  blinkWalletConfirm(signature: string): Promise<string | null>;
}

const wallet = window as unknown as TestBlinkWallet;

const adapter: BlinkAdapter = {
  metadata: { supportedBlockchainIds: [BlockchainIds.SOLANA_MAINNET] },
  connect: () => wallet.blinkWalletConnect(),
  signTransaction: (transaction) => wallet.blinkWalletSignAndSend(transaction),
  confirmTransaction: async (signature) => {
    const failure = await wallet.blinkWalletConfirm(signature);
    if (failure !== null) throw new Error(failure);
  },
  signMessage: async () => ({ error: "This wallet signs transactions only." }),
};

// Dialect's proxy (proxy.dial.to) off: the client asks the action's origin itself. It already
// skips the proxy for 127.0.0.1; off, nothing else (an icon elsewhere) would go through it either.
setProxyUrl("");

const query = new URL(window.location.href).searchParams;
const actionUrl = query.get("action") ?? "";
const buttonLabel = query.get("button");

/** Miniblink's one component: the button labelled so, then the completed blink's own. */
const oneButton = (blink: BlinkInstance): AbstractActionComponent | null =>
  blink.type === "completed"
    ? (blink.actions[0] ?? null)
    : (blink.actions.find((action) => action.label === buttonLabel) ?? null);

function TestBlink() {
  const { blink, isLoading } = useAction({ url: actionUrl });
  if (!blink) return createElement("p", { role: "status" }, isLoading ? "Loading the blink…" : "No blink.");
  // "all": the action is unknown to Dialect's registry (which answers empty here), as an
  // unregistered action is on dial.to; the blink shows its warning and still runs.
  if (buttonLabel !== null) return createElement(Miniblink, { blink, adapter, selector: oneButton });
  return createElement(Blink, { blink, adapter, securityLevel: "all", stylePreset: "default" });
}

const root = document.getElementById("blink");
if (root) createRoot(root).render(createElement(TestBlink));
