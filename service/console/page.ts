/**
 * The operator console's HTML (docs/design.md#6a): the sign-in page and, signed in, the bids with their
 * Hide and Restore buttons, the blocked names, the audit list and, while payments are on, the newest
 * payments with a patron's Hide and Restore (docs/design.md#8). Every value is written through
 * `html`, which escapes it: a bidder's name is text on this page, never markup.
 *
 * The forms work without script. One inline script (allowed by its hash, like the style) keeps
 * the lists live: it listens to /admin/events and, on each change, fetches this page again and
 * swaps the pulse (pulse.ts) and the lists in, keeping what the operator is typing, where the focus is
 * and which details are open.
 */
import { createHash } from "node:crypto";
import { TIERS } from "../../src/data/tiers.ts";
import { formatCents } from "../../src/lib/format.ts";
import { formatUnits } from "../payments/amounts.ts";
import { explorerUrl } from "../payments/settings.ts";
import type { SetAsideTransaction, StoredPayment } from "../storage/payments.ts";
import type { ModeratedBid, ModerationView } from "../storage/types.ts";

/** Escapes text for HTML content and quoted attribute values. */
function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** Markup that is already safe: what `html` returns, and what it inserts without escaping. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

type Interpolated = string | number | Html | Html[] | null | undefined | false;

/** A template whose interpolations are escaped, unless they are Html themselves. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let text = strings[0] ?? "";
  values.forEach((value, i) => {
    const part = Array.isArray(value)
      ? value.map(String).join("")
      : value instanceof Html
        ? value.text
        : value === null || value === undefined || value === false
          ? ""
          : escapeHtml(String(value));
    text += part + (strings[i + 1] ?? "");
  });
  return new Html(text);
}

// The browser's own light or dark colours: the store's palette lives in uno.config.ts, which the
// service (and its container) does not load.
const STYLE = `:root{color-scheme:light dark}body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
label,button{font:inherit}input{font:inherit;padding:.4rem}button{padding:.4rem .8rem;min-height:2.75rem}
form.stack label,form.stack input,form.stack button{display:block;margin:.25rem 0}form.stack input{width:100%;box-sizing:border-box;max-width:24rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem;border-bottom:1px solid;vertical-align:middle}
td form{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}[role=alert],[role=status]{font-weight:bold}
.hidden-bid{opacity:.75}.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}.pulse-axis{display:flex;justify-content:space-between;margin:0;font-size:.875rem}figure{margin:1rem 0}header{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap}.sign-out{display:flex;gap:.5rem;flex-wrap:wrap}`;

const LIVE_SCRIPT = `(()=>{
const LISTS=["pulse","bids","blocked","audit","payments"];let busy=false,again=false;
function swap(next,id){const now=document.getElementById(id),fresh=next.getElementById(id);if(!now||!fresh)return;
const active=now.contains(document.activeElement)?document.activeElement.id:null;
for(const input of now.querySelectorAll("input[id]")){const twin=fresh.querySelector("#"+CSS.escape(input.id));if(twin)twin.value=input.value;}
for(const details of now.querySelectorAll("details[id]")){const twin=fresh.querySelector("#"+CSS.escape(details.id));if(twin)twin.open=details.open;}
now.replaceWith(document.adoptNode(fresh));if(active)document.getElementById(active)?.focus();}
async function refresh(){if(busy){again=true;return;}busy=true;
try{do{again=false;const response=await fetch(location.href,{cache:"no-store"});if(!response.ok)return;
const next=new DOMParser().parseFromString(await response.text(),"text/html");for(const id of LISTS)swap(next,id);}while(again);}
catch{}finally{busy=false;}}
new EventSource("/admin/events").addEventListener("change",refresh);})();`;

const hashOf = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** The console's policy: its own style and script by hash, its forms and its event stream. */
export const CONSOLE_POLICY = `default-src 'none'; style-src ${hashOf(STYLE)}; script-src ${hashOf(LIVE_SCRIPT)}; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

function page(body: Html, options: { live?: boolean } = {}): string {
  const script = options.live ? html`<script>${new Html(LIVE_SCRIPT)}</script>` : "";
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>Operator console · The Nothing Store</title><style>${new Html(STYLE)}</style></head><body><main>${body}</main>${script}</body></html>`
    .text;
}

