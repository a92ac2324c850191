/**
 * The console's actions behind the door (docs/design.md#6a), for a signed-in session whose post came
 * from the console itself (console.ts checks both first):
 *
 *   POST /admin/bids/<id>/hide     reason?   hide a bid
 *   POST /admin/bids/<id>/restore  reason?   show it again
 *   POST /admin/blocks             name, reason?   block a name, any spelling (names/nameKey.ts): hides its bids
 *   POST /admin/blocks/remove      name, reason?   unblock it
 *   POST /admin/patrons/hide     name, reason?   hide a Verified Patron: every payment of the name (payments on)
 *   POST /admin/patrons/restore  name, reason?   show it again
 *   GET  /admin/events             a stream with one "change" event whenever bids or actions land
 *
 * Each action is one store call (its audit row commits with it) and answers with a redirect back
 * to the console, whose notice says what it did. Every instance hears the action and updates its
 * visitors' pages; the console's script follows the event stream.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { checkBidderName } from "../../src/lib/auction/bidRules.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../metrics.ts";
import type { PatronModeration, PaymentStore } from "../storage/payments.ts";
import type { BidStore, ModerationRequest } from "../storage/types.ts";
import { readForm } from "./forms.ts";
import type { Notice } from "./page.ts";
import type { Session } from "./session.ts";

const MAX_FORM_BYTES = 4096;
const MAX_REASON_CODE_POINTS = 200;
const FORBIDDEN_IN_REASON = /[\p{Cc}\p{Cf}\p{Cs}]/u;
const BID_ACTION = /^\/admin\/bids\/(\d{1,15})\/(hide|restore)$/;
const ID = /^\d{1,15}$/;
const PATRON_ACTION = /^\/admin\/patrons\/(hide|restore)$/;
/** Changes within this long reach the console as one event: a busy auction must not flood it. */
const CHANGE_BATCH_MS = 250;
/** A comment now and then keeps proxies from closing an idle stream. */
const KEEP_ALIVE_MS = 25_000;

/** `?before=<id>`: the console's page of bids below that id; null for the newest. */
export function readBefore(raw: string | null): number | null {
  return raw !== null && ID.test(raw) && Number(raw) > 0 ? Number(raw) : null;
}

const NOTICE_KINDS = new Set<Notice["kind"]>([
  "hidden",
  "restored",
  "no_such_bid",
  "already_hidden",
  "already_visible",
  "blocked",
  "unblocked",
  "already_blocked",
  "not_blocked",
  "invalid_name",
  "invalid_reason",
  "patron_hidden",
  "patron_restored",
  "patron_already_hidden",
  "patron_not_hidden",
  "no_such_patron",
]);
const BID_NOTICES = new Set<Notice["kind"]>(["hidden", "restored", "no_such_bid", "already_hidden", "already_visible"]);

/** The notice a redirect carries (`?done=<kind>&bid=<id>`); only known kinds, never free text. */
export function readNotice(query: URLSearchParams): Notice | null {
  const kind = query.get("done") as Notice["kind"] | null;
  if (kind === null || !NOTICE_KINDS.has(kind)) return null;
  if (!BID_NOTICES.has(kind)) return { kind } as Notice;
  const bidId = readBefore(query.get("bid"));
  return bidId === null ? null : ({ kind, bidId } as Notice);
}

type Reason = { ok: true; value: string | null } | { ok: false };

function readReason(form: URLSearchParams): Reason {
  const reason = (form.get("reason") ?? "").trim();
  if (reason === "") return { ok: true, value: null };
  if ([...reason].length > MAX_REASON_CODE_POINTS || FORBIDDEN_IN_REASON.test(reason)) return { ok: false };
  return { ok: true, value: reason };
}

interface ModerationDeskOptions {
  store: BidStore;
  logger: Logger;
  metrics: Metrics;
  /** The console's headers (policy, no-store, noindex), for every answer here too. */
  headers: Record<string, string>;
  now: () => number;
  /** Whether the session is still live in the database (not revoked, not expired). */
  isLive: (session: Session) => Promise<boolean>;
  /** The payments' store while payments are on: the patron actions exist only then. */
  payments?: PaymentStore | undefined;
  /** What else the console shows that may change (the pulse): each subscribed while a stream is open. */
  otherChanges?: ((listener: () => void) => () => void)[];
}

