/**
 * The operations routes: GET /healthz (the process answers) and /readyz (it can take bids) on the
 * public port, for load balancers; GET /metrics (Prometheus text) only on the metrics listener
 * (METRICS_PORT, docs/design.md#9).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { answerJson, refuseUnlessRead } from "./http/answers.ts";
import type { RequestTarget } from "./http/requestTarget.ts";

const METRICS_PATH = "/metrics";

interface HealthTarget {
  isReady(): boolean;
}

/** Answers /healthz and /readyz (true once answered); false leaves any other path to the next route. */
export function handleHealth(
  req: IncomingMessage,
  res: ServerResponse,
  { path }: RequestTarget,
  target: HealthTarget,
): boolean {
  if (path !== "/healthz" && path !== "/readyz") return false;
  if (refuseUnlessRead(req, res)) return true;
  if (path === "/healthz") {
    answerJson(res, 200, { status: "ok" });
  } else {
    const ready = target.isReady();
    answerJson(res, ready ? 200 : 503, { status: ready ? "ready" : "unavailable" });
  }
  return true;
}

/** Answers /metrics: true once answered, or the answer's promise; false leaves any other path. */
export function handleMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  { path }: RequestTarget,
  registry: Registry,
): boolean | Promise<void> {
  if (path !== METRICS_PATH) return false;
  if (refuseUnlessRead(req, res)) return true;
  return registry.metrics().then(
    (text) => {
      res
        .writeHead(200, {
          "Content-Type": registry.contentType,
          "Cache-Control": "no-store",
          "Content-Length": Buffer.byteLength(text),
        })
        .end(text);
    },
    () => answerJson(res, 500, { error: "metrics_failed" }),
  );
}
