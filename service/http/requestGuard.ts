/**
 * No request can stop the service (docs/design.md#11): every HTTP handler and the upgrade handler
 * run inside these guards. A handler that throws, or whose promise rejects, costs that one request
 * a 500 (or, once its answer has begun, the connection) and an error line in the log; an error
 * event on the request or the response stream is logged instead of becoming an uncaught exception.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../logger.ts";
import { answerJson } from "./answers.ts";
import type { TargetRefusal } from "./requestTarget.ts";
import { SERVICE_HEADERS } from "./securityHeaders.ts";

/** Runs `handle` for one request; whatever it throws or rejects with is answered 500 and logged. */
export function answerSafely(
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
  handle: () => void | Promise<void>,
): void {
  req.on("error", (error) => logger.debug({ err: error }, "request stream error"));
  res.on("error", (error) => logger.debug({ err: error }, "response stream error"));
  const fail = (error: unknown) => {
    // The method and the raw target, cut short: enough to reproduce, not a way to flood the log.
    logger.error({ err: error, method: req.method, target: req.url?.slice(0, 200) }, "a request handler failed");
    try {
      if (res.headersSent) {
        // Half an answer is already on its way: only cutting the connection tells the client.
        res.destroy();
        return;
      }
      // Whatever the handler had set (a length, a type) belongs to the answer that never came.
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      answerJson(
        res,
        500,
        { error: "internal", message: "Something went wrong on our side; nothing was changed." },
        SERVICE_HEADERS,
      );
    } catch {
      res.destroy();
    }
  };
  try {
    handle()?.catch(fail);
  } catch (error) {
    fail(error);
  }
}

/** The answer to a request target parseRequestTarget refused. */
export function refuseTarget(res: ServerResponse, refusal: TargetRefusal): void {
  answerJson(res, refusal.status, { error: refusal.error, message: refusal.message }, SERVICE_HEADERS);
}

/** Runs `handle` for one upgrade; a throw is answered with a 500 refusal (or a cut) and logged. */
export function upgradeSafely(req: IncomingMessage, socket: Duplex, logger: Logger, handle: () => void): void {
  socket.on("error", (error) => logger.debug({ err: error }, "upgrade socket error"));
  try {
    handle();
  } catch (error) {
    logger.error({ err: error, target: req.url?.slice(0, 200) }, "an upgrade handler failed");
    // Bytes already written (a 101 and its frames) cannot be followed by a refusal.
    const written = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (written > 0 || socket.writableLength > 0 || !socket.writable) socket.destroy();
    else refuseUpgrade(socket, 500, "Something went wrong on our side.");
  }
}

/** Answers an upgrade with a plain HTTP refusal, then closes the connection. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  body: string,
  options: { retryAfterSeconds?: number; destroyAtOnce?: boolean } = {},
): void {
  const bytes = Buffer.byteLength(body);
  const retryAfter = options.retryAfterSeconds === undefined ? "" : `Retry-After: ${options.retryAfterSeconds}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n${retryAfter}Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${bytes}\r\n\r\n${body}`,
  );
  // end() only half-closes: a client that never closes its side would hold the connection open.
  // Destroy once the refusal is written, as ws does for the handshakes it refuses; under a flood of
  // connections, at once (the answer is one small write the kernel takes whole), freeing the file.
  if (options.destroyAtOnce) socket.destroy();
  else socket.once("finish", () => socket.destroy());
}
