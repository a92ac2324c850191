/**
 * The tables the docs copy from code, checked against the code: product.md's tier tables against
 * src/data/tiers.ts, settings.md's metrics table against what createMetrics() registers, and its
 * configuration table against the environment variables the service reads and their defaults,
 * protocol.md's error codes against the refusal texts the service sends; and every table in docs/
 * and the README keeps its cells short enough to read. The docs stay hand-written; each failure names the row that is missing, extra or wrong.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { collectDefaultMetrics, Registry } from "prom-client";
import { describe, expect, it, vi } from "vitest";
import { configWarnings, readServiceConfig } from "../../service/config.ts";
import { createMetrics } from "../../service/metrics.ts";
import { TIERS } from "../../src/data/tiers.ts";
import { REFUSAL_TEXTS, tooLowText } from "../../src/lib/auction/refusalTexts.ts";

/** The fallback of every integer and choice setting, as config.ts and payments/settings.ts pass it. */
const fallbacks = vi.hoisted(() => new Map<string, { kind: "integer" | "choice"; value: number | string }>());

vi.mock("../../service/envSettings.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../service/envSettings.ts")>();
  return {
    ...original,
    integerSetting: (...args: Parameters<typeof original.integerSetting>) => {
      fallbacks.set(args[1], { kind: "integer", value: args[2].fallback });
      return original.integerSetting(...args);
    },
    choiceSetting: (...args: Parameters<typeof original.choiceSetting>) => {
      fallbacks.set(args[0], { kind: "choice", value: args[2].fallback });
      return original.choiceSetting(...args);
    },
  };
});

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PRODUCT = readFileSync(join(ROOT, "docs/product.md"), "utf8");
const SETTINGS = readFileSync(join(ROOT, "docs/settings.md"), "utf8");
const PROTOCOL = readFileSync(join(ROOT, "docs/protocol.md"), "utf8");

/**
 * The rows of the one table in `doc` whose header row has exactly `columns`, each as a record of
 * its cells by column (cells split at unescaped `|`, trimmed).
 */
function table(doc: string, columns: readonly string[]): Record<string, string>[] {
  const lines = doc.split("\n");
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\|/, "")
      .replace(/(?<!\\)\|$/, "")
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim().replaceAll("\\|", "|"));
  const headers = lines.flatMap((line, index) =>
    line.startsWith("|") && cells(line).join("\u0000") === columns.join("\u0000") ? [index] : [],
  );
  if (headers.length !== 1)
    throw new Error(`expected one table headed | ${columns.join(" | ")} |, found ${headers.length}`);
  const rows: Record<string, string>[] = [];
  for (const line of lines.slice((headers[0] as number) + 2)) {
    if (!line.startsWith("|")) break;
    const row = cells(line);
    if (row.length !== columns.length)
      throw new Error(`a row with ${row.length} cells, not ${columns.length}: ${line}`);
    rows.push(Object.fromEntries(columns.map((column, index) => [column, row[index] as string])));
  }
  return rows;
}

/**
 * What differs between the rows the doc shows and the rows the code gives, by key: "missing"
 * (in the code only), "extra" (in the doc only) and each cell that differs; then, if `ordered`,
 * the order.
 */
function compareRows(
  what: string,
  documented: Record<string, string>[],
  expected: Record<string, string>[],
  { key, ordered }: { key: string; ordered: boolean },
): string[] {
  const problems: string[] = [];
  const byKey = new Map(documented.map((row) => [row[key], row]));
  const expectedKeys = new Set(expected.map((row) => row[key]));
  for (const row of expected) {
    const shown = byKey.get(row[key]);
    if (!shown) {
      problems.push(`${what} ${row[key]}: missing from the doc`);
      continue;
    }
    for (const [column, value] of Object.entries(row)) {
      if (shown[column] !== value) {
        problems.push(`${what} ${row[key]}: ${column} is "${shown[column]}" in the doc, "${value}" in the code`);
      }
    }
  }
  for (const row of documented) {
    if (!expectedKeys.has(row[key])) problems.push(`${what} ${row[key]}: in the doc, not in the code`);
  }
  const order = (rows: Record<string, string>[]) => rows.map((row) => row[key]).join(", ");
  if (ordered && problems.length === 0 && order(documented) !== order(expected)) {
    problems.push(`${what}s: the doc's order is ${order(documented)}, the code's ${order(expected)}`);
  }
  return problems;
}

