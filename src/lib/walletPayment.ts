/**
 * Paying from a wallet in the browser (docs/decisions/2026-11-27-wallet-standard-in-the-dialog.md),
 * without DOM: which Wallet Standard wallets can pay, with which account, and what the dialog says
 * at each step and when a step fails. The wallet is a stranger's code: its name, icon and errors
 * are read defensively.
 */
import type { Wallet, WalletAccount } from "@wallet-standard/base";
import { PAYMENTS_UNAVAILABLE_TEXT } from "./payments.ts";

export const CONNECT_FEATURE = "standard:connect";
export const SIGN_AND_SEND_FEATURE = "solana:signAndSendTransaction";

/** The service answers a version 0 transaction (service/payments/transactionRequest.ts). */
const TRANSACTION_VERSION = 0;
/** A wallet's error message is shown to the buyer only up to this long. */
const REASON_MAX_LENGTH = 120;
/** Wallet Standard icons are data: URIs of an image; anything else is not shown. */
const ICON_PATTERN = /^data:image\/(svg\+xml|webp|png|gif);base64,[A-Za-z0-9+/]+=*$/;

/** What a wallet needs to pay here: connect, then sign and send a version 0 transaction on the chain. */
export function canPay(wallet: Wallet, chain: string): boolean {
  const signAndSend = wallet.features[SIGN_AND_SEND_FEATURE] as
    | { supportedTransactionVersions?: readonly unknown[] }
    | undefined;
  return (
    wallet.features[CONNECT_FEATURE] !== undefined &&
    signAndSend?.supportedTransactionVersions?.includes(TRANSACTION_VERSION) === true &&
    wallet.chains.includes(chain as `${string}:${string}`)
  );
}

/** The installed wallets that can pay, in the order they registered, each name once. */
export function payableWallets(wallets: readonly Wallet[], chain: string): Wallet[] {
  const seen = new Set<string>();
  return wallets.filter((wallet) => {
    if (!canPay(wallet, chain) || seen.has(wallet.name)) return false;
    seen.add(wallet.name);
    return true;
  });
}

/** The first of the connected accounts that can sign and send on the chain. */
export function payingAccount(accounts: readonly WalletAccount[], chain: string): WalletAccount | undefined {
  return accounts.find(
    (account) =>
      account.features.includes(SIGN_AND_SEND_FEATURE) && account.chains.includes(chain as `${string}:${string}`),
  );
}

/** The wallet's icon when it is an image data: URI, as Wallet Standard asks; otherwise none. */
export function walletIcon(wallet: Pick<Wallet, "icon">): string | undefined {
  return typeof wallet.icon === "string" && ICON_PATTERN.test(wallet.icon) ? wallet.icon : undefined;
}

export const walletProgressText = {
  connecting: (wallet: string) => `Connecting to ${wallet}…`,
  preparing: "Preparing the payment…",
  approving: (wallet: string) => `Approve the payment in ${wallet}…`,
  sent: (wallet: string) => `Sent from ${wallet}. Waiting for the network to confirm it…`,
};

/** A refusal by the person (EIP-1193's 4001, which Solana wallets reuse) or a message that says so. */
export function isDeclined(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 4001 || (typeof message === "string" && /reject|denied|declined|cancel/i.test(message));
}

/** What the dialog says when a wallet did not pay: what happened, and that the QR and link still work. */
export function walletFailureText(wallet: string, error: unknown): string {
  if (isDeclined(error)) {
    return `You declined the payment in ${wallet}. Nothing was sent: pay with ${wallet} again, or with the QR code or link.`;
  }
  const message = (error as { message?: unknown } | null)?.message;
  const reason =
    typeof message === "string" && message.trim()
      ? ` (${message.trim().replace(/\s+/g, " ").slice(0, REASON_MAX_LENGTH)})`
      : "";
  return `${wallet} could not send the payment${reason}. Try again, or pay with the QR code or link.`;
}

export const NO_ACCOUNT_TEXT = (wallet: string) => `${wallet} has no Solana account to pay from.`;

/** The service's refusal of a transaction request, in its own words when it sent some. */
export function transactionRefusalText(body: unknown): string {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === "string" && message.length > 0 && message.length <= 200
    ? message
    : PAYMENTS_UNAVAILABLE_TEXT;
}

/** Base64 (the transaction request's answer) to bytes, or null when it is not base64. */
export function base64Bytes(text: unknown): Uint8Array | null {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]+=*$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}
