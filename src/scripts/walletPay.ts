/**
 * "Pay with <wallet>" in the buy dialog (docs/decisions/2026-11-27-wallet-standard-in-the-dialog.md).
 * paymentDialog.ts imports this when the dialog opens, so Wallet Standard is a chunk of its own that
 * no page loads before then. It lists the installed wallets that can sign and send a version 0
 * transaction (as they register, late ones too); a click connects, takes the request shown (or has
 * the dialog make one from its form), fetches its Solana Pay transaction request from the service,
 * and asks the wallet to sign and send it. The service's watcher confirms the payment by its
 * reference, exactly as a QR payment. A wallet that misbehaves harms only itself
 * (docs/decisions/2026-11-28-wallets-that-misbehave.md): one that throws while listed is left out,
 * one that does not answer gives the buttons back after WALLET_ANSWER_MS.
 */
import { getWallets } from "@wallet-standard/app";
import { PAYMENT_CHAIN, PAYMENTS_UNAVAILABLE_TEXT } from "../lib/payments.ts";
import {
  answerWithin,
  base64Bytes,
  NO_ACCOUNT_TEXT,
  type PayableWallet,
  payableWallets,
  payingAccount,
  transactionRefusalText,
  WALLET_ANSWER_MS,
  walletFailureText,
  walletProgressText,
} from "../lib/walletPayment.ts";

const FETCH_TIMEOUT_MS = 10_000;

/** The phone's wallet app is reached on this device only once Chrome allows it (mobileWallet.ts). */
const LOCAL_ACCESS_TEXT = {
  asked: (wallet: string) =>
    `Allow this page to connect to your wallet when Chrome asks, then press Pay with ${wallet} again.`,
  denied: (wallet: string) =>
    `Chrome blocks this page from connecting to apps on this phone: allow it in the site's settings, then pay with ${wallet} again, or pay with the QR code or link.`,
};

export interface WalletPayment {
  reference: string;
  /** The service's transaction request route for it (http(s), not the `solana:` link). */
  transactionEndpoint: string;
}

export interface WalletBlock {
  /** Hidden while no installed wallet can pay, or while the dialog does not accept a wallet's payment. */
  container: HTMLElement;
  list: HTMLUListElement;
  item: HTMLTemplateElement;
  accepts: () => boolean;
  /** The request to pay: the one shown, or a new one; null when there is none (the dialog said why). */
  paymentFor: () => Promise<WalletPayment | null>;
  /** Writes a line to the dialog's live status; with a reference, only while that request is shown. */
  say: (text: string, reference?: string) => void;
  /** Told whether the block shows, after every change: the dialog makes a wallet's button the main one. */
  shown?: (visible: boolean) => void;
}

let block: WalletBlock | undefined;
/** The phone wallet's module, once registered (Android only). */
let mobileWallet: typeof import("./mobileWallet.ts") | undefined;
/** One payment at a time: the buttons are marked busy and ignore clicks meanwhile. */
let paying = false;
/** The wallets the list shows, so a register event that changes nothing keeps the buttons (and focus). */
let shownWallets: readonly PayableWallet[] = [];

/** Shows the wallets that can pay, kept current as wallets come and go; `refresh` after the dialog changes. */
export function showWallets(target: WalletBlock): { refresh(): void } {
  if (!block) {
    const wallets = getWallets();
    wallets.on("register", render);
    wallets.on("unregister", render);
    offerMobileWallet();
  }
  // A list of its own (not the page's one dialog) starts empty.
  if (block?.list !== target.list) shownWallets = [];
  block = target;
  render();
  return { refresh: render };
}

/**
 * On Android, the phone's wallet app through Mobile Wallet Adapter (mobileWallet.ts, a chunk of its
 * own that no other platform fetches); it registers as any wallet, and `render` lists it. Android by
 * the user agent, as the adapter decides it: it associates only where the user agent says Android.
 */
function offerMobileWallet() {
  if (!/android/i.test(navigator.userAgent)) return;
  void import("./mobileWallet.ts").then(
    (module) => {
      mobileWallet = module;
      module.registerMobileWallet();
    },
    () => {},
  );
}

