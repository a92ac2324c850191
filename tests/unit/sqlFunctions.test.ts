/**
 * The split of sql/ (docs/design.md#7): numbered migrations hold the schema, sql/functions/ every
 * function and view, applied after the migrations at a version the database records.
 */
import { describe, expect, it } from "vitest";
import { FUNCTIONS_DIGESTS, readFunctions } from "../../service/storage/functions.ts";
import { readMigrations } from "../../service/storage/migrations.ts";

function withoutComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, "");
}

describe("sql/functions/", () => {
  it("has its digest recorded as the newest version", async () => {
    const { digest, version } = await readFunctions();
    expect(
      digest,
      `sql/functions/ changed since version ${version}: add "${digest}" to FUNCTIONS_DIGESTS (service/storage/functions.ts)`,
    ).toBe(FUNCTIONS_DIGESTS.at(-1));
    for (const recorded of FUNCTIONS_DIGESTS) expect(recorded).toMatch(/^[0-9a-f]{64}$/);
  });

  it("creates only functions, views and the triggers that call them, each replaceable, so that applying it again is harmless", async () => {
    const { files } = await readFunctions();
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const statements = withoutComments(file.sql).match(/^(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE)\b[^\n(]*/gm);
      expect(statements, file.name).not.toBeNull();
      for (const statement of statements ?? []) {
        expect(statement, file.name).toMatch(/^CREATE OR REPLACE (FUNCTION|VIEW|TRIGGER) \w+/);
      }
    }
  });

  it("is called by no numbered migration, which would run against today's bodies, not those of its time", async () => {
    const { files } = await readFunctions();
    const names = files.flatMap((file) =>
      [...file.sql.matchAll(/^CREATE OR REPLACE (?:FUNCTION|VIEW|TRIGGER) (\w+)/gm)].map((match) => match[1] as string),
    );
    expect(names).toContain("place_auction_bids");
    expect(names).toContain("auction_bids_wire");
    for (const migration of await readMigrations()) {
      const sql = withoutComments(migration.sql);
      for (const name of names) {
        // Dropping an older signature or definition is the one use a migration makes of them.
        const uses = [...sql.matchAll(new RegExp(`^.*\\b${name}\\b.*$`, "gm"))].map((match) => match[0].trim());
        const calls = uses.filter((line) => !/^DROP (FUNCTION|VIEW) (IF EXISTS )?\w+\s*(\(|;)/.test(line));
        expect(calls, `${migration.name} uses ${name}`).toEqual([]);
      }
    }
  });
});
