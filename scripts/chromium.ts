/**
 * Debian's Chromium, shared by the end-to-end tests and the benchmarks: Playwright cannot
 * download its own browser here. The flags keep Chromium from reaching for Google's services,
 * which this machine's closed network refuses.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
