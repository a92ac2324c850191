import { type DestinationStream, pino } from "pino";

/** Structured JSON lines (stdout unless a destination is given, as tests do), one logger for the whole service. */
export function createLogger(level: string, destination?: DestinationStream) {
  return pino({ level, base: { service: "nothing-store" } }, destination);
}

export type Logger = ReturnType<typeof createLogger>;
