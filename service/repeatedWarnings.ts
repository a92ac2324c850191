/**
 * Warnings that repeat, written once per interval with a count (docs/decisions/2026-11-28-repeated-warnings-once-per-interval.md).
 * A 20-s database outage with payments on used to log "could not try for the payment watcher lease"
 * every second (3,600 lines an hour); a misconfigured origin, every visitor's every reconnect. Now
 * a condition's first occurrence is written at once, later ones at most once per interval with
 * `repeated` (the occurrences since its previous line), and its end in one line with how many
 * failures it lasted. Keys are the message and a small key of the caller's (an origin, a path): a
 * flood of made-up keys costs at most `maxKeys` entries.
 */
import { LRUCache } from "lru-cache";
// pino's own type, not logger.ts's: logger.ts attaches this module's memory to every logger it makes.
import type { BaseLogger as Logger } from "pino";

/** A minute: an outage's lines stay a handful, and a condition that lasts shows it is still there. */
export const REPEATED_WARNING_INTERVAL_MS = 60_000;
/** Keys remembered; the least recently noted is forgotten first (and written again when it returns). */
export const MAX_REMEMBERED_WARNINGS = 1_000;
/** Keys and fields a client chooses (origins, paths) are kept and logged cut to this length. */
export const MAX_LOGGED_CHARS = 200;

export interface RepeatedWarnings {
  /**
   * One occurrence of `key`: calls `write` with the occurrences left unwritten since its previous
   * line, unless that line is less than the interval old.
   */
  note(key: string, write: (repeated: number) => void): void;
  /**
   * The condition `key` ended: if it was noted, calls `write` with its occurrences in all and how
   * long since the first, then forgets it (the next occurrence is written at once).
   */
  ended(key: string, write: (failures: number, forMs: number) => void): void;
  /** Keys remembered now (bounded by maxKeys). */
  readonly size: number;
}

export interface RepeatedWarningsOptions {
  /** Milliseconds on a clock that only moves forward. */
  now?: () => number;
  intervalMs?: number;
  maxKeys?: number;
}

export function createRepeatedWarnings({
  now = () => performance.now(),
  intervalMs = REPEATED_WARNING_INTERVAL_MS,
  maxKeys = MAX_REMEMBERED_WARNINGS,
}: RepeatedWarningsOptions = {}): RepeatedWarnings {
  const noted = new LRUCache<string, { since: number; writtenAt: number; unwritten: number; total: number }>({
    max: maxKeys,
  });
  return {
    note(key, write) {
      const at = now();
      const previous = noted.get(key);
      if (!previous) {
        noted.set(key, { since: at, writtenAt: at, unwritten: 0, total: 1 });
        write(0);
        return;
      }
      previous.total += 1;
      if (at - previous.writtenAt < intervalMs) {
        previous.unwritten += 1;
        return;
      }
      const repeated = previous.unwritten + 1;
      previous.writtenAt = at;
      previous.unwritten = 0;
      write(repeated);
    },
    ended(key, write) {
      const condition = noted.get(key);
      if (!condition) return;
      noted.delete(key);
      write(condition.total, Math.round(now() - condition.since));
    },
    get size() {
      return noted.size;
    },
  };
}

type Level = "warn" | "error";

/** The service's own memory of conditions, carried by its logger (and inherited by pino's children). */
const SERVICE_WARNINGS = Symbol("repeatedWarnings");
type CarryingLogger = Logger & { [SERVICE_WARNINGS]?: RepeatedWarnings };

/** Gives `logger` (and every child made of it, before or after) `warnings` as its memory: tests pass one on a clock of their own. */
export function attachRepeatedWarnings(logger: Logger, warnings: RepeatedWarnings): void {
  (logger as CarryingLogger)[SERVICE_WARNINGS] = warnings;
}

function warningsOf(logger: Logger): RepeatedWarnings {
  const carrying = logger as CarryingLogger;
  const warnings = carrying[SERVICE_WARNINGS];
  if (warnings) return warnings;
  const made = createRepeatedWarnings();
  attachRepeatedWarnings(logger, made);
  return made;
}

const keyOf = (msg: string, key: string) => (key ? `${msg}\n${key}` : msg);

/**
 * Writes `msg` at `level` the first time, then at most once per interval with `repeated`, until
 * `endRepeated` says the condition is over. `key` tells apart conditions of one message (small and
 * chosen by the service, never by a client).
 */
export function logRepeated(logger: Logger, level: Level, fields: object, msg: string, key = ""): void {
  warningsOf(logger).note(keyOf(msg, key), (repeated) => logger[level]({ ...fields, repeated }, msg));
}

/** The condition behind `msg` ended: one info line `ended` with its failures and how long, if it was logged. */
export function endRepeated(logger: Logger, msg: string, ended: string, key = ""): void {
  warningsOf(logger).ended(keyOf(msg, key), (failures, forMs) => logger.info({ failures, forMs, after: msg }, ended));
}

/**
 * Visitors' reads and writes that found the database away (pages opened, winners, payment
 * requests and statuses, the console): one condition, whichever of them meets it, since a
 * 20-s outage is one fact however many visitors it turns away.
 */
export const VISITORS_UNANSWERED = "visitors are answered 'unavailable': the database is out of reach";

/** A visitor's read or write (`what`) found the database away. */
export function visitorUnanswered(logger: Logger, what: string, err: unknown): void {
  logRepeated(logger, "warn", { what, err }, VISITORS_UNANSWERED);
}

/** A visitor's read reached the database: the condition ends, if it was on. */
export function visitorAnswered(logger: Logger): void {
  endRepeated(logger, VISITORS_UNANSWERED, "visitors are answered again: the database is back");
}
