/**
 * The buy dialog and the live status of real purchases (docs/design.md#8). "Buy Nothing" imports
 * this on its first click when the service takes payments (and a page that finds pending requests
 * in localStorage imports it at load to resume them), so neither it nor the QR encoder is in the
 * page's first JavaScript. It drives PaymentDialog.astro's <dialog>.
 *
 * A request's status comes over the page's auction socket (watchPayment); while the socket is not
 * open the page asks GET /payments/<reference> every few seconds instead. On confirmation the spins
 * are credited through planPurchased (the wheel celebrates), once per reference on this browser.
 * A browser wallet pays through walletPay.ts, its own chunk, loaded when the dialog first opens.
 */
import { encode } from "uqr";
import { config } from "../config.ts";
import { blinkLinks } from "../lib/blink.ts";
import { addressGroups, formatCount, formatZn } from "../lib/format.ts";
import {
  addPending,
  claimCredit,
  confirmedToast,
  isSettled,
  openPendingFor,
  type PendingPayment,
  parseCreatedPayment,
  parsePaymentStatus,
  readPending,
  removePending,
  requestRefusalText,
  SLOW_CONFIRMATION_TEXT,
  statusText,
} from "../lib/paymentPage.ts";
import {
  PAYMENTS_PATH,
  PAYMENTS_UNAVAILABLE_TEXT,
  type PaymentErrorBody,
  type PaymentStatus,
  type PaymentStatusBody,
  TRANSACTION_REQUEST_SUFFIX,
} from "../lib/payments.ts";
import { PLAN_PURCHASED_EVENT, type PlanPurchasedDetail } from "../lib/purchase.ts";
import { serviceEndpoint } from "../lib/serviceEndpoint.ts";
import { $auction, connectAuction, watchPayment } from "../stores/auction.ts";
import { showToast } from "../stores/toasts.ts";
import type { WalletPayment } from "./walletPay.ts";

/** How often a page without an open socket asks for a pending request's status. */
export const STATUS_POLL_MS = 3_000;
const FETCH_TIMEOUT_MS = 10_000;
const CREDIT_LOCK = "nothingStorePaymentCredit";

export interface BuyTier {
  tierId: string;
  name: string;
  price: number;
  spins: number;
}

/**
 * localStorage, or nothing where it is blocked. Not spinsStorage.ts's browserStorage: sharing that
 * module would split it into a chunk of its own in the page's first JavaScript.
 */
const storage = (() => {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    return undefined;
  }
})();
const creditedThisPage = new Set<string>();
const endpoint = (path: string) => serviceEndpoint(config.realtimeUrl, path);

/** The requests this page follows, by reference, with their poll timers and the call that stops the watch. */
const followed = new Map<string, { unwatch: () => void; timer?: ReturnType<typeof setTimeout> }>();

function dialogParts() {
  const dialog = document.getElementById("payment-dialog") as HTMLDialogElement;
  const part = <T extends HTMLElement>(name: string) => dialog.querySelector(`[data-payment-${name}]`) as T;
  return {
    dialog,
    title: part("title"),
    selected: part("selected"),
    form: part<HTMLFormElement>("form"),
    create: part<HTMLButtonElement>("create"),
    pay: part("pay"),
    outcome: part("outcome"),
    outcomeText: part("outcome-text"),
    certificate: part<HTMLButtonElement>("certificate"),
    restart: part<HTMLButtonElement>("restart"),
    request: part("request"),
    qr: part("qr"),
    link: part<HTMLAnchorElement>("link"),
    transaction: part<HTMLDetailsElement>("transaction"),
    transactionLink: part<HTMLAnchorElement>("transaction-link"),
    wallets: part("wallets"),
    walletList: part<HTMLUListElement>("wallet-list"),
    walletItem: part<HTMLTemplateElement>("wallet-item"),
    note: part("note"),
    spins: part("spins"),
    status: part("status"),
    close: part<HTMLButtonElement>("close"),
    shareButton: part<HTMLButtonElement>("share-button"),
    shareDialTo: part<HTMLAnchorElement>("share-dial-to"),
    shareAction: part<HTMLAnchorElement>("share-action"),
    shareStatus: part("share-status"),
    address: dialog.querySelector("[data-address]") as HTMLElement,
    name: dialog.querySelector("input[name=name]") as HTMLInputElement,
  };
}

