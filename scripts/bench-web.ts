/**
 * Web benchmark of the built store, served by the real server on loopback:
 *  - Lighthouse scores (performance, accessibility, best practices, SEO) of each page, mobile and
 *    desktop, with the audits that keep a score below 100;
 *  - the bytes the home page fetches before any interaction and after scrolling to its bottom.
 *
 * Usage: npm run bench:web [-- --no-build] [--runs N] [--bytes-only] [--baseline REV]
 *   --runs N          Lighthouse runs per page and form factor, median kept (3 by default)
 *   --bytes-only      skip Lighthouse: only the bytes, in seconds rather than minutes
 *   --form-factor F   Lighthouse on mobile or desktop only (both by default), for a quicker comparison
 *   --baseline REV    also measure the git revision REV (a commit or tag: the previous release),
 *                     built and served from a temporary copy of its files (git archive) with its own
 *                     service; its runs alternate with this tree's, so both see the same machine
 * Builds into and serves ASTRO_OUT_DIR (dist by default), so a parallel checkout keeps its own.
 * Each Lighthouse report keeps, beside the scores, what the main thread did (Lighthouse's
 * mainthread-work-breakdown by category and bootup-time by script), Total Blocking Time and the
 * DOM's size, so a lower score names its cause.
 * Prints one summary line per measurement and every file fetched, and writes everything to
 * bench/results/web-<date>.json (web-<date>-bytes.json with --bytes-only, web-<date>-mobile.json
 * with --form-factor mobile, so a quick run never replaces a full one). Every Chromium here can
 * only resolve 127.0.0.1, so no request leaves the machine.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { chromium, type Page, type Request, type Response } from "@playwright/test";
import * as chromeLauncher from "chrome-launcher";
import lighthouse, { type Result as LighthouseResult } from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import { CHROMIUM_ARGS, CHROMIUM_PATH } from "./chromium.ts";
import { errorMessage, exitStatus, hasExited, run, waitForOk, withTimeout } from "./harness/childProcess.ts";
import { checkoutRevision, describeRevision } from "./harness/gitRevision.ts";
import { describeMachine } from "./harness/machine.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
// As astro.config.mjs and npm run build: ASTRO_OUT_DIR, relative to the project, or dist.
const BUILD_DIR = resolve(ROOT, process.env.ASTRO_OUT_DIR || "dist");
const RESULTS_DIR = join(ROOT, "bench", "results");

const LIGHTHOUSE_PAGES = ["/", "/leaderboard"];
const BYTES_PAGE = "/";
const FORM_FACTORS = ["mobile", "desktop"] as const;
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];

const CHROMIUM_FLAGS = [
  "--headless",
  ...CHROMIUM_ARGS,
  // Every host but 127.0.0.1 fails to resolve: a third-party link on a page is counted, never fetched.
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
];

const BUILD_TIMEOUT_MS = 5 * 60_000;
// A fresh PGlite directory takes seconds to create, far more on a busy machine.
const SERVER_START_TIMEOUT_MS = 120_000;
const SERVER_STOP_TIMEOUT_MS = 5_000;
const LIGHTHOUSE_RUN_TIMEOUT_MS = 3 * 60_000;
const LIGHTHOUSE_ATTEMPTS = 3;
const BROWSER_TIMEOUT_MS = 30_000;
const BYTES_RUN_TIMEOUT_MS = 2 * 60_000;
const NETWORK_IDLE_TIMEOUT_MS = 10_000;
// As Playwright's "networkidle": no request open for this long.
const NETWORK_QUIET_MS = 500;
const MAX_SCROLL_STEPS = 50;
const SCROLL_PAUSE_MS = 200;

// ---------------------------------------------------------------------------------------------
// Results

type FormFactor = (typeof FORM_FACTORS)[number];

interface FailingAudit {
  category: string;
  id: string;
  title: string;
  /** 0-1, or null when the audit itself errored. */
  score: number | null;
  /** Its share in the category score; 0 means it is advice that does not move the score. */
  weight: number;
  displayValue?: string;
  errorMessage?: string;
}

interface LighthouseReport {
  page: string;
  formFactor: FormFactor;
  /** Category id -> score 0-100. */
  scores: Record<string, number>;
  failingAudits: FailingAudit[];
  runWarnings: string[];
  lighthouseVersion: string;
  userAgent: string;
  /** Performance score of every run of this page and form factor; the report is the median run. */
  performanceRuns: number[];
  /** Total Blocking Time of every run, ms, in the order of performanceRuns. */
  totalBlockingTimeRuns: number[];
  /** Main-thread work of every run, ms (Lighthouse's mainthread-work-breakdown total). */
  mainThreadRuns: number[];
  /** The machine's 1-minute load average as each run began: a run slowed by other work shows. */
  loadAverageRuns: number[];
  /** The median run's main thread, its scripts and its document. */
  mainThread: MainThread;
}

