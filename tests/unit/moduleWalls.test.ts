/**
 * The walls between the service's modules (issue 21): storage is below the auction, so it never
 * imports from it; names (the key and the filter) are below both, so they import neither; the
 * HTTP edge (http/) is below every route family. Read
 * from the source's import statements, resolved as paths, so a wall cannot be crossed by an
 * import written another way ("../auction/x.ts", "../../service/auction/x.ts").
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SERVICE = fileURLToPath(new URL("../../service/", import.meta.url));
// `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")`.
const SPECIFIER = /\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g;

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Each relative import of the modules under `dir`, as a path under service/ ("auction/bidDesk.ts"). */
function importsOf(dir: string): { file: string; target: string }[] {
  return sourcesUnder(join(SERVICE, dir)).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(SPECIFIER)]
      .map((match) => match[1] as string)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => ({
        file: relative(SERVICE, file),
        target: relative(SERVICE, resolve(dirname(file), specifier)),
      })),
  );
}

const into =
  (...dirs: string[]) =>
  (found: { target: string }) =>
    dirs.some((dir) => found.target.startsWith(`${dir}/`));

describe("the walls between the service's modules", () => {
  it("reads the imports it checks (the check is not vacuous)", () => {
    expect(importsOf("storage").some((found) => found.target === "names/nameKey.ts")).toBe(true);
  });

  it("storage imports nothing from the auction, payments nor the console", () => {
    expect(importsOf("storage").filter(into("auction", "payments", "console"))).toEqual([]);
  });

  it("names import nothing from the auction, the console or storage", () => {
    expect(importsOf("names").filter(into("auction", "console", "storage"))).toEqual([]);
  });

  it("the HTTP edge imports no route family nor storage: everything above may use it", () => {
    expect(importsOf("http").some((found) => found.target === "logger.ts")).toBe(true);
    expect(importsOf("http").filter(into("auction", "payments", "console", "storage", "names"))).toEqual([]);
  });
});