/** The QR code of `text` as SVG: dark modules on white, a 4-module quiet zone, drawn as one path. */
export function qrSvg(text: string): string {
  const { data, size } = encode(text, { ecc: "M", border: 4 });
  let path = "";
  data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`;
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="100%" height="100%" shape-rendering="crispEdges" aria-hidden="true"><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`;
}

/** A request's end as the dialog shows it: its pay instructions gone, the outcome at the top. */
type Outcome = Exclude<PaymentStatus, "waiting">;

/** The dialog shows one request (or the form for a new one) at a time, and that request's outcome once it has one. */
let shown: { tier: BuyTier; payment?: PendingPayment; outcome?: Outcome } | null = null;
let opener: HTMLElement | null = null;
let wired = false;

function wireDialog() {
  if (wired) return;
  wired = true;
  const parts = dialogParts();
  parts.close.addEventListener("click", () => parts.dialog.close());
  // Escape closes a modal dialog natively; every way out hands focus back to the button that opened it.
  parts.dialog.addEventListener("close", () => {
    shown = null;
    opener?.focus();
  });
  parts.form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (shown) void createRequest(shown.tier, parts.name.value, { focusLink: true });
  });
  // The receipt of a confirmed purchase: the tier's certificate, opened by its card's own button.
  parts.certificate.addEventListener("click", () => {
    const tierId = shown?.tier.tierId;
    parts.dialog.close();
    document.querySelector<HTMLButtonElement>(`[data-certificate="${tierId}"]`)?.click();
  });
  parts.restart.addEventListener("click", () => {
    if (!shown) return;
    shown = { tier: shown.tier };
    showForm();
    parts.name.focus();
  });
}

/** The form for a new request: the wallets (when any) first, then the request by QR code or link. */
function showForm() {
  const parts = dialogParts();
  parts.outcome.hidden = true;
  parts.pay.hidden = false;
  parts.form.hidden = false;
  parts.create.hidden = false;
  parts.request.hidden = true;
  parts.status.textContent = "";
  delete parts.status.dataset.outcome;
  walletList?.refresh();
}

/** Opens the dialog for a tier: its request still open on this browser, or the form for a new one. */
export function openPaymentDialog(tier: BuyTier, openedBy: HTMLElement) {
  wireDialog();
  opener = openedBy;
  const parts = dialogParts();
  const price = formatZn(tier.price);
  parts.title.textContent = `Buy ${tier.name}`;
  parts.selected.textContent = `You chose ${tier.name} for ${price}.`;
  parts.spins.textContent = `Once payment is confirmed, you'll receive +${formatCount(tier.spins)} lottery spins!`;
  const pending = openPendingFor(storage, tier.tierId, Date.now());
  shown = { tier };
  if (pending) showRequest(pending);
  else showForm();
  if (!parts.dialog.open) parts.dialog.showModal();
  (pending ? parts.link : parts.name).focus();
  if (pending) follow(pending);
  showShare(tier);
  void offerWallets();
}

/** The tier shown, as a blink: its links, and Share (the phone's sheet) or Copy of its dial.to link. */
function showShare(tier: BuyTier) {
  const { dialog, shareButton, shareDialTo, shareAction, shareStatus } = dialogParts();
  const base = dialog.dataset.blinkAction;
  if (!base) return;
  const url = new URL(base);
  url.searchParams.set("tier", tier.tierId);
  const links = blinkLinks(url.href);
  shareDialTo.href = links.dialTo;
  shareAction.href = links.action;
  shareStatus.textContent = "";
  const canShare = typeof navigator.share === "function";
  shareButton.textContent = canShare ? "Share link" : "Copy link";
  shareButton.onclick = async () => {
    if (canShare) {
      // A closed share sheet rejects (AbortError): nothing to say.
      await navigator.share({ title: `${tier.name}, at the Nothing Store`, url: links.dialTo }).catch(() => {});
      return;
    }
    const copied = await navigator.clipboard.writeText(links.dialTo).then(
      () => true,
      () => false,
    );
    shareStatus.textContent = copied ? "Link copied." : `Copy failed: the link is ${links.dialTo}`;
  };
}

