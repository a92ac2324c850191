/**
 * The docs' links hold: every relative link in docs/ and the README names a file that exists and,
 * with a #fragment, a heading or an explicit anchor of it; every `docs/….md#anchor` a code comment
 * cites does too. A moved section or a renamed heading fails here, not in a reader's hands.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function trackedFiles(...paths: string[]): string[] {
  return execFileSync("git", ["ls-files", "-z", ...paths], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((file) => file !== "" && existsSync(join(ROOT, file)));
}

const withoutCodeBlocks = (text: string) => text.replace(/```[\s\S]*?```/g, "");

/** GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to hyphens. */
function headingSlug(heading: string): string {
  const text = heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}_\- ]/gu, "").replace(/ /g, "-");
}

const anchorsOf = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let found = anchorsOf.get(file);
  if (found) return found;
  const text = readFileSync(file, "utf8");
  found = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading = ""] of withoutCodeBlocks(text).matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = headingSlug(heading);
    const times = seen.get(slug) ?? 0;
    seen.set(slug, times + 1);
    found.add(times === 0 ? slug : `${slug}-${times}`);
  }
  for (const [, id = ""] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id);
  anchorsOf.set(file, found);
  return found;
}

/** What is wrong with a link to `target#anchor`, or null when it holds. */
function brokenTarget(target: string, anchor: string | undefined): string | null {
  if (!existsSync(target)) return "no such file";
  if (!anchor) return null;
  if (statSync(target).isDirectory() || !target.endsWith(".md")) return "an anchor on a file that has none";
  return anchors(target).has(anchor) ? null : `no heading or anchor #${anchor}`;
}

describe("the docs' links", () => {
  it("every relative link in docs/ and the README reaches its file and anchor", () => {
    const broken: string[] = [];
    for (const file of trackedFiles("docs/*.md", "docs/**/*.md", "README.md", "CHANGELOG.md")) {
      const path = join(ROOT, file);
      for (const [, link = ""] of withoutCodeBlocks(readFileSync(path, "utf8")).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const [target = "", anchor] = link.split("#");
        const problem = brokenTarget(target === "" ? path : resolve(dirname(path), target), anchor);
        if (problem) broken.push(`${file}: ${link}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every docs/….md#anchor the code cites exists", () => {
    const broken: string[] = [];
    let citations = 0;
    for (const file of trackedFiles("service", "src", "scripts", "tests", "sql", ".ci", "Dockerfile")) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const [, doc = "", anchor] of text.matchAll(/docs\/([A-Za-z0-9_./-]+\.md)(?:#([0-9A-Za-z_-]+))?/g)) {
        citations += 1;
        const problem = brokenTarget(join(ROOT, "docs", doc), anchor);
        if (problem)
          broken.push(`${relative(ROOT, join(ROOT, file))}: docs/${doc}${anchor ? `#${anchor}` : ""}: ${problem}`);
      }
    }
    expect(citations).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });
});
