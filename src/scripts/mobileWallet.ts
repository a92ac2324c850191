/**
 * The phone's own wallet app as a Wallet Standard wallet, on Android (docs/decisions/2026-11-28-the-phones-wallet.md):
 * Solana's Mobile Wallet Adapter registers "Mobile Wallet Adapter", which the buy dialog lists as
 * any browser wallet. walletPay.ts imports this, on Android only, when the dialog first opens.
 * Paying opens the installed wallet through a `solana-wallet:` association link; the wallet then
 * answers on a local socket (ws://localhost:<port>, which the pages' CSP allows for this).
 */
import {
  createDefaultAuthorizationCache,
  createDefaultChainSelector,
  registerMwa,
  SolanaMobileWalletAdapterWalletName,
} from "@solana-mobile/wallet-standard-mobile";
import { PAYMENT_CHAIN } from "../lib/payments.ts";

/** Registers the adapter (walletPay.ts calls it once); it lists itself only where it can associate. */
export function registerMobileWallet() {
  registerMwa({
    appIdentity: { name: "The Nothing Store", uri: window.location.origin, icon: "favicon.svg" },
    // The wallet's authorization, kept in localStorage, so a second payment skips the approval to connect.
    authorizationCache: createDefaultAuthorizationCache(),
    chains: [PAYMENT_CHAIN],
    chainSelector: createDefaultChainSelector(),
    // No wallet app answered: the adapter's own modal would open under the modal buy dialog, so
    // nothing here; connect then fails, and the dialog's status line says so.
    onWalletNotFound: async () => {},
  });
}

/** The name the adapter registers under, so the dialog knows its button. */
export const MOBILE_WALLET_NAME: string = SolanaMobileWalletAdapterWalletName;

/** Where the page may reach the wallet app: "ready", or why not yet. */
/** Chrome's Local Network Access permission for the device's own address (not yet in the DOM's types). */
const LOOPBACK = { name: "loopback-network" as PermissionName };

type LocalAccess = "ready" | "asked" | "denied";

/**
 * Chrome asks before a page reaches apps on the device (Local Network Access), and the wallet app
 * answers on localhost. The adapter would ask through a modal of its own, appended to the body, so
 * under the modal buy dialog, where nobody can press it: the dialog asks instead, in the buyer's
 * press, by a request to localhost as the adapter's modal makes. Once allowed, the wallet app must
 * be opened by a fresh press (a link to an app needs one): "asked" tells the buyer to press again.
 */
export async function askLocalAccess(): Promise<LocalAccess> {
  let permission: PermissionStatus;
  try {
    permission = await navigator.permissions.query(LOOPBACK);
  } catch {
    return "ready"; // A browser that does not ask.
  }
  if (permission.state === "granted") return "ready";
  if (permission.state === "denied") return "denied";
  await fetch("http://localhost", { mode: "no-cors", credentials: "omit" }).catch(() => {});
  // Asked again: the buyer may have answered Chrome's prompt meanwhile.
  const answered = await navigator.permissions.query(LOOPBACK).catch(() => permission);
  return answered.state === "denied" ? "denied" : "asked";
}
