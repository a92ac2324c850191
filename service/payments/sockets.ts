/**
 * The live status of payments on the auction's socket (docs/design.md#8): a page sends
 * `{"type":"watchPayment","reference"}` and gets the request's status at once and at every change
 * (`{"type":"payment",...}`, GET /payments/<reference>'s answer); every socket gets
 * `{"type":"purchase","name","tierName"}` for each confirmed payment, from any instance's watcher.
 * After a database outage the watched requests are read again, so a change whose NOTIFY was missed
 * still reaches the page.
 */
import type { WebSocket } from "ws";
import type { ServerMessage } from "../../src/lib/auction/protocol.ts";
import { createRateLimiter } from "../http/rateLimiter.ts";
import { type Logger, loggedError } from "../logger.ts";
import { visitorUnanswered } from "../repeatedWarnings.ts";
import type { PaymentStore, StoredPayment } from "../storage/payments.ts";
import { statusBody } from "./requestRoutes.ts";

/** References one socket watches at most; a page has one or two pending at a time. */
const MAX_WATCHED_PER_SOCKET = 8;
/** Each new watch reads the database: a socket may start this many a minute, more are ignored. */
const WATCH_READS_PER_MINUTE = 16;

type SendMessage = (socket: WebSocket, message: ServerMessage) => void;

/** What the socket server tells the payments of its sockets. */
interface PaymentSocketHooks {
  opened(socket: WebSocket): void;
  closed(socket: WebSocket): void;
  watch(socket: WebSocket, reference: string): void;
}

export interface PaymentSocketsOptions {
  store: { payments: PaymentStore; onReadyChange(listener: (ready: boolean) => void): () => void };
  logger: Logger;
  /** Every committed outcome with its request (Payments.onOutcome). */
  onOutcome(listener: (payment: StoredPayment) => void): () => void;
}

/** What the socket server is handed: the hooks, and where to give its way of sending. */
export interface PaymentSocketLink {
  hooks: PaymentSocketHooks;
  attach(sender: SendMessage): void;
}

export function createPaymentSockets(options: PaymentSocketsOptions): PaymentSocketLink & { stop(): void } {
  const { store, logger } = options;
  let send: SendMessage = () => {};
  const sockets = new Set<WebSocket>();
  const watchers = new Map<string, Set<WebSocket>>();
  const watchedBy = new Map<WebSocket, Set<string>>();
  /** The status last sent for each watched reference, so a re-read after an outage sends only changes. */
  const lastSent = new Map<string, string>();
  const watchReads = createRateLimiter(WATCH_READS_PER_MINUTE, 60_000);
  const socketKeys = new WeakMap<WebSocket, string>();
  let nextSocketKey = 0;
  const keyOf = (socket: WebSocket) => {
    let key = socketKeys.get(socket);
    if (key === undefined) {
      key = String(nextSocketKey++);
      socketKeys.set(socket, key);
    }
    return key;
  };

  function tell(payment: StoredPayment, only?: WebSocket) {
    const message: ServerMessage = { type: "payment", ...statusBody(payment) };
    lastSent.set(payment.reference, `${payment.status} ${payment.signature}`);
    for (const socket of only ? [only] : (watchers.get(payment.reference) ?? [])) send(socket, message);
  }

  function unwatch(socket: WebSocket, reference: string) {
    watchedBy.get(socket)?.delete(reference);
    const watching = watchers.get(reference);
    watching?.delete(socket);
    if (watching?.size === 0) {
      watchers.delete(reference);
      lastSent.delete(reference);
    }
  }

  function forget(socket: WebSocket) {
    sockets.delete(socket);
    watchReads.sweep();
    for (const reference of watchedBy.get(socket) ?? []) unwatch(socket, reference);
    watchedBy.delete(socket);
  }

  const unsubscribeOutcomes = options.onOutcome((payment) => {
    if (watchers.has(payment.reference)) tell(payment);
    if (payment.status !== "confirmed") return;
    const purchase: ServerMessage = { type: "purchase", name: payment.name, tierName: statusBody(payment).tierName };
    for (const socket of sockets) send(socket, purchase);
  });
  const unsubscribeReady = store.onReadyChange((ready) => {
    if (!ready) return;
    for (const reference of watchers.keys()) {
      store.payments.find(reference).then(
        (payment) => {
          if (payment && lastSent.get(reference) !== `${payment.status} ${payment.signature}`) tell(payment);
        },
        (error: unknown) => visitorUnanswered(logger, "a watched payment, again", loggedError(error)),
      );
    }
  });

  const hooks: PaymentSocketHooks = {
    opened(socket) {
      sockets.add(socket);
    },
    closed: forget,
    watch(socket, reference) {
      const watched = watchedBy.get(socket) ?? new Set<string>();
      // Watched already: its changes come anyway. A flood of new references is cut short.
      if (watched.has(reference)) return;
      if (!watchReads.take(keyOf(socket))) {
        logger.debug({ reference }, "a socket starts too many payment watches: ignored");
        return;
      }
      // Past the bound the oldest is let go: a page cares for its newest requests.
      const oldest = watched.values().next().value;
      if (watched.size >= MAX_WATCHED_PER_SOCKET && oldest !== undefined) {
        unwatch(socket, oldest);
      }
      watched.add(reference);
      watchedBy.set(socket, watched);
      const watching = watchers.get(reference) ?? new Set<WebSocket>();
      watching.add(socket);
      watchers.set(reference, watching);
      // The status now: the page may have missed a change while it was away (a reload, a new tab).
      store.payments.find(reference).then(
        (payment) => {
          if (payment && watchedBy.get(socket)?.has(reference)) tell(payment, socket);
        },
        (error: unknown) => visitorUnanswered(logger, "a watched payment", loggedError(error)),
      );
    },
  };

  return {
    hooks,
    /** The socket server hands over how it sends (backpressure and all). */
    attach(sender: SendMessage) {
      send = sender;
    },
    stop() {
      unsubscribeOutcomes();
      unsubscribeReady();
      sockets.clear();
      watchers.clear();
      watchedBy.clear();
      lastSent.clear();
    },
  };
}
