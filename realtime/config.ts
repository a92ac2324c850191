/** Service settings, from the environment only (DESIGN.md section 4). */
import { resolve } from "node:path";

export interface ServiceConfig {
  port: number;
  host: string;
  /** Built pages to serve; empty string disables static serving. */
  staticDir: string;
  logLevel: string;
}

export class ServiceConfigError extends Error {
  override name = "ServiceConfigError";
}

function port(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) {
    throw new ServiceConfigError(`PORT must be an integer from 0 to 65535, got "${value}"`);
  }
  return parsed;
}

export function readServiceConfig(env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  return {
    port: port(env.PORT, 4321),
    // Loopback unless told otherwise: the container sets HOST=0.0.0.0 on purpose.
    host: env.HOST?.trim() || "127.0.0.1",
    staticDir: env.STATIC_DIR === "" ? "" : resolve(env.STATIC_DIR ?? "dist"),
    logLevel: env.LOG_LEVEL?.trim() || "info",
  };
}
