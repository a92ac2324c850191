/**
 * The store as a blink (docs/decisions/2026-11-28-the-store-as-a-blink.md), Solana Actions:
 *
 *   GET  /actions.json                   maps the home page to the buy action
 *   GET  /api/actions/buy[?tier=2]       the action: one button per tier (or the one), and a named purchase
 *   POST /api/actions/buy?tier=2[&name=] {"account"} → the unsigned transfer, and where to ask next
 *   POST /api/actions/buy/<reference>    {"account","signature"} → the receipt once the watcher confirms
 *
 * A purchase here is a payment request of the pages' kind, made through the payment desk
 * (payments/desk.ts): the same limits, the same transaction, the same watcher, credited once.
 * These paths, and no other, answer any origin (answers.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type {
  Action,
  ActionGetResponse,
  ActionsJson,
  CompletedAction,
  LinkedAction,
  NextActionPostRequest,
  TransactionResponse,
} from "@solana/actions-spec";
import { isAddress } from "@solana/kit";
import { TIERS, type Tier } from "../../src/data/tiers.ts";
import { BUY_ACTION_PATH } from "../../src/lib/blink.ts";
import { PAYMENT_LABEL, PAYMENTS_UNAVAILABLE_TEXT } from "../../src/lib/payments.ts";
import type { RequestTarget } from "../http/requestTarget.ts";
import type { Logger } from "../logger.ts";
import { formatUnits } from "../payments/amounts.ts";
import type { PaymentDesk } from "../payments/desk.ts";
import { readJsonBody } from "../payments/routeShared.ts";
import type { StoredPayment } from "../storage/payments.ts";
import { answerAction, preflightAction, refuseAction, refuseActionMethod } from "./answers.ts";

export const ACTIONS_JSON_PATH = "/actions.json";

/** How long the callback waits for the watcher before answering "waiting": a few of its polls. */
const CALLBACK_WAIT_MS = 8_000;
const CALLBACK_POLL_MS = 500;

const READ_METHODS = "GET, HEAD, OPTIONS";
const ACTION_METHODS = "GET, HEAD, POST, OPTIONS";
const CALLBACK_METHODS = "POST, OPTIONS";

/** The Actions routes' refusals, as ActionError messages. */
export const ACTION_REFUSALS = {
  paymentsOff: "The Nothing Store is not taking payments.",
  notFound: "There is no such action.",
  badAccount: 'Send {"account": "<your wallet\'s address>"}: a base58 Solana address of 32 bytes.',
  noTier: "Choose a tier: ?tier= is one of the store's tier ids.",
  unknownTier: "There is no such tier.",
  nameNotAString: "name must be text.",
  noPayment: "There is no such purchase.",
} as const;

const TITLE = "The Nothing Store";
const DESCRIPTION =
  "Buy absolutely nothing, paid in $ZN. Each tier is the same nothing at a different price; " +
  "a tier's own blink takes your name for the Wall of Fame's Verified Patrons.";

/** `Deluxe Nothing · 100 $ZN`: what a tier's button says. */
const tierLabel = (tier: Tier) => `${tier.name} · ${tier.price.toLocaleString("en-US")} $ZN`;

/** actions.json: only the home page is the shop; the leaderboard's link keeps its own preview. */
const ACTIONS_JSON: ActionsJson = { rules: [{ pathPattern: "/", apiPath: BUY_ACTION_PATH }] };

/** A tier's own action (`?tier=<id>`, as the buy dialog shares it): its button, and it named. */
function tierLinks(tier: Tier): LinkedAction[] {
  const href = `${BUY_ACTION_PATH}?tier=${tier.id}`;
  return [
    { type: "transaction", label: tierLabel(tier), href },
    {
      type: "transaction",
      label: "Buy as a Verified Patron",
      href: `${href}&name={name}`,
      parameters: [{ type: "text", name: "name", label: "Your name on the Wall of Fame", required: true }],
    },
  ];
}

/**
 * The store's action: a button per tier and nothing else. Dialect's client (@dialectlabs/blinks
 * 0.22.5) shows an action's form of two fields or more in place of its buttons, so a named
 * purchase with a tier select would hide all six; a tier's own action names its buyer instead.
 */
function buyLinks(): LinkedAction[] {
  return TIERS.map(
    (tier): LinkedAction => ({
      type: "transaction",
      label: tierLabel(tier),
      href: `${BUY_ACTION_PATH}?tier=${tier.id}`,
    }),
  );
}

