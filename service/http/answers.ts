/**
 * The service's JSON answers, written one way, and its one answer to a method a route does not
 * take (docs/design.md#9). Every JSON answer states its Content-Length: an answer to HEAD then
 * carries the GET's headers, length included, and keeps its connection (without a length Node
 * sends a GET chunked and closes the connection after a HEAD).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** What the read-only routes take: the pages, static files, winners, patrons, health. */
const READ_METHODS = "GET, HEAD";

/** `body` as JSON, `Cache-Control: no-store` unless `headers` says otherwise. */
export function answerJson(res: ServerResponse, status: number, body: object, headers: OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      ...headers,
      "Content-Length": Buffer.byteLength(text),
    })
    .end(text);
}

/** 405 `{"error":"method_not_allowed"}` with `Allow: <allow>`. */
export function refuseMethod(res: ServerResponse, allow: string): void {
  answerJson(res, 405, { error: "method_not_allowed" }, { Allow: allow });
}

/** Answers 405 (`Allow: GET, HEAD`) and returns true unless the request is a GET or a HEAD. */
export function refuseUnlessRead(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === "GET" || req.method === "HEAD") return false;
  refuseMethod(res, READ_METHODS);
  return true;
}
