/**
 * The payment desk: what another route family (service/actions/, the store as a blink) asks of
 * payments, so that its purchases are the same purchases as the pages' (docs/design.md#8): a
 * request made within POST /payments's limits, the transaction request's transfer, a request as
 * stored. The watcher confirms them all alike, exactly once.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Address } from "@solana/kit";
import type { Tier } from "../../src/data/tiers.ts";
import { clientAddress, limitKey } from "../http/clientAddress.ts";
import { addressGroups } from "../http/fairShares.ts";
import type { StoredPayment } from "../storage/payments.ts";
import type { PaymentTransaction, PaymentTransactions } from "./paymentTransaction.ts";
import { checkPatronName, type OpenedRequest, type RequestRoutes } from "./requestRoutes.ts";
import type { PaymentRoutesOptions, RouteShared } from "./routeShared.ts";
import { explorerUrl } from "./settings.ts";
import { ICON_PATH, requestOrigin } from "./transactionRequest.ts";

export interface PaymentDesk {
  /** Whether a payment can be taken now (chain and database reachable). */
  available(): boolean;
  /** A patron's name checked as POST /payments checks it: null is anonymous. */
  checkName(name: string): ReturnType<typeof checkPatronName>;
  /**
   * Why `account` could not pay `tier` (no or too few $ZN, frozen, the store's own, the RPC), read
   * before a request is made so that a refusal leaves none open; null when it could. Its reads
   * serve the transaction that follows.
   */
  refusalFor(req: IncomingMessage, account: Address, tier: Tier): ReturnType<PaymentTransactions["refusalFor"]>;
  /** Makes a request for this client, within POST /payments's rate limit, cap and fair shares. */
  open(req: IncomingMessage, tier: Tier, name: string | null): Promise<OpenedRequest>;
  /**
   * The unsigned transfer of `payment` from `account`, as the transaction request answers it, or why
   * not; its reads charged to this client's network, as the transaction request's are.
   */
  transaction(req: IncomingMessage, payment: StoredPayment, account: Address): Promise<PaymentTransaction>;
  /** False once this client asked for more statuses than GET /payments/<reference> answers it. */
  takeStatus(req: IncomingMessage): boolean;
  /** A request as stored, read once for askers at the same moment; null if none of this shop's. */
  find(reference: string): Promise<StoredPayment | null>;
  /** The site's square icon, absolute: on the pages' origin. */
  icon(req: IncomingMessage): string;
  /** The explorer's page of a transaction. */
  explorerUrl(signature: string): string;
  /** A read or write that threw: logged, and answered 503 unless an answer has started. */
  failed(res: ServerResponse, what: string, error: unknown): void;
}

type DeskOptions = Pick<
  PaymentRoutesOptions,
  | "allowedOrigins"
  | "settings"
  | "store"
  | "trustProxy"
  | "trustedProxies"
  | "available"
  | "nameFilter"
  | "statusLimiter"
  | "servesPages"
>;

export function createPaymentDesk(
  options: DeskOptions,
  shared: RouteShared,
  requests: Pick<RequestRoutes, "open">,
  transactions: PaymentTransactions,
): PaymentDesk {
  const { settings, store } = options;
  /** The client's network, charged for its reads of the chain. */
  const networkOf = (req: IncomingMessage) =>
    addressGroups(clientAddress(req, options.trustProxy, options.trustedProxies)).wide ?? undefined;
  return {
    available: options.available,
    checkName: (name) => checkPatronName(name, options.nameFilter),
    open: requests.open,
    refusalFor: (req, account, tier) => transactions.refusalFor(account, tier, networkOf(req)),
    transaction: (req, payment, account) => transactions.build(payment, account, networkOf(req)),
    takeStatus: (req) =>
      options.statusLimiter.take(limitKey(clientAddress(req, options.trustProxy, options.trustedProxies))),
    async find(reference) {
      const payment = await shared.coalesce(`status ${reference}`, () => store.find(reference));
      return payment && payment.mint === settings.mint && payment.recipient === settings.recipient ? payment : null;
    },
    icon(req) {
      // As the transaction request's label: the pages' origin when the service serves none.
      const pagesOrigin = options.servesPages ? null : options.allowedOrigins.find((origin) => origin !== "*");
      return `${pagesOrigin ?? requestOrigin(req, options.trustProxy, options.trustedProxies)}${ICON_PATH}`;
    },
    explorerUrl: (signature) => explorerUrl(settings.explorerTxUrl, signature),
    failed: shared.failed,
  };
}