/** The POST's JSON object ({} for JSON that is not one), or null once its refusal is sent. */
async function readActionBody(req: IncomingMessage, res: ServerResponse): Promise<object | null> {
  const body = await readJsonBody(req);
  if (!body.ok) {
    const headers: Record<string, string> = body.status === 413 ? { Connection: "close" } : {};
    refuseAction(res, body.status, body.error.message ?? body.error.error, headers);
    return null;
  }
  return typeof body.value === "object" && body.value !== null ? body.value : {};
}

export interface ActionRoutesOptions {
  /** The payment desk; absent while payments are off (SOLANA_RPC_URL unset). */
  desk: PaymentDesk | undefined;
  logger: Logger;
  now(): number;
}

export type ActionRoute = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => boolean;

const isActionPath = (path: string) =>
  path === ACTIONS_JSON_PATH || path === BUY_ACTION_PATH || path.startsWith(`${BUY_ACTION_PATH}/`);

export function createActionRoutes(options: ActionRoutesOptions): ActionRoute {
  const { desk, logger } = options;

  function getAction(req: IncomingMessage, res: ServerResponse, target: RequestTarget, desk: PaymentDesk) {
    const tierId = target.query.get("tier");
    const tier = tierId === null ? undefined : TIERS.find((candidate) => String(candidate.id) === tierId);
    if (tierId !== null && !tier) {
      refuseAction(res, 404, ACTION_REFUSALS.unknownTier);
      return;
    }
    const available = desk.available();
    const body: ActionGetResponse = {
      type: "action",
      icon: desk.icon(req),
      title: tier ? `${tier.name} · ${TITLE}` : TITLE,
      description: tier ? tier.description : DESCRIPTION,
      label: "Buy Nothing",
      links: { actions: tier ? tierLinks(tier) : buyLinks() },
      // Unavailable for now (the chain or the database unreachable): shown, its buttons off, saying why.
      ...(available ? {} : { disabled: true, error: { message: PAYMENTS_UNAVAILABLE_TEXT } }),
    };
    answerAction(res, 200, body);
  }

  async function buy(req: IncomingMessage, res: ServerResponse, target: RequestTarget, desk: PaymentDesk) {
    const tierId = target.query.get("tier");
    if (tierId === null || tierId === "") {
      req.resume();
      refuseAction(res, 400, ACTION_REFUSALS.noTier);
      return;
    }
    const tier = TIERS.find((candidate) => String(candidate.id) === tierId);
    if (!tier) {
      req.resume();
      refuseAction(res, 422, ACTION_REFUSALS.unknownTier);
      return;
    }
    const body = await readActionBody(req, res);
    if (!body) return;
    const { account, data } = body as { account?: unknown; data?: unknown };
    if (typeof account !== "string" || !isAddress(account)) {
      refuseAction(res, 400, ACTION_REFUSALS.badAccount);
      return;
    }
    // The name comes in the href (a parameter filled in by the client) or, from newer clients, in data.
    const fromData = typeof data === "object" && data !== null ? (data as Record<string, unknown>).name : undefined;
    const rawName = target.query.get("name") ?? fromData ?? "";
    if (typeof rawName !== "string") {
      refuseAction(res, 400, ACTION_REFUSALS.nameNotAString);
      return;
    }
    const name = desk.checkName(rawName);
    if (!name.ok) {
      refuseAction(res, name.status, name.error.message ?? name.error.error);
      return;
    }
    // A wallet that cannot pay is told before a request is made: none is left open in its share.
    const cannotPay = await desk.refusalFor(req, account, tier);
    if (cannotPay) {
      refuseAction(res, cannotPay.status, cannotPay.error.message ?? cannotPay.error.error, cannotPay.headers);
      return;
    }
    const opened = await desk.open(req, tier, name.name);
    if (!opened.ok) {
      refuseAction(res, opened.status, opened.error.message ?? opened.error.error, opened.headers);
      return;
    }
    const { payment } = opened;
    const built = await desk.transaction(req, payment, account);
    if (!built.ok) {
      refuseAction(res, built.status, built.error.message ?? built.error.error, built.headers);
      return;
    }
    logger.info({ reference: payment.reference, tierId: tier.id }, "blink transaction answered");
    const answer: TransactionResponse = {
      type: "transaction",
      transaction: built.transaction,
      message: built.message,
      links: { next: { type: "post", href: `${BUY_ACTION_PATH}/${payment.reference}` } },
    };
    answerAction(res, 200, answer);
  }

  /** The payment, once it no longer waits or the wait (`waitFor` ms) is over. */
  async function settled(desk: PaymentDesk, reference: string, waitFor: number): Promise<StoredPayment | null> {
    const until = options.now() + waitFor;
    for (;;) {
      const payment = await desk.find(reference);
      if (payment?.status !== "waiting" || options.now() + CALLBACK_POLL_MS > until) return payment;
      await sleep(CALLBACK_POLL_MS);
    }
  }

  async function callback(req: IncomingMessage, res: ServerResponse, reference: string, desk: PaymentDesk) {
    if (!desk.takeStatus(req)) {
      req.resume();
      refuseAction(res, 429, "Too many requests. Try again in a minute.", { "Retry-After": "60" });
      return;
    }
    const body = await readActionBody(req, res);
    if (!body) return;
    const { account, signature } = body as { [K in keyof NextActionPostRequest]?: unknown };
    if (typeof account !== "string" || !isAddress(account)) {
      refuseAction(res, 400, ACTION_REFUSALS.badAccount);
      return;
    }
    // Not base58 of 32 bytes: no request of ours, and no query for it.
    // A client that sent the transaction (its signature given) is asked to wait for the watcher's few
    // polls; without one there is nothing to wait for.
    const payment = isAddress(reference) ? await settled(desk, reference, signature ? CALLBACK_WAIT_MS : 0) : null;
    if (!payment) {
      refuseAction(res, 404, ACTION_REFUSALS.noPayment);
      return;
    }
    answerAction(res, 200, nextAction(req, desk, payment));
  }

  return (req, res, target) => {
    const { path } = target;
    if (!isActionPath(path)) return false;
    const method = req.method ?? "GET";
    if (method === "OPTIONS") {
      preflightAction(res);
      return true;
    }
    if (!desk) {
      req.resume();
      refuseAction(res, 404, ACTION_REFUSALS.paymentsOff);
      return true;
    }
    const failed = (error: unknown) => desk.failed(res, "a blink", error);
    if (path === ACTIONS_JSON_PATH) {
      if (method === "GET" || method === "HEAD") answerAction(res, 200, ACTIONS_JSON);
      else refuseActionMethod(res, READ_METHODS);
    } else if (path === BUY_ACTION_PATH) {
      if (method === "GET" || method === "HEAD") getAction(req, res, target, desk);
      else if (method === "POST") buy(req, res, target, desk).catch(failed);
      else refuseActionMethod(res, ACTION_METHODS);
    } else {
      const reference = path.slice(BUY_ACTION_PATH.length + 1);
      if (reference.includes("/")) refuseAction(res, 404, ACTION_REFUSALS.notFound);
      else if (method === "POST") callback(req, res, reference, desk).catch(failed);
      else refuseActionMethod(res, CALLBACK_METHODS);
    }
    if (method !== "POST") req.resume();
    return true;
  };
}

