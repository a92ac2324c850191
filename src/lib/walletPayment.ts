/**
 * Paying from a wallet in the browser (docs/decisions/2026-11-27-wallet-standard-in-the-dialog.md),
 * without DOM: which Wallet Standard wallets can pay, with which account, and what the dialog says
 * at each step and when a step fails. The wallet is a stranger's code: its name, icon and errors
 * are read defensively.
 */
import type { SolanaSignAndSendTransactionFeature } from "@solana/wallet-standard-features";
import type { Wallet, WalletAccount } from "@wallet-standard/base";
import type { StandardConnectFeature } from "@wallet-standard/features";
import { PAYMENTS_UNAVAILABLE_TEXT } from "./payments.ts";

const CONNECT_FEATURE = "standard:connect";
const SIGN_AND_SEND_FEATURE = "solana:signAndSendTransaction";

/** The service answers a version 0 transaction (service/payments/transactionRequest.ts). */
const TRANSACTION_VERSION = 0;
/** A wallet's error message is shown to the buyer only up to this long. */
const REASON_MAX_LENGTH = 120;
/** A wallet's name is written up to this many characters, the ellipsis included. */
export const WALLET_NAME_MAX_LENGTH = 32;
/**
 * How long a wallet may take to answer connect or sign-and-send, a person reading and approving in
 * it; then the buttons come back. Longer than the transaction's blockhash lives (150 blocks, about
 * a minute), so a transaction approved after it no longer lands.
 */
export const WALLET_ANSWER_MS = 120_000;
/** Wallet Standard icons are data: URIs of an image; anything else is not shown. */
const ICON_PATTERN = /^data:image\/(svg\+xml|webp|png|gif);base64,[A-Za-z0-9+/]+=*$/;

/** The parts of a wallet the dialog calls: its own feature objects, each called as a method of it. */
type ConnectFeature = StandardConnectFeature[typeof CONNECT_FEATURE];
type SignAndSendFeature = SolanaSignAndSendTransactionFeature[typeof SIGN_AND_SEND_FEATURE];

/** A wallet as the dialog lists it, read once when listed. */
export interface PayableWallet {
  wallet: Wallet;
  /** Its name on one line, cut, and numbered after the first of a name: unique in the list. */
  label: string;
  icon: string | undefined;
  connect: ConnectFeature;
  signAndSend: SignAndSendFeature;
}

/**
 * What the dialog needs of a wallet to pay here: a name, connect, and sign and send of a version 0
 * transaction on the chain. Read in one try: a wallet whose getters or features throw is not
 * listed, and the others are. Its accounts are not read (connect answers them).
 */
function readPayable(wallet: Wallet, chain: string): (Omit<PayableWallet, "label"> & { name: string }) | null {
  try {
    const { name, chains, features } = wallet;
    const connect = features[CONNECT_FEATURE] as Partial<ConnectFeature> | undefined;
    const signAndSend = features[SIGN_AND_SEND_FEATURE] as Partial<SignAndSendFeature> | undefined;
    const versions: unknown = signAndSend?.supportedTransactionVersions;
    const payable =
      typeof name === "string" &&
      Array.isArray(chains) &&
      chains.includes(chain) &&
      typeof connect?.connect === "function" &&
      typeof signAndSend?.signAndSendTransaction === "function" &&
      Array.isArray(versions) &&
      versions.includes(TRANSACTION_VERSION);
    const shortName = payable ? walletName(name) : "";
    if (!shortName) return null;
    return {
      wallet,
      name: shortName,
      icon: walletIcon(wallet),
      connect: connect as ConnectFeature,
      signAndSend: signAndSend as SignAndSendFeature,
    };
  } catch {
    return null;
  }
}

/**
 * The installed wallets that can pay, in the order they registered. Two of one name are both
 * listed, the second as "<name> (2)": an extension cannot hide another by taking its name.
 */
export function payableWallets(wallets: readonly Wallet[], chain: string): PayableWallet[] {
  const labels = new Set<string>();
  const listed: PayableWallet[] = [];
  for (const wallet of wallets) {
    const payable = readPayable(wallet, chain);
    if (!payable) continue;
    const { name, ...parts } = payable;
    let label = name;
    for (let number = 2; labels.has(label); number++) label = `${name} (${number})`;
    labels.add(label);
    listed.push({ ...parts, label });
  }
  return listed;
}

/** Characters that only steer or hide text (controls, bidi overrides), left out of a wallet's name. */
const INVISIBLE = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;

/** A wallet's name as the dialog writes it: on one line, without invisible characters, cut with an ellipsis. */
export function walletName(name: string): string {
  const characters = Array.from(
    name
      .replace(INVISIBLE, (character) => (/\s/.test(character) ? " " : ""))
      .replace(/\s+/g, " ")
      .trim(),
  );
  if (characters.length <= WALLET_NAME_MAX_LENGTH) return characters.join("");
  return `${characters
    .slice(0, WALLET_NAME_MAX_LENGTH - 1)
    .join("")
    .trimEnd()}…`;
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

/** A wallet that did not answer within WALLET_ANSWER_MS. */
export class WalletDidNotAnswer extends Error {}

/** instanceof, which a wallet's own error (a Proxy) can make throw. */
function didNotAnswer(error: unknown): boolean {
  try {
    return error instanceof WalletDidNotAnswer;
  } catch {
    return false;
  }
}

/**
 * The wallet's answer to `call`, or a WalletDidNotAnswer rejection once `ms` pass without one. A late
 * answer goes nowhere: whoever awaited this has moved on. `call` runs at once, within the click.
 */
export function answerWithin<T>(call: () => PromiseLike<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new WalletDidNotAnswer()), ms);
    try {
      Promise.resolve(call())
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    } catch (error) {
      clearTimeout(timer);
      reject(error);
    }
  });
}

/** A field of a thrown value, or undefined when there is none or reading it throws (the wallet's own error). */
function errorField(error: unknown, key: "code" | "message"): unknown {
  try {
    return (error as Record<string, unknown> | null | undefined)?.[key];
  } catch {
    return undefined;
  }
}

/** A refusal by the person (EIP-1193's 4001, which Solana wallets reuse) or a message that says so. */
export function isDeclined(error: unknown): boolean {
  const message = errorField(error, "message");
  return (
    errorField(error, "code") === 4001 ||
    (typeof message === "string" && /reject|denied|declined|cancel/i.test(message))
  );
}

/**
 * The network refused the transaction as too old: its blockhash lands for about a minute, and the
 * buyer took longer to approve. Nothing moved; asking again builds one with a fresh blockhash.
 */
function isExpired(error: unknown): boolean {
  const message = errorField(error, "message");
  return typeof message === "string" && /blockhash\s+not\s+found|block\s*height\s+exceeded|expired/i.test(message);
}

/** What the dialog says when a wallet did not pay: what happened, and that the QR and link still work. */
export function walletFailureText(wallet: string, error: unknown): string {
  if (didNotAnswer(error)) {
    return `${wallet} did not answer. Try again, or pay with the QR code or link.`;
  }
  if (isExpired(error)) {
    return `The payment waited too long in ${wallet} and expired on the network. Nothing was sent: pay with ${wallet} again for a fresh one.`;
  }
  if (isDeclined(error)) {
    return `You declined the payment in ${wallet}. Nothing was sent: pay with ${wallet} again, or with the QR code or link.`;
  }
  const message = errorField(error, "message");
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