interface MainThread {
  /** Total Blocking Time, ms. */
  totalBlockingTimeMs: number;
  /** Time to Interactive and the paints, ms, as Lighthouse estimates them. */
  metricsMs: Record<string, number>;
  /** mainthread-work-breakdown: every category of work (script evaluation, style and layout…), ms, largest first. */
  workMs: number;
  workByCategory: { category: string; label: string; ms: number }[];
  /** bootup-time: JavaScript execution time, ms, and each script's (evaluation, parse and compile). */
  bootupMs: number;
  bootupByScript: { url: string; totalMs: number; scriptingMs: number; parseCompileMs: number }[];
  /** long-tasks: every task of 50 ms or more (simulated), its start, script and time by category. */
  longTasks: { url: string; startMs: number; ms: number; byCategory: Record<string, number> }[];
  /** dom-size-insight: elements in the document at its largest, its depth, the most children of one element. */
  dom: { elements: number; maxDepth: number; maxChildren: number } | null;
}

const RESOURCE_TYPES = ["document", "script", "stylesheet", "font", "image", "other"] as const;
type ResourceType = (typeof RESOURCE_TYPES)[number];

interface FetchedResource {
  type: ResourceType;
  url: string;
  status: number;
  /** Decoded body length, whatever the transfer encoding was. */
  rawBytes: number;
  /** gzip -9 of the body, computed here so it does not depend on what the server sent. */
  gzipBytes: number;
  thirdParty: boolean;
}

interface Totals {
  count: number;
  rawBytes: number;
  gzipBytes: number;
}

interface FetchSnapshot {
  /** False when requests were still open after NETWORK_IDLE_TIMEOUT_MS. */
  networkIdle: boolean;
  all: Totals;
  byType: Record<ResourceType, Totals>;
  thirdPartyRequests: string[];
  resources: FetchedResource[];
}

interface InlineScript {
  type: string;
  rawBytes: number;
  gzipBytes: number;
  /** The first characters of its code, to tell which script it is. */
  begins: string;
}

interface InlineScripts {
  count: number;
  rawBytes: number;
  moduleCount: number;
  moduleRawBytes: number;
  /** Each one, in document order: its bytes are part of the document's, not of the script files'. */
  scripts: InlineScript[];
}

interface BytesReport {
  page: string;
  beforeInteraction: FetchSnapshot;
  afterScrolling: FetchSnapshot;
  scrollSteps: number;
  inlineScripts: InlineScripts;
  browserVersion: string;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** True when the child exited within the time given. */
async function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (hasExited(child)) return true;
  // An unref'd timer, so a child that exits early does not keep this process waiting.
  return Promise.race([once(child, "exit").then(() => true), sleep(timeoutMs, false, { ref: false })]);
}

function bytes(count: number): string {
  return `${count.toLocaleString("en-US")} B`;
}

// ---------------------------------------------------------------------------------------------
// Build and server

/** Builds the site in `root` (this tree, or a baseline's copy) into `outDir`. */
async function runBuild(root: string, outDir: string): Promise<void> {
  // Through npm, as a person would: the script's PATH (set by `npm run`) puts the pinned Node 24 first.
  const build = spawn("npm", ["run", "build"], {
    cwd: root,
    env: { ...process.env, ASTRO_OUT_DIR: outDir },
    stdio: ["ignore", process.stderr, "inherit"],
    timeout: BUILD_TIMEOUT_MS,
  });
  const [code, signal] = (await once(build, "exit")) as [number | null, NodeJS.Signals | null];
  const what = `npm run build in ${relative(ROOT, root) || "."}`;
  if (signal) throw new Error(`${what} was stopped by ${signal} (limit ${BUILD_TIMEOUT_MS / 1000} s)`);
  if (code !== 0) throw new Error(`${what} exited with code ${code}`);
}

/** The commit measured, and whether this tree has changes not committed (for the results). */
async function describeTree(): Promise<string> {
  const commit = await describeRevision("HEAD");
  const { stdout } = await run("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT });
  return stdout.trim() === "" ? commit : `${commit} with changes not committed`;
}

async function findFreePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, "close");
  return port;
}

/**
 * A private copy of the built site: another build or test run in this work tree rewrites dist/,
 * and the server must not lose files (or serve a newer build) in the middle of a measurement.
 */
