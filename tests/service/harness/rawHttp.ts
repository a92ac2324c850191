/**
 * HTTP over a raw TCP socket, for hostile-input tests: the request line and headers go out byte
 * for byte as given (a target like `//[` or `/%` that fetch would refuse or rewrite reaches the
 * server as is), and the answer is read until the server closes the connection (or, for an
 * accepted upgrade, until its head), within a time limit.
 *
 *   const answer = await rawRequest(port, "GET //x:99999 HTTP/1.1", { Host: "127.0.0.1" });
 *   // { status: 400, headers: { "content-type": "application/json", ... }, body: Buffer, closedBy: "server" }
 */
import { connect } from "node:net";

export interface RawAnswer {
  /** The status code, or 0 when no status line came back (the connection was cut first). */
  status: number;
  /** Lower-cased names; the last value of a repeated header. */
  headers: Record<string, string>;
  /** The body, with chunked transfer coding undone. */
  body: Buffer;
  /** The server closed (or reset) the connection, or the time limit cut it. */
  closedBy: "server" | "timeout";
  /** The bytes as they came. */
  raw: Buffer;
}

export const RAW_TIMEOUT_MS = 5_000;

/**
 * Sends `requestLine`, the headers (each `name: value` as is, Connection: close added unless
 * given) and `body`; resolves with what came back once the server closes, or at `timeoutMs`.
 */
export function rawRequest(
  port: number,
  requestLine: string,
  headers: Record<string, string> | [string, string][] = {},
  { body = "", timeoutMs = RAW_TIMEOUT_MS }: { body?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  if (!pairs.some(([name]) => name.toLowerCase() === "connection")) pairs.push(["Connection", "close"]);
  const head = `${requestLine}\r\n${pairs.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n`;
  return exchange(port, Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(body)]), timeoutMs);
}

/** Sends `bytes` as they are and reads until the server closes (or `timeoutMs`). */
function exchange(port: number, bytes: Buffer, timeoutMs = RAW_TIMEOUT_MS): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, "127.0.0.1");
    let closedBy: RawAnswer["closedBy"] = "server";
    const timer = setTimeout(() => {
      closedBy = "timeout";
      socket.destroy();
    }, timeoutMs);
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      // An accepted upgrade never closes by itself: its head is the whole answer.
      const received = Buffer.concat(chunks);
      if (received.subarray(0, 12).toString("latin1") === "HTTP/1.1 101" && received.includes("\r\n\r\n")) {
        socket.destroy();
      }
    });
    // A reset is the server closing too; the answer read so far is what counts.
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks), closedBy));
    });
    socket.write(bytes);
  });
}

function parseAnswer(raw: Buffer, closedBy: RawAnswer["closedBy"]): RawAnswer {
  const end = raw.indexOf("\r\n\r\n");
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString("latin1");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end < 0 ? Buffer.alloc(0) : raw.subarray(end + 4);
  if (headers["transfer-encoding"] === "chunked") body = unchunk(body);
  return { status, headers, body, closedBy, raw };
}

function unchunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  // Bounded by the data: each turn consumes a size line, or stops.
  while (at < data.length) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** The headers of a WebSocket handshake (a fixed key: the tests read the refusal, not the socket). */
export const UPGRADE_HEADERS = {
  Upgrade: "websocket",
  Connection: "Upgrade",
  "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
  "Sec-WebSocket-Version": "13",
};