export function createModerationDesk({
  store,
  logger,
  metrics,
  headers,
  now,
  isLive,
  payments,
  otherChanges = [],
}: ModerationDeskOptions) {
  const isAction = (path: string) =>
    BID_ACTION.test(path) ||
    path === "/admin/blocks" ||
    path === "/admin/blocks/remove" ||
    (payments !== undefined && PATRON_ACTION.test(path));

  function redirect(res: ServerResponse, notice: Notice, before: string | null) {
    const query = new URLSearchParams({ done: notice.kind });
    if ("bidId" in notice) query.set("bid", String(notice.bidId));
    const page = readBefore(before);
    if (page !== null) query.set("before", String(page));
    res.writeHead(303, { ...headers, Location: `/admin?${query}` }).end();
  }

  async function act(request: ModerationRequest): Promise<Notice> {
    const result = await store.moderate(request);
    metrics.moderationActions.inc({ action: request.action, outcome: result.outcome });
    logger.info(
      { session: request.sessionId, action: request.action, bidId: "bidId" in request ? request.bidId : undefined },
      `moderation: ${request.action} ${result.outcome}`,
    );
    if ("bidId" in request) {
      const bidId = request.bidId;
      if (result.outcome === "no_such_bid") return { kind: "no_such_bid", bidId };
      if (request.action === "hide") return { kind: result.outcome === "done" ? "hidden" : "already_hidden", bidId };
      return { kind: result.outcome === "done" ? "restored" : "already_visible", bidId };
    }
    if (request.action === "block") return { kind: result.outcome === "done" ? "blocked" : "already_blocked" };
    return { kind: result.outcome === "done" ? "unblocked" : "not_blocked" };
  }

  /** A patron's hide or restore (docs/design.md#8): every payment of the name, with its audit row. */
  async function actOnPatron(paymentStore: PaymentStore, request: PatronModeration): Promise<Notice> {
    const result = await paymentStore.moderatePatron(request);
    metrics.moderationActions.inc({ action: request.action, outcome: result.outcome });
    logger.info(
      {
        session: request.sessionId,
        action: request.action,
        payments: result.outcome === "done" ? result.payments : 0,
        reason: request.reason ?? undefined,
      },
      `moderation: ${request.action} ${result.outcome}`,
    );
    if (result.outcome === "no_such_patron") return { kind: "no_such_patron" };
    if (request.action === "hide_patron") {
      return { kind: result.outcome === "done" ? "patron_hidden" : "patron_already_hidden" };
    }
    return { kind: result.outcome === "done" ? "patron_restored" : "patron_not_hidden" };
  }

  /** The request for a path and form, or the notice that refuses it; null: no such route. */
  function readRequest(
    path: string,
    form: URLSearchParams,
    session: Session,
  ): ModerationRequest | PatronModeration | Notice | null {
    const bidAction = BID_ACTION.exec(path);
    const patronAction = PATRON_ACTION.exec(path);
    const isBlock = path === "/admin/blocks" || path === "/admin/blocks/remove";
    if (!bidAction && !isBlock && !patronAction) return null;
    const reason = readReason(form);
    if (!reason.ok) return { kind: "invalid_reason" };
    const common = { reason: reason.value, sessionId: session.id };
    if (bidAction) {
      return { action: bidAction[2] as "hide" | "restore", bidId: Number(bidAction[1]), ...common };
    }
    const name = checkBidderName(form.get("name") ?? "");
    if (!name.ok) return { kind: "invalid_name" };
    if (patronAction) {
      return { action: patronAction[1] === "hide" ? "hide_patron" : "restore_patron", name: name.value, ...common };
    }
    return { action: path === "/admin/blocks" ? "block" : "unblock", bidderName: name.value, ...common };
  }

  return {
    /** Answers a moderation post; false when the path is none of them. */
    async handle(req: IncomingMessage, res: ServerResponse, path: string, session: Session): Promise<boolean> {
      if (!isAction(path)) return false;
      const form = await readForm(req, MAX_FORM_BYTES);
      if (!form) {
        res.writeHead(413, { ...headers, "Content-Type": "text/plain; charset=utf-8" }).end("That form was too large.");
        return true;
      }
      const request = readRequest(path, form, session);
      if (request === null) return false;
      if ("kind" in request) {
        const subject = path.includes("/bids/") ? "bid" : path.includes("/patrons/") ? "patron" : "name";
        metrics.moderationActions.inc({ action: subject, outcome: "invalid" });
        redirect(res, request, form.get("before"));
        return true;
      }
      // Only a patron's request carries `name`; isAction let it through only while payments are on.
      const notice = "name" in request ? payments && (await actOnPatron(payments, request)) : await act(request);
      if (!notice) return false;
      redirect(res, notice, form.get("before"));
      return true;
    },

    /**
     * Server-sent events: "change" whenever a bid or an action lands, until the session expires or
     * is revoked (docs/design.md#9): at once when any instance announces the revocation, and at the
     * next keep-alive should that announcement be lost with the LISTEN connection.
     */
    streamChanges(res: ServerResponse, session: Session): void {
      res.writeHead(200, { ...headers, "Content-Type": "text/event-stream; charset=utf-8" });
      res.write(": live\n\n");
      let batch: NodeJS.Timeout | undefined;
      const change = () => {
        batch ??= setTimeout(() => {
          batch = undefined;
          res.write("event: change\ndata:\n\n");
        }, CHANGE_BATCH_MS);
      };
      // Past its session the stream ends; the browser's reconnect then meets a 401 and stops.
      const end = () => res.end();
      const unsubscribes = [
        store.onBid(change),
        store.onModeration(change),
        ...otherChanges.map((subscribe) => subscribe(change)),
        store.admin.onSessionRevoked((id) => {
          if (id === null || id === session.id) end();
        }),
      ];
      const keepAlive = setInterval(() => {
        res.write(": keep-alive\n\n");
        isLive(session).then(
          (live) => {
            if (!live) end();
          },
          // The database unreachable: nothing is known, and nothing more is sent but keep-alives.
          () => {},
        );
      }, KEEP_ALIVE_MS);
      const expiry = setTimeout(end, Math.max(0, session.expiresAtMs - now()));
      res.once("close", () => {
        for (const unsubscribe of unsubscribes) unsubscribe();
        clearTimeout(batch);
        clearInterval(keepAlive);
        clearTimeout(expiry);
      });
    },
  };
}
