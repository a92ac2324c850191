/** The two parts of a request the console reads by hand: a cookie and an urlencoded form. */
import type { IncomingMessage } from "node:http";

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}

/** The urlencoded body; null when it is over `maxBytes`. */
export async function readForm(req: IncomingMessage, maxBytes: number): Promise<URLSearchParams | null> {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > maxBytes) return null;
  }
  return new URLSearchParams(body);
}