async function snapshotBuild(buildDir: string): Promise<string> {
  const copy = await mkdtemp(join(os.tmpdir(), "bench-web-site-"));
  try {
    await cp(buildDir, copy, { recursive: true });
    return copy;
  } catch (error) {
    await rm(copy, { recursive: true, force: true });
    throw new Error(`could not copy ${buildDir} (is a build running?): ${errorMessage(error)}`);
  }
}

function startServer(root: string, port: number, staticDir: string): ChildProcess {
  // process.execPath is the Node 24 running this script. The server's JSON log goes to stderr so
  // that stdout carries only the summary lines. The auction runs on PGlite in a directory of its
  // own inside the site copy (removed with it), so a running `npm start` keeps its ./data.
  const server = spawn(process.execPath, ["service/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      // A free port for /metrics (its own listener, docs/design.md#9): never one a running service holds.
      METRICS_PORT: "0",
      STATIC_DIR: staticDir,
      DATA_DIR: join(staticDir, ".auction-data"),
      DATABASE_URL: "",
    },
    stdio: ["ignore", process.stderr, "inherit"],
  });
  // Last resort if this script dies without reaching its cleanup: never leave a server behind.
  process.once("exit", () => server.kill("SIGKILL"));
  return server;
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (hasExited(server)) return;
  server.kill("SIGTERM");
  if (await waitForExit(server, SERVER_STOP_TIMEOUT_MS)) return;
  server.kill("SIGKILL");
  await waitForExit(server, SERVER_STOP_TIMEOUT_MS);
}

// ---------------------------------------------------------------------------------------------
// Lighthouse

async function runLighthouse(origin: string, page: string, formFactor: FormFactor): Promise<LighthouseReport> {
  // A fresh Chromium and profile per run, so no run sees another's cache.
  const userDataDir = await mkdtemp(join(os.tmpdir(), "bench-web-lighthouse-"));
  try {
    const chrome = await chromeLauncher.launch({
      chromePath: CHROMIUM_PATH,
      chromeFlags: CHROMIUM_FLAGS,
      userDataDir,
      logLevel: "silent",
    });
    try {
      return await lighthouseOnChrome(chrome.port, origin, page, formFactor);
    } finally {
      chrome.kill();
      await waitForExit(chrome.process, BROWSER_TIMEOUT_MS);
    }
  } finally {
    await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * Lighthouse now and then fails to record its trace on a busy machine (NO_NAVSTART and the like):
 * such a run is tried again, in a fresh browser, up to LIGHTHOUSE_ATTEMPTS times in all.
 */
async function runLighthouseWithRetries(origin: string, page: string, formFactor: FormFactor) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const [loadAverage = 0] = os.loadavg();
      const report = await runLighthouse(origin, page, formFactor);
      return { ...report, loadAverageRuns: [loadAverage] };
    } catch (error) {
      if (attempt >= LIGHTHOUSE_ATTEMPTS) throw error;
      console.error(
        `Lighthouse ${formFactor} ${page}: attempt ${attempt} failed, trying again: ${errorMessage(error)}`,
      );
    }
  }
}

async function lighthouseOnChrome(
  port: number,
  origin: string,
  page: string,
  formFactor: FormFactor,
): Promise<LighthouseReport> {
  const flags = { port, logLevel: "error" as const, onlyCategories: CATEGORIES };
  // No config means Lighthouse's default, which is the mobile one.
  const config = formFactor === "desktop" ? desktopConfig : undefined;
  const what = `Lighthouse ${formFactor} ${page}`;
  const result = await withTimeout(lighthouse(origin + page, flags, config), LIGHTHOUSE_RUN_TIMEOUT_MS, what);
  if (!result) throw new Error(`${what} returned no result`);
  return summarizeLighthouse(result.lhr, origin, page, formFactor);
}

