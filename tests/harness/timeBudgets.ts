/**
 * Every time budget of the suite, in one place. A budget bounds a hang; it never measures speed
 * (the benchmarks do, docs/performance.md). Each is set for a machine at least twice as slow as the
 * slowest one seen running the suite green: a two-core machine with both cores busy beside it
 * (`CI_LOAD=2 bash .ci/run`). A slower machine still (emulation, a debugger) multiplies them all:
 *
 *   TEST_TIME_SCALE=3 npm test
 */

function readScale(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale < 1) {
    throw new Error(`TEST_TIME_SCALE must be a number of at least 1, got "${value}"`);
  }
  return scale;
}

const TIME_SCALE = readScale(process.env.TEST_TIME_SCALE);

/** `ms` for this machine: a budget written for the busy two-core machine, times TEST_TIME_SCALE. */
export const scaled = (ms: number): number => Math.round(ms * TIME_SCALE);

/**
 * Pure tests. The slowest seen on a busy machine: a property test at 9.9 s, and the scrypt checks
 * at the production cost (a quarter second a hash on a quiet machine).
 */
export const UNIT_TEST_MS = scaled(30_000);

/**
 * Service tests and their hooks: real databases, sockets and service processes. The slowest test
 * seen on a busy machine took about 50 s; a hook that starts a service or a store, about 20 s.
 */
export const SERVICE_TEST_MS = scaled(120_000);

/**
 * The container test's hooks: the stand-in base (41 s when made fresh) and the image build (82 s)
 * on a quiet machine; podman's teardown (unmount, remove every image) took over 10 s on a busy one.
 */
export const CONTAINER_BUILD_MS = scaled(20 * 60_000);
export const CONTAINER_TEST_MS = scaled(180_000);

/**
 * A Playwright test, and each of its expectations: the heaviest tests seen (a payment from request
 * to credit, a dialog's axe scan) took 15 to 25 s on a busy machine; an expectation that holds
 * waits for it only as long as it takes.
 */
export const E2E_TEST_MS = scaled(90_000);
export const E2E_EXPECT_MS = scaled(15_000);

/** The suite's shared server: a new PGlite directory takes about 4 s on a quiet machine. */
export const E2E_SERVER_START_MS = scaled(180_000);