/** The sign-in form, with a problem (an alert) or what was just done (a status) above it. */
export function signInPage(problem?: string, done?: string): string {
  const alert = problem ? html`<p role="alert">${problem}</p>` : done ? html`<p role="status">${done}</p>` : "";
  return page(
    html`<h1>Operator console</h1>${alert}<form class="stack" method="post" action="/admin/login"><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus><button type="submit">Sign in</button></form>`,
  );
}

export function messagePage(message: string): string {
  return page(html`<h1>Operator console</h1><p>${message}</p>`);
}

/** What the operator's last action did, shown after the redirect back (fixed texts only). */
export type Notice =
  | { kind: "hidden" | "restored" | "no_such_bid" | "already_hidden" | "already_visible"; bidId: number }
  | {
      kind:
        | "blocked"
        | "unblocked"
        | "already_blocked"
        | "not_blocked"
        | "invalid_name"
        | "invalid_reason"
        | "patron_hidden"
        | "patron_restored"
        | "patron_already_hidden"
        | "patron_not_hidden"
        | "no_such_patron";
    };

function noticeText(notice: Notice): string {
  switch (notice.kind) {
    case "hidden":
      return `Bid ${notice.bidId} is hidden.`;
    case "restored":
      return `Bid ${notice.bidId} is shown again.`;
    case "no_such_bid":
      return `There is no bid ${notice.bidId}.`;
    case "already_hidden":
      return `Bid ${notice.bidId} was already hidden.`;
    case "already_visible":
      return `Bid ${notice.bidId} was not hidden.`;
    case "blocked":
      return "The name is blocked.";
    case "unblocked":
      return "The name is unblocked.";
    case "already_blocked":
      return "That name was already blocked.";
    case "not_blocked":
      return "That name was not blocked.";
    case "invalid_name":
      return "Use 1 to 40 characters, no control characters.";
    case "invalid_reason":
      return "A reason has at most 200 characters, no control characters.";
    case "patron_hidden":
      return "The patron is hidden from Verified Patrons.";
    case "patron_restored":
      return "The patron is shown in Verified Patrons again.";
    case "patron_already_hidden":
      return "That patron was already hidden.";
    case "patron_not_hidden":
      return "That patron was not hidden.";
    case "no_such_patron":
      return "No payment carries that name.";
  }
}

const PROBLEMS = new Set<Notice["kind"]>(["no_such_bid", "invalid_name", "invalid_reason", "no_such_patron"]);

const when = (iso: string) => html`<time datetime="${iso}">${iso.replace("T", " ").replace(/\.\d+Z$/, " UTC")}</time>`;

function bidRow(bid: ModeratedBid, before: number | null, automaticBidId: number | null): Html {
  const returnTo = before === null ? "" : html`<input type="hidden" name="before" value="${before}">`;
  let state: string;
  let action: Html;
  if (bid.nameBlocked) {
    state = bid.hidden ? "Hidden; name blocked" : "Name blocked";
    action = html`<span>Unblock the name to show it</span>`;
  } else {
    const verb = bid.hidden ? "restore" : "hide";
    const label = bid.hidden ? `Restore bid ${bid.id}` : `Hide bid ${bid.id}`;
    state = bid.hidden ? "Hidden" : "Shown";
    action = html`<form method="post" action="/admin/bids/${bid.id}/${verb}">${returnTo}<label class="sr-only" for="reason-${bid.id}">Reason for bid ${bid.id} (optional)</label><input id="reason-${bid.id}" name="reason" maxlength="200" autocomplete="off" placeholder="Reason (optional)"><button type="submit" id="${verb}-${bid.id}">${label}</button></form>`;
  }
  const rowClass = bid.hidden || bid.nameBlocked ? "hidden-bid" : "";
  // Whether the leader bids for itself, never how far (docs/decisions/2026-11-28-maximum-bids.md).
  const automatic = bid.id === automaticBidId ? html` <span class="automatic">bids automatically</span>` : "";
  return html`<tr id="bid-${bid.id}" class="${rowClass}"><td>${bid.id}</td><td>${bid.bidderName}${automatic}</td><td>${formatCents(bid.amountCents)}</td><td>${when(bid.createdAt)}</td><td>${state}</td><td>${action}</td></tr>`;
}