function summarizeLighthouse(
  lhr: LighthouseResult,
  origin: string,
  page: string,
  formFactor: FormFactor,
): LighthouseReport {
  const what = `Lighthouse ${formFactor} ${page}`;
  if (lhr.runtimeError) throw new Error(`${what}: ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  const mainThread = mainThreadOf(lhr, origin);
  const scores: Record<string, number> = {};
  for (const id of CATEGORIES) {
    const score = lhr.categories[id]?.score;
    if (score === null || score === undefined) throw new Error(`${what}: no score for ${id}`);
    scores[id] = Math.round(score * 100);
  }
  return {
    page,
    formFactor,
    scores,
    failingAudits: failingAudits(lhr),
    runWarnings: lhr.runWarnings,
    lighthouseVersion: lhr.lighthouseVersion,
    userAgent: lhr.environment.hostUserAgent,
    performanceRuns: [scores.performance ?? 0],
    totalBlockingTimeRuns: [Math.round(mainThread.totalBlockingTimeMs)],
    mainThreadRuns: [mainThread.workMs],
    loadAverageRuns: [],
    mainThread,
  };
}

const METRICS = {
  "first-contentful-paint": "firstContentfulPaint",
  "largest-contentful-paint": "largestContentfulPaint",
  "speed-index": "speedIndex",
  interactive: "timeToInteractive",
} as const;

type TableItem = Record<string, unknown>;

function tableItems(lhr: LighthouseResult, id: string): TableItem[] {
  const details = lhr.audits[id]?.details as { type?: string; items?: TableItem[] } | undefined;
  return details?.type === "table" && Array.isArray(details.items) ? details.items : [];
}

const ms = (value: unknown): number => Math.round(typeof value === "number" ? value : 0);

/** What the page's main thread did, from the diagnostics every performance run computes anyway. */
function mainThreadOf(lhr: LighthouseResult, origin: string): MainThread {
  const metricsMs: Record<string, number> = {};
  for (const [id, name] of Object.entries(METRICS)) metricsMs[name] = ms(lhr.audits[id]?.numericValue);
  const workByCategory = tableItems(lhr, "mainthread-work-breakdown").map((item) => ({
    category: String(item.group),
    label: String(item.groupLabel),
    ms: ms(item.duration),
  }));
  const bootupByScript = tableItems(lhr, "bootup-time").map((item) => ({
    url: String(item.url).startsWith(origin) ? String(item.url).slice(origin.length) : String(item.url),
    totalMs: ms(item.total),
    scriptingMs: ms(item.scripting),
    parseCompileMs: ms(item.scriptParseCompile),
  }));
  const domDebug = (lhr.audits["dom-size-insight"]?.details as { debugData?: Record<string, unknown> } | undefined)
    ?.debugData;
  const dom =
    domDebug && typeof domDebug.totalElements === "number"
      ? {
          elements: domDebug.totalElements,
          maxDepth: Number(domDebug.maxDepth),
          maxChildren: Number(domDebug.maxChildren),
        }
      : null;
  const longDebug = (lhr.audits["long-tasks"]?.details as { debugData?: Record<string, unknown> } | undefined)
    ?.debugData as { urls?: string[]; tasks?: Record<string, number>[] } | undefined;
  const longTasks = (longDebug?.tasks ?? []).map(({ urlIndex, startTime, duration, ...byCategory }) => {
    const url = longDebug?.urls?.[urlIndex ?? -1] ?? "";
    return {
      url: url.startsWith(origin) ? url.slice(origin.length) : url,
      startMs: ms(startTime),
      ms: ms(duration),
      byCategory: Object.fromEntries(Object.entries(byCategory).map(([key, value]) => [key, ms(value)])),
    };
  });
  return {
    totalBlockingTimeMs: ms(lhr.audits["total-blocking-time"]?.numericValue),
    longTasks,
    metricsMs,
    workMs: ms(lhr.audits["mainthread-work-breakdown"]?.numericValue),
    workByCategory,
    bootupMs: ms(lhr.audits["bootup-time"]?.numericValue),
    bootupByScript,
    dom,
  };
}

// Audits whose score is null by design: they explain, they do not judge.
const UNSCORED_MODES = new Set(["informative", "notApplicable", "manual"]);

/** The audits that tell a reader why a score is below 100 (and those that could not run). */
function failingAudits(lhr: LighthouseResult): FailingAudit[] {
  const failing: FailingAudit[] = [];
  for (const category of CATEGORIES) {
    for (const ref of lhr.categories[category]?.auditRefs ?? []) {
      const audit = lhr.audits[ref.id];
      if (!audit || UNSCORED_MODES.has(audit.scoreDisplayMode)) continue;
      const errored = audit.scoreDisplayMode === "error";
      if (!errored && (audit.score === null || audit.score >= 1)) continue;
      failing.push({
        category,
        id: audit.id,
        title: audit.title,
        score: audit.score,
        weight: ref.weight,
        displayValue: audit.displayValue,
        errorMessage: audit.errorMessage,
      });
    }
  }
  // Heaviest first: those are what move the score.
  return failing.sort((a, b) => b.weight - a.weight);
}

/**
 * Performance varies with what else the machine is doing: several runs, and the one with the
 * median performance score stands for them all (Lighthouse's own advice for noisy machines).
 */
function medianRun(runs: LighthouseReport[]): LighthouseReport {
  const sorted = [...runs].sort((a, b) => (a.scores.performance ?? 0) - (b.scores.performance ?? 0));
  const median = sorted[Math.floor(sorted.length / 2)];
  if (!median) throw new Error("no Lighthouse run to summarise");
  return {
    ...median,
    performanceRuns: runs.map((run) => run.scores.performance ?? 0),
    totalBlockingTimeRuns: runs.map((run) => run.mainThread.totalBlockingTimeMs),
    mainThreadRuns: runs.map((run) => run.mainThread.workMs),
    loadAverageRuns: runs.flatMap((run) => run.loadAverageRuns),
  };
}

function lighthouseLines(report: LighthouseReport, label: string): string[] {
  const scores = CATEGORIES.map((id) => `${id} ${report.scores[id]}`).join(", ");
  const runs =
    report.performanceRuns.length > 1
      ? ` (median of ${report.performanceRuns.length} runs: performance ${report.performanceRuns.join(", ")}; ` +
        `TBT ${report.totalBlockingTimeRuns.join(", ")} ms; main thread ${report.mainThreadRuns.join(", ")} ms; ` +
        `load average ${report.loadAverageRuns.map((load) => load.toFixed(1)).join(", ")})`
      : "";
  const { mainThread } = report;
  const lines = [`lighthouse ${label} ${report.formFactor} ${report.page}: ${scores}${runs}`];
  const work = mainThread.workByCategory.map((item) => `${item.label} ${item.ms}`).join(", ");
  lines.push(`  main thread ${mainThread.workMs} ms (TBT ${mainThread.totalBlockingTimeMs} ms): ${work}`);
  const scripts = mainThread.bootupByScript
    .map((item) => `${item.url} ${item.totalMs} (eval ${item.scriptingMs}, parse ${item.parseCompileMs})`)
    .join(", ");
  lines.push(`  bootup ${mainThread.bootupMs} ms: ${scripts || "no script over the threshold"}`);
  const dom = mainThread.dom;
  for (const task of mainThread.longTasks) {
    const parts = Object.entries(task.byCategory)
      .map(([category, time]) => `${category} ${time}`)
      .join(", ");
    lines.push(`  long task at ${task.startMs} ms: ${task.ms} ms ${task.url || "(no script)"}: ${parts}`);
  }
  if (dom) lines.push(`  dom ${dom.elements} elements, depth ${dom.maxDepth}, at most ${dom.maxChildren} children`);
  for (const audit of report.failingAudits) {
    const score = audit.score === null ? "error" : `score ${audit.score}`;
    const detail = audit.errorMessage ?? audit.displayValue;
    lines.push(
      `  failing ${audit.category}/${audit.id} (${score}, weight ${audit.weight}): ${audit.title}` +
        (detail ? ` [${detail}]` : ""),
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Bytes fetched by a page

async function measureBytes(origin: string, path: string): Promise<BytesReport> {
  // launch() gives every browser a fresh temporary profile of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_FLAGS,
    timeout: BROWSER_TIMEOUT_MS,
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    const fetches = watchFetches(page, new URL(origin).host);

    await page.goto(origin + path, { waitUntil: "load" });
    // Quiet is a best effort: a page that keeps polling is still measured, and flagged.
    const beforeInteraction = await fetches.snapshot(await fetches.waitForQuiet());
    const scrollSteps = await scrollToBottom(page);
    const afterScrolling = await fetches.snapshot(await fetches.waitForQuiet());

    const html = await (await fetch(origin + path, { signal: AbortSignal.timeout(BROWSER_TIMEOUT_MS) })).text();
    return {
      page: path,
      beforeInteraction,
      afterScrolling,
      scrollSteps,
      inlineScripts: inlineScripts(html),
      browserVersion: browser.version(),
    };
  } finally {
    await browser.close();
  }
}

/** Records every response (with its body sizes) and every third-party request the page makes. */
function watchFetches(page: Page, pageHost: string) {
  const pending: Promise<FetchedResource | undefined>[] = [];
  const thirdPartyRequests: string[] = [];
  const inFlight = new Set<Request>();
  page.on("request", (request) => {
    inFlight.add(request);
    if (isThirdParty(request.url(), pageHost)) thirdPartyRequests.push(request.url());
  });
  page.on("requestfinished", (request) => inFlight.delete(request));
  page.on("requestfailed", (request) => inFlight.delete(request));
  page.on("response", (response) => {
    const described = describeResponse(response, pageHost);
    // Marked handled now; a failure still surfaces when snapshot() awaits it.
    described.catch(() => {});
    pending.push(described);
  });
  return {
    /**
     * Waits until no request has been open for NETWORK_QUIET_MS. Playwright's "networkidle" load
     * state fires once per document, so it cannot tell when the fetches that scrolling set off end.
     * Returns false when the network never went quiet within NETWORK_IDLE_TIMEOUT_MS.
     */
    async waitForQuiet(): Promise<boolean> {
      const deadline = Date.now() + NETWORK_IDLE_TIMEOUT_MS;
      let quietSince = Date.now();
      while (Date.now() < deadline) {
        if (inFlight.size > 0) quietSince = Date.now();
        else if (Date.now() - quietSince >= NETWORK_QUIET_MS) return true;
        await sleep(50);
      }
      return false;
    },
    async snapshot(networkIdle: boolean): Promise<FetchSnapshot> {
      const resources = (await Promise.all(pending)).filter((resource) => resource !== undefined);
      return {
        networkIdle,
        all: total(resources),
        byType: totalsByType(resources),
        thirdPartyRequests: [...thirdPartyRequests],
        resources,
      };
    },
  };
}

function isThirdParty(url: string, pageHost: string): boolean {
  const { protocol, host } = new URL(url);
  // data: and blob: URLs are not fetched from anyone.
  return (protocol === "http:" || protocol === "https:") && host !== pageHost;
}

async function describeResponse(response: Response, pageHost: string): Promise<FetchedResource | undefined> {
  const url = response.url();
  if (!url.startsWith("http:") && !url.startsWith("https:")) return undefined;
  const status = response.status();
  // Redirects and 204/304 answers carry no body to weigh (and Playwright refuses to read one).
  const hasBody = !(status >= 300 && status < 400) && status !== 204;
  const body = hasBody ? await response.body() : Buffer.alloc(0);
  return {
    type: resourceType(response.request().resourceType()),
    url,
    status,
    rawBytes: body.length,
    gzipBytes: body.length > 0 ? gzipSync(body, { level: 9 }).length : 0,
    thirdParty: isThirdParty(url, pageHost),
  };
}

/** Playwright's many request types, folded into the few this report compares. */
function resourceType(playwrightType: string): ResourceType {
  const known = RESOURCE_TYPES as readonly string[];
  return known.includes(playwrightType) ? (playwrightType as ResourceType) : "other";
}

function total(resources: FetchedResource[]): Totals {
  return {
    count: resources.length,
    rawBytes: resources.reduce((sum, resource) => sum + resource.rawBytes, 0),
    gzipBytes: resources.reduce((sum, resource) => sum + resource.gzipBytes, 0),
  };
}

function totalsByType(resources: FetchedResource[]): Record<ResourceType, Totals> {
  const byType = {} as Record<ResourceType, Totals>;
  for (const type of RESOURCE_TYPES) byType[type] = total(resources.filter((resource) => resource.type === type));
  return byType;
}

/** Scrolls one viewport at a time to the bottom, so lazy images and client:visible islands load. */
async function scrollToBottom(page: Page): Promise<number> {
  for (let step = 1; step <= MAX_SCROLL_STEPS; step++) {
    await page.evaluate(() => window.scrollBy(0, window.innerHeight));
    await sleep(SCROLL_PAUSE_MS);
    const atBottom = await page.evaluate(
      () => window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1,
    );
    if (atBottom) return step;
  }
  return MAX_SCROLL_STEPS;
}

/**
 * JavaScript written into the HTML itself (Astro inlines small scripts): the browser runs it but
 * never fetches it as a file, so the script totals above do not include it.
 */
function inlineScripts(html: string): InlineScripts {
  const found: InlineScripts = { count: 0, rawBytes: 0, moduleCount: 0, moduleRawBytes: 0, scripts: [] };
  for (const [, attributes = "", body = ""] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    if (/\bsrc\s*=/i.test(attributes)) continue;
    const type = /\btype\s*=\s*["']?([^"'\s>]+)/i.exec(attributes)?.[1]?.toLowerCase();
    const isModule = type === "module";
    // JSON-LD, import maps and the like are data, not code.
    if (!isModule && type !== undefined && type !== "text/javascript" && type !== "application/javascript") continue;
    const size = Buffer.byteLength(body);
    found.scripts.push({
      type: type ?? "classic",
      rawBytes: size,
      gzipBytes: gzipSync(body, { level: 9 }).length,
      begins: body.trim().slice(0, INLINE_SCRIPT_PREVIEW_CHARS),
    });
    found.count += 1;
    found.rawBytes += size;
    if (isModule) {
      found.moduleCount += 1;
      found.moduleRawBytes += size;
    }
  }
  return found;
}

const INLINE_SCRIPT_PREVIEW_CHARS = 60;

/** E.g. "3 files 12,345 B raw, 4,567 B gzip". */
function totalsText(totals: Totals, unit: "file" | "request"): string {
  const counted = `${totals.count} ${unit}${totals.count === 1 ? "" : "s"}`;
  return `${counted} ${bytes(totals.rawBytes)} raw, ${bytes(totals.gzipBytes)} gzip`;
}

function byTypeText(snapshot: FetchSnapshot): string {
  return RESOURCE_TYPES.filter((type) => snapshot.byType[type].count > 0)
    .map((type) => `${type} ${totalsText(snapshot.byType[type], "file")}`)
    .join("; ");
}

function pad(count: number): string {
  return bytes(count).padStart(10);
}

function fileLines(resources: FetchedResource[], origin: string): string[] {
  return [...resources]
    .sort((a, b) => b.gzipBytes - a.gzipBytes)
    .map(
      (resource) =>
        `  ${pad(resource.rawBytes)} raw ${pad(resource.gzipBytes)} gzip  ${resource.type.padEnd(10)} ` +
        (resource.url.startsWith(origin) ? resource.url.slice(origin.length) : resource.url),
    );
}

function bytesLines(report: BytesReport, origin: string): string[] {
  const { beforeInteraction: before, afterScrolling: after, inlineScripts: inline } = report;
  const lines = [
    `js ${report.page}: ${totalsText(before.byType.script, "file")} ` +
      `(inline scripts: ${inline.count}, ${bytes(inline.rawBytes)} raw, of which modules ${bytes(inline.moduleRawBytes)}); ` +
      `js after scrolling: ${totalsText(after.byType.script, "file")}; ` +
      `all types before interaction: ${totalsText(before.all, "request")}; ` +
      `after scrolling: ${totalsText(after.all, "request")}; ` +
      `third-party requests: ${after.thirdPartyRequests.length}`,
    `bytes ${report.page} before interaction by type: ${byTypeText(before)}`,
    `bytes ${report.page} after scrolling (${report.scrollSteps} steps) by type: ${byTypeText(after)}`,
  ];
  // Every file, so each byte of the totals above has a name (largest first, gzip).
  const beforeUrls = new Set(before.resources.map((resource) => resource.url));
  lines.push(`files ${report.page} before interaction:`);
  lines.push(...fileLines(before.resources, origin));
  lines.push(`files ${report.page} added by scrolling:`);
  lines.push(
    ...fileLines(
      after.resources.filter((resource) => !beforeUrls.has(resource.url)),
      origin,
    ),
  );
  lines.push(`inline scripts in the document of ${report.page}:`);
  for (const script of inline.scripts) {
    lines.push(
      `  ${pad(script.rawBytes)} raw ${pad(script.gzipBytes)} gzip  ${script.type}: ${JSON.stringify(script.begins)}`,
    );
  }
  if (!before.networkIdle || !after.networkIdle) {
    lines.push(`  warning: the network of ${report.page} never went idle; sizes are what had arrived by then`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Main

/** `suffix` keeps a partial run (-bytes, -mobile) from replacing a full one. */
async function writeResults(results: object, isoDate: string, suffix: string): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `web-${isoDate.slice(0, 10)}${suffix}.json`);
  // Written whole then renamed, so a reader never sees half a file (*.tmp is git-ignored).
  await writeFile(`${file}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
  return file;
}

const USAGE =
  "usage: bench-web.ts [--no-build] [--runs N] [--bytes-only] [--form-factor mobile|desktop] [--baseline REV]";
const DEFAULT_LIGHTHOUSE_RUNS = 3;
const MAX_LIGHTHOUSE_RUNS = 9;

interface Options {
  build: boolean;
  runs: number;
  bytesOnly: boolean;
  baseline: string | null;
  formFactors: readonly FormFactor[];
}

function parseArgs(args: string[]): Options {
  const options: Options = {
    build: true,
    runs: DEFAULT_LIGHTHOUSE_RUNS,
    bytesOnly: false,
    baseline: null,
    formFactors: FORM_FACTORS,
  };
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (arg === "--no-build") {
      options.build = false;
    } else if (arg === "--bytes-only") {
      options.bytesOnly = true;
    } else if (arg === "--runs") {
      options.runs = Number(args[index + 1]);
      index += 1;
      if (!Number.isInteger(options.runs) || options.runs < 1 || options.runs > MAX_LIGHTHOUSE_RUNS) {
        throw new Error(`--runs takes a whole number from 1 to ${MAX_LIGHTHOUSE_RUNS} (${USAGE})`);
      }
    } else if (arg === "--form-factor") {
      const formFactor = FORM_FACTORS.find((known) => known === args[index + 1]);
      index += 1;
      if (!formFactor) throw new Error(`--form-factor takes ${FORM_FACTORS.join(" or ")} (${USAGE})`);
      options.formFactors = [formFactor];
    } else if (arg === "--baseline") {
      const rev = args[index + 1];
      index += 1;
      if (!rev || rev.startsWith("-")) throw new Error(`--baseline takes a git revision (${USAGE})`);
      options.baseline = rev;
    } else {
      throw new Error(`unknown argument ${arg} (${USAGE})`);
    }
  }
  return options;
}

