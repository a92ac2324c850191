/**
 * "Pay with <wallet>" in the buy dialog (docs/decisions/2026-11-27-wallet-standard-in-the-dialog.md).
 * paymentDialog.ts imports this when it first shows a request, so Wallet Standard is a chunk of its
 * own that no page loads before a dialog opens. It lists the installed wallets that can sign and
 * send a version 0 transaction (as they register, late ones too); a click connects, fetches the
 * request's Solana Pay transaction request from the service, and asks the wallet to sign and send
 * it. The service's watcher confirms the payment by its reference, exactly as a QR payment.
 */
import type { SolanaSignAndSendTransactionFeature } from "@solana/wallet-standard-features";
import { getWallets } from "@wallet-standard/app";
import type { Wallet } from "@wallet-standard/base";
import type { StandardConnectFeature } from "@wallet-standard/features";
import { PAYMENT_CHAIN, PAYMENTS_UNAVAILABLE_TEXT } from "../lib/payments.ts";
import {
  base64Bytes,
  CONNECT_FEATURE,
  NO_ACCOUNT_TEXT,
  payableWallets,
  payingAccount,
  SIGN_AND_SEND_FEATURE,
  transactionRefusalText,
  walletFailureText,
  walletIcon,
  walletProgressText,
} from "../lib/walletPayment.ts";

const FETCH_TIMEOUT_MS = 10_000;

export interface WalletPayment {
  reference: string;
  /** The service's transaction request route for it (http(s), not the `solana:` link). */
  transactionEndpoint: string;
}

export interface WalletBlock {
  /** Hidden while no installed wallet can pay. */
  container: HTMLElement;
  list: HTMLUListElement;
  item: HTMLTemplateElement;
  /** Writes a line to the dialog's live status while it shows this reference. */
  say: (reference: string, text: string) => void;
}

let block: WalletBlock | undefined;
let payment: WalletPayment | undefined;
/** One payment at a time: the buttons are marked busy and ignore clicks meanwhile. */
let paying = false;
/** The wallets the list shows, so a register event that changes nothing keeps the buttons (and focus). */
let shownWallets: readonly Wallet[] = [];

/** Shows the wallets that can pay this request, and keeps the list current as wallets come and go. */
export function showWallets(target: WalletBlock, request: WalletPayment) {
  if (!block) {
    const wallets = getWallets();
    wallets.on("register", render);
    wallets.on("unregister", render);
  }
  block = target;
  payment = request;
  shownWallets = [];
  render();
}

function render() {
  if (!block) return;
  const wallets = payableWallets(getWallets().get(), PAYMENT_CHAIN);
  if (wallets.length === shownWallets.length && wallets.every((wallet, index) => wallet === shownWallets[index]))
    return;
  shownWallets = wallets;
  const { container, list, item } = block;
  list.replaceChildren(...wallets.map((wallet) => walletItem(item, wallet)));
  container.hidden = wallets.length === 0;
}

function walletItem(template: HTMLTemplateElement, wallet: Wallet): Node {
  const fragment = template.content.cloneNode(true) as DocumentFragment;
  const button = fragment.querySelector("button") as HTMLButtonElement;
  const icon = fragment.querySelector("img") as HTMLImageElement;
  (fragment.querySelector("span") as HTMLElement).textContent = `Pay with ${wallet.name}`;
  const source = walletIcon(wallet);
  if (source) {
    icon.src = source;
    icon.hidden = false;
  }
  if (paying) button.setAttribute("aria-disabled", "true");
  button.addEventListener("click", () => {
    if (!paying && payment) void pay(wallet, payment);
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

async function pay(wallet: Wallet, request: WalletPayment) {
  const say = (text: string) => block?.say(request.reference, text);
  setBusy(true);
  try {
    say(walletProgressText.connecting(wallet.name));
    const connect = wallet.features[CONNECT_FEATURE] as StandardConnectFeature[typeof CONNECT_FEATURE];
    const { accounts } = await connect.connect();
    const account = payingAccount(accounts, PAYMENT_CHAIN);
    if (!account) {
      say(NO_ACCOUNT_TEXT(wallet.name));
      return;
    }
    say(walletProgressText.preparing);
    const transaction = await fetchTransaction(request, account.address);
    if (typeof transaction === "string") {
      say(transaction);
      return;
    }
    say(walletProgressText.approving(wallet.name));
    const signAndSend = wallet.features[
      SIGN_AND_SEND_FEATURE
    ] as SolanaSignAndSendTransactionFeature[typeof SIGN_AND_SEND_FEATURE];
    await signAndSend.signAndSendTransaction({ account, chain: PAYMENT_CHAIN, transaction });
    say(walletProgressText.sent(wallet.name));
  } catch (error) {
    say(walletFailureText(wallet.name, error));
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