/** A signature is 87 or 88 characters: its ends tell it apart. */
const shortSignature = (signature: string) =>
  signature.length > 12 ? `${signature.slice(0, 6)}…${signature.slice(-6)}` : signature;

const tierName = (tierId: number) => TIERS.find((tier) => tier.id === tierId)?.name ?? `Tier ${tierId}`;

function paymentRow(payment: StoredPayment, explorerTxUrl: string): Html {
  const amount = (units: bigint | null) => (units === null ? "—" : `${formatUnits(units, payment.decimals)} $ZN`);
  const signature = payment.signature
    ? html`<a href="${explorerUrl(explorerTxUrl, payment.signature)}" rel="noopener noreferrer" target="_blank" title="${payment.signature}">${shortSignature(payment.signature)}</a>`
    : "—";
  let action: Html | string = "";
  if (payment.name !== null) {
    const verb = payment.hidden ? "restore" : "hide";
    const label = `${payment.hidden ? "Restore" : "Hide"} patron ${payment.name}`;
    action = html`<form method="post" action="/admin/patrons/${verb}"><input type="hidden" name="name" value="${payment.name}"><label class="sr-only" for="patron-reason-${payment.reference}">Reason for ${payment.name} (optional)</label><input id="patron-reason-${payment.reference}" name="reason" maxlength="200" autocomplete="off" placeholder="Reason (optional)"><button type="submit" id="${verb}-patron-${payment.reference}">${label}</button></form>`;
  }
  const name = payment.name === null ? "—" : html`<span>${payment.name}</span>${payment.hidden ? " (hidden)" : ""}`;
  return html`<tr id="payment-${payment.reference}" class="${payment.hidden ? "hidden-bid" : ""}"><td>${when(payment.createdAt)}</td><td>${tierName(payment.tierId)}</td><td>${amount(payment.priceBaseUnits)}</td><td>${payment.status}</td><td>${amount(payment.amountReceived)}</td><td>${name}</td><td>${signature}</td><td>${action}</td></tr>`;
}

