/**
 * Which pages may open the socket. Browsers always send Origin on a WebSocket handshake, so the
 * check stops other sites from using a visitor's browser; a request without Origin comes from a
 * non-browser client (curl, a bot, the tests), which could forge any header anyway, and is allowed.
 */
import type { IncomingMessage } from "node:http";

export function isOriginAllowed(req: IncomingMessage, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  if (allowedOrigins.includes("*")) return true;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (allowedOrigins.length > 0) return allowedOrigins.includes(parsed.origin);
  // Same origin: the page was served by the host the socket connects to.
  const host = req.headers.host;
  if (host === undefined || parsed.origin === "null") return false;
  try {
    // Through URL so "example.com:443" and "example.com" compare equal under https.
    return new URL(`${parsed.protocol}//${host}`).host === parsed.host;
  } catch {
    return false;
  }
}
