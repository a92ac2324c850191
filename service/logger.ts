import { type DestinationStream, pino } from "pino";
import { attachRepeatedWarnings, createRepeatedWarnings } from "./repeatedWarnings.ts";

/**
 * Structured JSON lines (stdout unless a destination is given, as tests do), one logger for the
 * whole service, carrying the memory of its repeated warnings (repeatedWarnings.ts).
 */
export function createLogger(level: string, destination?: DestinationStream) {
  const logger = pino({ level, base: { service: "nothing-store" } }, destination);
  attachRepeatedWarnings(logger, createRepeatedWarnings());
  return logger;
}

export type Logger = ReturnType<typeof createLogger>;

/**
 * The service's logger: readable lines for a person at a terminal, JSON lines everywhere else
 * (containers, CI, pipes, log collectors). pino-pretty is a development dependency, so a
 * production install (the container) never loads it: there a terminal gets JSON too.
 */
export async function createServiceLogger(
  level: string,
  { terminal = process.stdout.isTTY === true, output }: { terminal?: boolean; output?: NodeJS.WritableStream } = {},
) {
  const pretty = terminal ? await import("pino-pretty").catch(() => null) : null;
  if (!pretty) return createLogger(level, output as DestinationStream | undefined);
  const options = { translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname,service", colorize: terminal && !output };
  return createLogger(level, pretty.default(output ? { ...options, destination: output } : options));
}

/**
 * A condition the service rides out rather than a bug: the database out of reach, its disk full.
 * Storage's errors extend it, so the logger knows them without importing storage (which imports
 * the logger).
 */
export class RiddenOutError extends Error {}

/**
 * A log line's `err` for an error that may be expected: a RiddenOutError is logged as its one-line
 * message (which names the cause: "PostgreSQL is unavailable (ECONNREFUSED: …)"); anything else is
 * a bug, kept whole for pino to serialise with its stack.
 */
export function loggedError(error: unknown): unknown {
  return error instanceof RiddenOutError ? `${error.name}: ${error.message}` : error;
}