/** Transactions the watcher could not judge: shown only when there are some, for the operator to settle by hand. */
function setAsideTable(setAside: SetAsideTransaction[], explorerTxUrl: string): Html | string {
  if (setAside.length === 0) return "";
  const rows = setAside.map(
    (transaction) =>
      html`<tr><td>${when(transaction.judgedAt)}</td><td><a href="${explorerUrl(explorerTxUrl, transaction.signature)}" rel="noopener noreferrer" target="_blank" title="${transaction.signature}">${shortSignature(transaction.signature)}</a></td><td id="set-aside-${transaction.signature}">${transaction.reference}</td><td>${transaction.detail}</td></tr>`,
  );
  return html`<table id="set-aside"><caption>Transactions set aside: the watcher could not judge them, so they credited nothing. Check each on the explorer.</caption><thead><tr><th scope="col">Set aside</th><th scope="col">Signature</th><th scope="col">Reference</th><th scope="col">Why</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function paymentsSection(payments: ConsolePayments): Html {
  const list =
    payments.latest.length === 0
      ? html`<p>No payments yet.</p>`
      : html`<table><caption>The newest ${payments.latest.length} payments, newest first</caption><thead><tr><th scope="col">Created</th><th scope="col">Tier</th><th scope="col">Price</th><th scope="col">Status</th><th scope="col">Received</th><th scope="col">Name</th><th scope="col">Signature</th><th scope="col">Action</th></tr></thead><tbody>${payments.latest.map(
          (payment) => paymentRow(payment, payments.explorerTxUrl),
        )}</tbody></table>`;
  return html`<section id="payments" aria-labelledby="payments-heading"><h2 id="payments-heading">Payments</h2>${setAsideTable(payments.setAside, payments.explorerTxUrl)}${list}</section>`;
}

/** The payments part of the console, present while payments are on. */
interface ConsolePayments {
  latest: StoredPayment[];
  /** Transactions the watcher set aside unjudged, newest first. */
  setAside: SetAsideTransaction[];
  /** The explorer's transaction page, `{signature}` replaced (settings.explorerTxUrl). */
  explorerTxUrl: string;
}

export interface ConsolePageInput {
  view: ModerationView;
  /** Null or absent while payments are off: no Payments section. */
  payments?: ConsolePayments | null;
  /** The page's `before` (null: the newest bids). */
  before: number | null;
  notice: Notice | null;
  /** The shop's pulse (pulse.ts), drawn first; absent: none. */
  pulse?: Html | null;
}

export function consolePage({ view, before, notice, payments = null, pulse = null }: ConsolePageInput): string {
  const noticeHtml = notice
    ? html`<p role="${PROBLEMS.has(notice.kind) ? "alert" : "status"}" id="notice" tabindex="-1" autofocus>${noticeText(notice)}</p>`
    : "";
  const oldest = view.bids.at(-1);
  const paging = html`<nav aria-label="Bid pages"><p>${
    before === null ? "" : html`<a href="/admin">Newest bids</a> `
  }${view.olderBids && oldest ? html`<a href="/admin?before=${oldest.id}">Older bids</a>` : ""}</p></nav>`;
  const bids =
    view.bids.length === 0
      ? html`<p>No bids${before === null ? " yet" : " here"}.</p>`
      : html`<table><caption>Bids, newest first</caption><thead><tr><th scope="col">Bid</th><th scope="col">Name</th><th scope="col">Amount</th><th scope="col">Placed</th><th scope="col">State</th><th scope="col">Action</th></tr></thead><tbody>${view.bids.map((bid) => bidRow(bid, before, view.automaticBidId))}</tbody></table>`;
  const blocked =
    view.blockedNames.length === 0
      ? html`<p>No names are blocked.</p>`
      : html`<ul>${view.blockedNames.map(
          (name) =>
            html`<li><span>${name.bidderName}</span> (since ${when(name.blockedAt)}) <form method="post" action="/admin/blocks/remove"><input type="hidden" name="name" value="${name.bidderName}"><button type="submit" id="unblock-${Buffer.from(name.bidderName).toString("base64url")}">Unblock ${name.bidderName}</button></form></li>`,
        )}</ul>`;
  const audit =
    view.audit.length === 0
      ? html`<p>No actions yet.</p>`
      : html`<table><caption>The newest ${view.audit.length} actions, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Reason</th><th scope="col">Session</th></tr></thead><tbody>${view.audit.map(
          (entry) =>
            html`<tr><td>${when(entry.at)}</td><td>${auditWhat(entry.action, entry.bidId, entry.bidderName)}</td><td>${entry.reason ?? ""}</td><td>${entry.sessionId}</td></tr>`,
        )}</tbody></table>`;
  return page(
    html`<header><h1>Operator console</h1><div class="sign-out"><form method="post" action="/admin/logout"><button type="submit">Sign out</button></form><form method="post" action="/admin/logout/everywhere"><button type="submit">Sign out everywhere</button></form></div></header>${noticeHtml}
${pulse}
<section id="bids" aria-labelledby="bids-heading"><h2 id="bids-heading">Bids</h2>${bids}${paging}</section>
<section aria-labelledby="block-heading"><h2 id="block-heading">Block a name</h2><form class="stack" method="post" action="/admin/blocks"><label for="block-name">Name to block</label><input id="block-name" name="name" required maxlength="40" autocomplete="off"><label for="block-reason">Reason <span class="optional">(optional)</span></label><input id="block-reason" name="reason" maxlength="200" autocomplete="off"><button type="submit">Block</button></form></section>
<section id="blocked" aria-labelledby="blocked-heading"><h2 id="blocked-heading">Blocked names</h2>${blocked}</section>
${payments ? paymentsSection(payments) : ""}
<section id="audit" aria-labelledby="audit-heading"><h2 id="audit-heading">Audit</h2>${audit}</section>`,
    { live: true },
  );
}

function auditWhat(action: string, bidId: number | null, bidderName: string): Html {
  switch (action) {
    case "hide":
      return html`Hid bid ${bidId} by <span>${bidderName}</span>`;
    case "restore":
      return html`Restored bid ${bidId} by <span>${bidderName}</span>`;
    case "block":
      return html`Blocked <span>${bidderName}</span>`;
    case "hide_patron":
      return html`Hid patron <span>${bidderName}</span>`;
    case "restore_patron":
      return html`Restored patron <span>${bidderName}</span>`;
    default:
      return html`Unblocked <span>${bidderName}</span>`;
  }
}