/** What the callback answers: the receipt once confirmed; else the wait, or how the purchase ended. */
function nextAction(req: IncomingMessage, desk: PaymentDesk, payment: StoredPayment): Action | CompletedAction {
  const tier = TIERS.find((candidate) => candidate.id === payment.tierId);
  const tierName = tier?.name ?? "Nothing";
  const price = formatUnits(payment.priceBaseUnits, payment.decimals);
  const icon = desk.icon(req);
  const receipt = payment.signature === null ? "" : ` Receipt: ${desk.explorerUrl(payment.signature)}`;
  switch (payment.status) {
    case "confirmed":
      return {
        type: "completed",
        icon,
        title: `Paid: ${tierName}`,
        description:
          `${price} $ZN, confirmed on chain. You now own nothing, officially.` +
          (payment.name === null ? "" : ` ${payment.name} joins the Verified Patrons.`) +
          receipt,
        label: "Bought",
      };
    case "waiting":
      return {
        type: "action",
        icon,
        title: `Waiting for ${PAYMENT_LABEL}`,
        description: `Your ${price} $ZN for ${tierName} is not confirmed yet. The store counts it as soon as the chain does, until ${payment.expiresAt}.`,
        label: "Waiting for confirmation",
        disabled: true,
      };
    case "underpaid":
      return {
        type: "action",
        icon,
        title: `Paid short: ${tierName}`,
        description: `The payment arrived short of ${price} $ZN and bought nothing (not even nothing).${receipt}`,
        label: "Paid short",
        disabled: true,
        error: { message: "This purchase was paid short of its price." },
      };
    case "expired":
      return {
        type: "action",
        icon,
        title: `Expired: ${tierName}`,
        description: "No payment arrived before the request expired. Nothing was taken; buy again from the store.",
        label: "Expired",
        disabled: true,
        error: { message: "This purchase expired unpaid." },
      };
  }
}