function render() {
  if (!block) return;
  const wallets = payableWallets(getWallets().get(), PAYMENT_CHAIN);
  const { container, list, item } = block;
  const changed =
    wallets.length !== shownWallets.length ||
    wallets.some(({ wallet, label, icon }, index) => {
      const shown = shownWallets[index];
      return wallet !== shown?.wallet || label !== shown.label || icon !== shown.icon;
    });
  if (changed) {
    shownWallets = wallets;
    list.replaceChildren(...wallets.map((wallet) => walletItem(item, wallet)));
  }
  container.hidden = wallets.length === 0 || !block.accepts();
  block.shown?.(!container.hidden);
}

function walletItem(template: HTMLTemplateElement, wallet: PayableWallet): Node {
  const fragment = template.content.cloneNode(true) as DocumentFragment;
  const button = fragment.querySelector("button") as HTMLButtonElement;
  const icon = fragment.querySelector("img") as HTMLImageElement;
  (fragment.querySelector("span") as HTMLElement).textContent = `Pay with ${wallet.label}`;
  if (wallet.icon) {
    icon.src = wallet.icon;
    icon.hidden = false;
  }
  if (paying) button.setAttribute("aria-disabled", "true");
  button.addEventListener("click", () => {
    if (!paying && block) void pay(wallet, block);
  });
  return fragment;
}

/** Marks every wallet button busy, or not; aria-disabled rather than disabled, so focus stays on the pressed one. */
function setBusy(busy: boolean) {
  paying = busy;
  for (const button of block?.list.querySelectorAll("button") ?? []) {
    if (busy) button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
  }
}

/**
 * Connects, makes or takes the request, fetches its transaction, and has the wallet sign and send it.
 * Each wallet call is bounded (WALLET_ANSWER_MS): past it the buttons come back, and the late answer
 * goes nowhere, so it neither goes on to pay nor frees the buttons of a payment begun since.
 */
async function pay(wallet: PayableWallet, { paymentFor, say }: WalletBlock) {
  setBusy(true);
  const name = wallet.label;
  let reference: string | undefined;
  try {
    if (mobileWallet && wallet.label === mobileWallet.MOBILE_WALLET_NAME) {
      const access = await mobileWallet.askLocalAccess();
      if (access !== "ready") {
        say(LOCAL_ACCESS_TEXT[access](name));
        return;
      }
    }
    say(walletProgressText.connecting(name));
    const { accounts } = await answerWithin(() => wallet.connect.connect(), WALLET_ANSWER_MS);
    const account = payingAccount(accounts, PAYMENT_CHAIN);
    if (!account) {
      say(NO_ACCOUNT_TEXT(name));
      return;
    }
    const request = await paymentFor();
    if (!request) return;
    reference = request.reference;
    say(walletProgressText.preparing, reference);
    const transaction = await fetchTransaction(request, account.address);
    if (typeof transaction === "string") {
      say(transaction, reference);
      return;
    }
    say(walletProgressText.approving(name), reference);
    await answerWithin(
      () => wallet.signAndSend.signAndSendTransaction({ account, chain: PAYMENT_CHAIN, transaction }),
      WALLET_ANSWER_MS,
    );
    say(walletProgressText.sent(name), reference);
  } catch (error) {
    say(walletFailureText(name, error), reference);
  } finally {
    setBusy(false);
  }
}

/** The transaction to sign, from the service; or the line that says why there is none. */
async function fetchTransaction(request: WalletPayment, account: string): Promise<Uint8Array | string> {
  let response: Response;
  try {
    response = await fetch(request.transactionEndpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ account }),
      credentials: "omit",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch {
    return PAYMENTS_UNAVAILABLE_TEXT;
  }
  const body: unknown = await response.json().catch(() => null);
  const bytes = response.ok ? base64Bytes((body as { transaction?: unknown } | null)?.transaction) : null;
  return bytes ?? transactionRefusalText(body);
}