describe("docs/product.md's tier tables (section 3) match src/data/tiers.ts", () => {
  it("id, name, price, spins, popular, variant and icon", () => {
    const documented = table(PRODUCT, ["id", "name", "price", "spins", "popular", "variant", "icon"]);
    const expected = TIERS.map((tier) => ({
      id: String(tier.id),
      name: tier.name,
      price: String(tier.price),
      spins: String(tier.spins),
      popular: tier.popular ? "yes" : "no",
      variant: tier.variant,
      icon: tier.icon,
    }));
    expect(compareRows("tier", documented, expected, { key: "id", ordered: true })).toEqual([]);
  });

  it("description and features", () => {
    const documented = table(PRODUCT, ["id", "description", "features"]);
    const expected = TIERS.map((tier) => ({
      id: String(tier.id),
      description: tier.description,
      features: tier.features.join("; "),
    }));
    expect(compareRows("tier", documented, expected, { key: "id", ordered: true })).toEqual([]);
  });
});

/** `name{label,label}` as the metrics table writes a metric. */
function metricCell(cell: string): { name: string; labels: string } {
  const match = /^`([a-z_:][a-z0-9_:]*)(?:\{([a-z_,]*)\})?`$/.exec(cell);
  if (!match) throw new Error(`not a metric: ${cell}`);
  return { name: match[1] as string, labels: match[2] ?? "" };
}

describe("docs/settings.md's metrics table matches createMetrics()", () => {
  it("lists exactly the service's own metrics, with their labels and types and a meaning each", () => {
    const defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
    const processMetrics = new Set(defaults.getMetricsAsArray().map((metric) => (metric as unknown as Named).name));
    const registered = createMetrics()
      .registry.getMetricsAsArray()
      .map((metric) => metric as unknown as Named)
      .filter((metric) => !processMetrics.has(metric.name));
    expect(registered.length).toBeGreaterThan(20);

    const documented = table(SETTINGS, ["metric", "type", "meaning"]).map((row) => {
      const { name, labels } = metricCell(row.metric as string);
      return { metric: name, labels, type: row.type as string, meaning: row.meaning ? "given" : "empty" };
    });
    const expected = registered.map((metric) => ({
      metric: metric.name,
      labels: metric.labelNames.join(","),
      type: metric.type,
      meaning: "given",
    }));
    // The doc groups the metrics by subject, not in the order they are registered.
    expect(compareRows("metric", documented, expected, { key: "metric", ordered: false })).toEqual([]);
  });
});

/** What a prom-client metric object holds at run time. */
interface Named {
  name: string;
  type: string;
  labelNames: readonly string[];
}

const SERVICE = join(ROOT, "service");

/** The environment variables the service reads, as readServiceConfig and configWarnings read them. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  // Payments and the console on, so that their settings are read too (startLine.test.ts's hash).
  const values: NodeJS.ProcessEnv = {
    SOLANA_RPC_URL: "https://rpc.example/",
    PUBLIC_PAYMENT_ADDRESS: "mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN",
    PUBLIC_CONTRACT_ADDRESS: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    ADMIN_PASSWORD_HASH: `scrypt:17:8:1:${Buffer.alloc(16, 1).toString("base64")}:${Buffer.alloc(32, 2).toString("base64")}`,
    ADMIN_SESSION_SECRET: "s".repeat(32),
  };
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === "string") read.add(name);
      return Reflect.get(target, name);
    },
  });
  const config = readServiceConfig(env, 20_000);
  expect(config.payments).not.toBeNull();
  expect(config.admin).not.toBeNull();
  configWarnings(env);
  return read;
}

/** Settings whose default the code computes, so the doc says how in words. */
const COMPUTED_DEFAULTS: Record<string, string> = { MAX_CONNECTIONS: "from the process's file limit" };