function showRequest(payment: PendingPayment) {
  const parts = dialogParts();
  if (shown) shown.payment = payment;
  parts.outcome.hidden = true;
  parts.pay.hidden = false;
  parts.form.hidden = true;
  parts.create.hidden = true;
  parts.request.hidden = false;
  parts.qr.innerHTML = qrSvg(payment.url);
  parts.qr.dataset.url = payment.url;
  parts.link.href = payment.url;
  parts.address.replaceChildren(
    ...addressGroups(payment.recipient).map((group) => {
      const span = document.createElement("span");
      span.textContent = group;
      return span;
    }),
  );
  parts.status.textContent = statusText({ status: "waiting", priceAmount: payment.amount });
  delete parts.status.dataset.outcome;
  parts.note.textContent = payment.slow ? SLOW_CONFIRMATION_TEXT : "";
  parts.note.hidden = !payment.slow;
  // A service of an older version answers no transaction request: the QR and the first link only.
  parts.transaction.hidden = !payment.transactionUrl;
  parts.transactionLink.href = payment.transactionUrl ?? "#";
  // Its wallets' buttons follow once it is followed (follow), so a pressed one never blinks out.
}

let walletList: { refresh(): void } | undefined;

/**
 * "Pay with <wallet>" for the browser's wallets, in the form (a click less: the wallet's button makes
 * the request) and beside a request; without the chunk (offline), the form, QR and links remain.
 */
async function offerWallets() {
  const walletPay = await import("./walletPay.ts").catch(() => null);
  if (!walletPay) return;
  const parts = dialogParts();
  walletList = walletPay.showWallets({
    container: parts.wallets,
    list: parts.walletList,
    item: parts.walletItem,
    accepts: acceptsWalletPayment,
    paymentFor: walletPayment,
    say: sayAbout,
    shown: walletsShown,
  });
}

/** With a wallet to pay from, its button is the main one and the request by QR code or link the second way. */
function walletsShown(visible: boolean) {
  const { create } = dialogParts();
  create.classList.toggle("btn-primary", !visible);
  create.classList.toggle("btn-outline", visible);
  create.textContent = visible ? "Pay by QR code or link instead" : "Create payment request";
}

/**
 * Whether a wallet may pay what the dialog shows: the form, or a request still open. A request from
 * a service too old to answer transaction requests is paid by QR or link only.
 */
function acceptsWalletPayment(): boolean {
  if (!shown || shown.outcome) return false;
  const { payment } = shown;
  return !payment || (Boolean(payment.transactionUrl) && followed.has(payment.reference));
}

/** The request a wallet pays: the one shown, or one made now from the form as it stands. */
async function walletPayment(): Promise<WalletPayment | null> {
  if (!shown) return null;
  const payment = shown.payment ?? (await createRequest(shown.tier, dialogParts().name.value, { focusLink: false }));
  if (!payment?.transactionUrl) return null;
  const path = `${PAYMENTS_PATH}/${payment.reference}${TRANSACTION_REQUEST_SUFFIX}`;
  return { reference: payment.reference, transactionEndpoint: endpoint(path) };
}

/**
 * A wallet's progress: before its request exists, while the dialog is open; then while the dialog
 * shows that request and it has not settled (a confirmation may arrive before the wallet answers).
 */
function sayAbout(text: string, reference?: string) {
  const showing =
    reference === undefined ? acceptsWalletPayment() : shown?.payment?.reference === reference && !shown.outcome;
  if (showing && (reference === undefined || followed.has(reference))) dialogParts().status.textContent = text;
}