/** One site measured: this tree's, or the baseline's. */
interface Target {
  label: string;
  /** The commit measured (this tree's says when it had changes not committed). */
  commit: string;
  origin: string;
  server: ChildProcess;
  siteDir: string;
  lighthouse: LighthouseReport[];
}

async function startTarget(label: string, commit: string, root: string, buildDir: string): Promise<Target> {
  const siteDir = await snapshotBuild(buildDir);
  const port = await findFreePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = startServer(root, port, siteDir);
  const target = { label, commit, origin, server, siteDir, lighthouse: [] };
  try {
    await waitForOk(`${origin}/`, server, `the ${label} server`, SERVER_START_TIMEOUT_MS);
  } catch (error) {
    await stopTarget(target);
    throw error;
  }
  return target;
}

async function stopTarget(target: Target): Promise<void> {
  await stopServer(target.server);
  await rm(target.siteDir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const { build, runs, bytesOnly, baseline, formFactors } = parseArgs(process.argv.slice(2));
  const baselineRoot = baseline ? await checkoutRevision(baseline, "bench-web-baseline-") : null;
  const targets: Target[] = [];
  try {
    if (build) await runBuild(ROOT, BUILD_DIR);
    targets.push(await startTarget("current", await describeTree(), ROOT, BUILD_DIR));
    if (baseline && baselineRoot) {
      const baselineBuild = join(baselineRoot, "dist");
      await runBuild(baselineRoot, baselineBuild);
      targets.push(
        await startTarget(`baseline ${baseline}`, await describeRevision(baseline), baselineRoot, baselineBuild),
      );
    }

    for (const formFactor of bytesOnly ? [] : formFactors) {
      for (const page of LIGHTHOUSE_PAGES) {
        // Runs alternate between the sites, so a busy spell of the machine falls on both.
        const pageRuns = new Map<Target, LighthouseReport[]>(targets.map((target) => [target, []]));
        for (let run = 0; run < runs; run += 1) {
          for (const target of targets) {
            pageRuns.get(target)?.push(await runLighthouseWithRetries(target.origin, page, formFactor));
          }
        }
        for (const target of targets) {
          const report = medianRun(pageRuns.get(target) ?? []);
          for (const line of lighthouseLines(report, target.label)) console.log(line);
          target.lighthouse.push(report);
        }
      }
    }

    const bytesReports: BytesReport[] = [];
    for (const target of targets) {
      const report = await withTimeout(
        measureBytes(target.origin, BYTES_PAGE),
        BYTES_RUN_TIMEOUT_MS,
        "Measuring bytes",
      );
      console.log(`bytes of ${target.label} (${target.commit}):`);
      for (const line of bytesLines(report, target.origin)) console.log(line);
      bytesReports.push(report);
    }

    const date = new Date().toISOString();
    const machine = { ...describeMachine(), chromium: bytesReports[0]?.browserVersion };
    const [current, ...others] = targets.map((target, index) => ({
      commit: target.commit,
      lighthouse: target.lighthouse,
      bytes: bytesReports[index],
    }));
    const results = {
      date,
      machine,
      ...current,
      ...(baseline && others[0] ? { baseline: { rev: baseline, ...others[0] } } : {}),
    };
    const suffix = bytesOnly ? "-bytes" : formFactors.length === 1 ? `-${formFactors[0]}` : "";
    const file = await writeResults(results, date, suffix);
    console.log(`results written to ${relative(ROOT, file)}`);
  } catch (error) {
    // "fetch failed" and the like mean little until one knows the server had died.
    const dead = targets.find((target) => hasExited(target.server));
    if (dead) {
      throw new Error(
        `${errorMessage(error)} (the ${dead.label} server had exited, ${exitStatus(dead.server)}; its log is above)`,
      );
    }
    throw error;
  } finally {
    for (const target of targets) await stopTarget(target);
    if (baselineRoot) await rm(baselineRoot, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(`bench:web failed: ${errorMessage(error)}`);
  // A run that timed out may leave a browser connection open; do not hang on it.
  process.exit(1);
});
