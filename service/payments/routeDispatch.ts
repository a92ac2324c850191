/**
 * The payment routes (docs/design.md#8), each path to its family:
 *
 *   POST /payments, GET /payments/<reference>                      requestRoutes.ts
 *   GET  /payments/config, GET /payments/patrons                    patronRoutes.ts
 *   GET, POST /payments/<reference>/transaction                     transactionRequestRoutes.ts
 *
 * Every answer but the transaction request's carries CORS for the pages' origins (routeShared.ts).
 */
import { PAYMENTS_CONFIG_PATH, PAYMENTS_PATH, TRANSACTION_REQUEST_SUFFIX } from "../../src/lib/payments.ts";
import { PATRONS_PATH } from "../../src/lib/verifiedPatrons.ts";
import { refuseUnlessRead } from "../http/answers.ts";
import { createPaymentDesk, type PaymentDesk } from "./desk.ts";
import { createPatronRoutes } from "./patronRoutes.ts";
import { createPaymentTransactions } from "./paymentTransaction.ts";
import { createRequestRoutes } from "./requestRoutes.ts";
import {
  allowOrigin,
  createRouteShared,
  type PaymentRoute,
  type PaymentRoutesOptions,
  preflight,
} from "./routeShared.ts";
import { createTransactionRequestRoute } from "./transactionRequestRoutes.ts";

const isPaymentsPath = (path: string) => path === PAYMENTS_PATH || path.startsWith(`${PAYMENTS_PATH}/`);

/** The payment routes, and the desk through which the Actions routes make the same purchases. */
export function createPaymentRoutes(options: PaymentRoutesOptions): { route: PaymentRoute; desk: PaymentDesk } {
  const { allowedOrigins } = options;
  const shared = createRouteShared(options.logger);
  const requests = createRequestRoutes(options, shared);
  const patrons = createPatronRoutes(options, shared);
  // One builder for the transaction request and the Actions POST: the same transfer, the same refusals.
  const transactions = createPaymentTransactions(options, shared);
  const transactionRequest = createTransactionRequestRoute(options, shared, transactions);
  const desk = createPaymentDesk(options, shared, requests, transactions);

  const route: PaymentRoute = (req, res, target) => {
    const { path } = target;
    if (!isPaymentsPath(path)) return false;
    if (path.endsWith(TRANSACTION_REQUEST_SUFFIX) && path.split("/").length === 4) {
      transactionRequest(req, res, path.slice(PAYMENTS_PATH.length + 1, -TRANSACTION_REQUEST_SUFFIX.length));
      return true;
    }
    const allowed = allowOrigin(req, res, allowedOrigins);
    if (req.method === "OPTIONS") {
      preflight(res, allowed);
      return true;
    }
    if (path === PAYMENTS_PATH) {
      requests.request(req, res, allowed);
      return true;
    }
    if (refuseUnlessRead(req, res)) return true;
    if (path === PAYMENTS_CONFIG_PATH) patrons.config(res);
    else if (path === PATRONS_PATH) patrons.patrons(res);
    else requests.status(req, res, path.slice(PAYMENTS_PATH.length + 1));
    return true;
  };
  return { route, desk };
}