/** Makes a payment request for the tier and shows it; null when the service refused (the status says why). */
async function createRequest(
  tier: BuyTier,
  name: string,
  { focusLink }: { focusLink: boolean },
): Promise<PendingPayment | null> {
  const parts = dialogParts();
  const submit = parts.create;
  submit.disabled = true;
  parts.status.textContent = "";
  try {
    const body = name.trim() ? { tierId: tier.tierId, name: name.trim() } : { tierId: tier.tierId };
    let response: Response;
    try {
      response = await fetch(endpoint(PAYMENTS_PATH), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "omit",
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch {
      parts.status.textContent = PAYMENTS_UNAVAILABLE_TEXT;
      return null;
    }
    const data: unknown = await response.json().catch(() => null);
    const created = response.status === 201 ? parseCreatedPayment(data) : null;
    if (!created) {
      const error = (data as Partial<PaymentErrorBody> | null)?.error;
      parts.status.textContent = requestRefusalText(response.status, typeof error === "string" ? error : undefined);
      if (error === "name_not_allowed" || error === "invalid_name") parts.name.focus();
      return null;
    }
    const payment: PendingPayment = { ...created, price: tier.price };
    addPending(storage, payment, Date.now());
    // Still showing this tier's form (the visitor may have closed the dialog meanwhile).
    if (shown?.tier.tierId === tier.tierId && !shown.payment) {
      showRequest(payment);
      if (focusLink) parts.link.focus();
    }
    follow(payment);
    return payment;
  } finally {
    submit.disabled = false;
  }
}

/** Follows a request until it settles: over the socket, or by polling while the socket is not open. */
function follow(payment: PendingPayment) {
  if (followed.has(payment.reference)) return;
  connectAuction();
  followed.set(payment.reference, { unwatch: watchPayment(payment.reference, settle) });
  // Shown before it was followed: its wallets' buttons come now.
  if (shown?.payment?.reference === payment.reference) walletList?.refresh();
  schedulePoll(payment.reference);
}

function schedulePoll(reference: string) {
  const entry = followed.get(reference);
  if (!entry) return;
  entry.timer = setTimeout(async () => {
    // The socket tells within a second; the poll only covers a page without one.
    if ($auction.get().status !== "live") {
      const status = await fetchStatus(reference);
      if (status) settle(status);
    }
    schedulePoll(reference);
  }, STATUS_POLL_MS);
}

async function fetchStatus(reference: string): Promise<PaymentStatusBody | null> {
  try {
    const response = await fetch(endpoint(`${PAYMENTS_PATH}/${reference}`), {
      credentials: "omit",
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    return response.ok ? parsePaymentStatus(await response.json()) : null;
  } catch {
    return null;
  }
}

/** A request's status as the service tells it: shown, and once settled, credited or reported. */
function settle(status: PaymentStatusBody) {
  const entry = followed.get(status.reference);
  if (!entry) return;
  if (shown?.payment?.reference === status.reference) {
    // An expired request stays followed (a payment sent in time may still confirm it), so the
    // service's "waiting", sent before it expired and read after, must not cover the outcome.
    if (status.status !== "waiting") showOutcome(status.status, status);
    else if (!shown.outcome) dialogParts().status.textContent = statusText(status);
  }
  if (!isSettled(status.status)) return;
  clearTimeout(entry.timer);
  followed.delete(status.reference);
  entry.unwatch();
  removePending(storage, status.reference, Date.now());
  // A settled request takes no wallet payment: its wallets' buttons go.
  if (shown?.payment?.reference === status.reference) walletList?.refresh();
  if (status.status === "confirmed") void credit(status);
  else if (shown?.payment?.reference !== status.reference) {
    showToast({ title: statusText(status), variant: "destructive" });
  }
}

const OUTCOME_TEXTS: Record<Outcome, (spins: string) => string> = {
  confirmed: (spins) => `Your +${spins} lottery spins are in the Nothing Lottery. Nothing is on its way, as promised.`,
  underpaid: () => "No spins were added for it. This request takes no more payments.",
  expired: () =>
    "No payment arrived in time, and nothing was taken. A payment already sent is still confirmed here when it arrives.",
};

/**
 * The shown request's outcome, at the top: its pay instructions go (so nobody pays twice), the
 * outcome's line and action come, and focus moves to the status line, which says it.
 */
function showOutcome(outcome: Outcome, status: PaymentStatusBody) {
  if (!shown || shown.outcome === outcome) return;
  shown.outcome = outcome;
  const parts = dialogParts();
  parts.status.textContent = statusText(status);
  parts.status.dataset.outcome = outcome;
  parts.pay.hidden = true;
  parts.outcome.hidden = false;
  parts.outcomeText.textContent = OUTCOME_TEXTS[outcome](formatCount(status.spins));
  parts.certificate.hidden = outcome !== "confirmed";
  parts.restart.hidden = outcome !== "expired";
  walletList?.refresh();
  parts.status.focus();
}

/** Credits a confirmed request's spins once on this browser: one tab at a time decides. */
async function credit(status: PaymentStatusBody) {
  const claim = () => claimCredit(storage, status.reference, creditedThisPage);
  const claimed = navigator.locks ? await navigator.locks.request(CREDIT_LOCK, claim) : claim();
  if (!claimed) return;
  const detail: PlanPurchasedDetail = { planId: Number(status.tierId), spins: status.spins };
  window.dispatchEvent(new CustomEvent(PLAN_PURCHASED_EVENT, { detail }));
  showToast(confirmedToast(status.spins));
}

/** Follows every request this browser left pending (a reload, a reopened tab). */
export function resumePending() {
  for (const payment of readPending(storage, Date.now())) follow(payment);
}
