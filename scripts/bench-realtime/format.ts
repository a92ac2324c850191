/** Numbers as the report lines print them. */
import type { LatencySummary } from "./latencyHistogram.ts";

export function thousands(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

export function latencyText(summary: LatencySummary): string {
  return `p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms`;
}

export function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}