describe("docs/settings.md's configuration table matches what the service reads", () => {
  it("the service reads the environment only through readServiceConfig and configWarnings (config.ts)", () => {
    const readers = readdirSync(SERVICE, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => join(entry.parentPath, entry.name))
      .filter((file) => /\bprocess\.env\b/.test(readFileSync(file, "utf8")))
      .map((file) => relative(SERVICE, file));
    expect(readers).toEqual(["config.ts"]);
  });

  it("lists exactly the variables read, and each numeric or choice default as the code has it", () => {
    const read = variablesRead();
    expect(read.has("PORT") && read.has("PAYMENT_RETENTION_DAYS") && read.has("ADMIN_SESSION_SECRET")).toBe(true);

    const documented = new Map<string, string>();
    const problems: string[] = [];
    for (const row of table(SETTINGS, ["variable", "default", "meaning"])) {
      const names = [...(row.variable as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] as string);
      // `A` / `B` | `1` / `2`: two settings in one row.
      const defaults = names.length > 1 ? (row.default as string).split(" / ") : [row.default as string];
      if (names.length === 0 || defaults.length !== names.length) {
        problems.push(`row ${row.variable}: cannot pair its variables with its defaults "${row.default}"`);
        continue;
      }
      names.forEach((name, index) => {
        if (documented.has(name)) problems.push(`${name}: listed twice`);
        documented.set(name, (defaults[index] as string).trim());
      });
    }

    const missing = [...read].filter((name) => !documented.has(name));
    const extra = [...documented.keys()].filter((name) => !read.has(name));
    problems.push(...missing.map((name) => `${name}: read by the service, missing from the doc`));
    problems.push(...extra.map((name) => `${name}: in the doc, not read by the service`));

    for (const [name, shown] of documented) {
      const fallback = fallbacks.get(name);
      if (!fallback) continue;
      const value = /^`([^`]*)`$/.exec(shown)?.[1];
      if (value === undefined) {
        if (fallback.kind === "integer" && !(name in COMPUTED_DEFAULTS)) {
          problems.push(`${name}: the doc's default "${shown}" is no number; the code's is ${fallback.value}`);
        }
      } else if (value !== String(fallback.value)) {
        problems.push(`${name}: the doc's default is ${value}, the code's ${fallback.value}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("docs/protocol.md's error codes match the refusal texts the service sends", () => {
  it("one row a code, in the code's order, each with the message the service sends", () => {
    const documented = table(PROTOCOL, ["code", "meaning", "message"]).map((row) => ({
      code: row.code ?? "",
      message: row.message ?? "",
    }));
    // too_low names the highest it lost to, and bad_message adds which field: the doc writes the fixed part.
    const sent = (code: keyof typeof REFUSAL_TEXTS) =>
      code === "too_low"
        ? tooLowText(0).replace("$0.00", "$X")
        : code === "bad_message"
          ? `${REFUSAL_TEXTS[code]} …`
          : REFUSAL_TEXTS[code];
    const expected = Object.keys(REFUSAL_TEXTS).map((code) => ({
      code: `\`${code}\``,
      message: sent(code as keyof typeof REFUSAL_TEXTS),
    }));
    expect(compareRows("error code", documented, expected, { key: "code", ordered: true })).toEqual([]);
  });
});

/** A cell holds a sentence or two; more goes in a list after the table. */
const MAX_CELL_CHARACTERS = 250;

describe("every table in docs/ and the README keeps its cells to a sentence or two", () => {
  it(`no cell over ${MAX_CELL_CHARACTERS} characters`, () => {
    const docs = readdirSync(join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => join(ROOT, "docs", name));
    const long: string[] = [];
    for (const file of [...docs, join(ROOT, "README.md")]) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          if (!line.startsWith("|")) return;
          for (const cell of line.split(/(?<!\\)\|/)) {
            const text = cell.trim();
            if (text.length > MAX_CELL_CHARACTERS) {
              long.push(`${relative(ROOT, file)}:${index + 1}: ${text.length} characters: ${text.slice(0, 60)}…`);
            }
          }
        });
    }
    expect(long).toEqual([]);
  });
});
