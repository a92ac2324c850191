/** GET /healthz (the process answers), /readyz (it can take bids) and /metrics (Prometheus text). */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import type { RequestTarget } from "./requestTarget.ts";

export interface OperationsTarget {
  isReady(): boolean;
  registry: Registry;
}

/**
 * Answers the request when it is an operations route: true once answered, or the answer's promise;
 * false leaves it to the pages.
 */
export function handleOperations(
  req: IncomingMessage,
  res: ServerResponse,
  { path }: RequestTarget,
  target: OperationsTarget,
): boolean | Promise<void> {
  if (path !== "/healthz" && path !== "/readyz" && path !== "/metrics") return false;
  if (req.method !== "GET" && req.method !== "HEAD") {
    res
      .writeHead(405, { Allow: "GET, HEAD", "Content-Type": "application/json" })
      .end('{"error":"method_not_allowed"}');
    return true;
  }
  if (path === "/healthz") {
    json(res, 200, { status: "ok" });
  } else if (path === "/readyz") {
    const ready = target.isReady();
    json(res, ready ? 200 : 503, { status: ready ? "ready" : "unavailable" });
  } else {
    return target.registry.metrics().then(
      (text) => {
        res.writeHead(200, { "Content-Type": target.registry.contentType, "Cache-Control": "no-store" }).end(text);
      },
      () => json(res, 500, { error: "metrics_failed" }),
    );
  }
  return true;
}

function json(res: ServerResponse, status: number, body: object) {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" }).end(JSON.stringify(body));
}
