/**
 * A migration's `-- compatible-with: NNN` line (docs/decisions/2026-11-27-refuse-downgrades.md):
 * the oldest level of code that still runs on the database after it, read from the file and checked.
 */
import { describe, expect, it } from "vitest";
import { compatibleWithOf, readMigrations } from "../../service/storage/migrations.ts";

describe("compatible-with", () => {
  it("is read from a line of its own, anywhere in the file", () => {
    expect(compatibleWithOf(20, "020_x.sql", "-- compatible-with: 19\nALTER TABLE t ADD COLUMN c int;")).toBe(19);
    expect(compatibleWithOf(20, "020_x.sql", "-- Expand only.\n--compatible-with:  17  \nSELECT 1;")).toBe(17);
    expect(compatibleWithOf(20, "020_x.sql", "-- Not compatible-with: 19, says the prose.\nSELECT 1;")).toBeUndefined();
    expect(compatibleWithOf(20, "020_x.sql", "ALTER TABLE t DROP COLUMN c;")).toBeUndefined();
  });

  it("names a level below its own, and only where the database can record it", () => {
    expect(() => compatibleWithOf(20, "020_x.sql", "-- compatible-with: 20")).toThrow(
      "020_x.sql: compatible-with 20 must name a level below its own",
    );
    expect(() => compatibleWithOf(14, "014_x.sql", "-- compatible-with: 13")).toThrow(
      "014_x.sql: compatible-with is recorded from migration 15 on",
    );
  });

  it("is declared by the expand-only migrations of sql/ that allow the release before them", async () => {
    const declared = (await readMigrations())
      .filter((migration) => migration.compatibleWith !== undefined)
      .map((migration) => [migration.name, migration.compatibleWith]);
    expect(declared).toEqual([
      ["015_migration_compatibility.sql", 14],
      ["016_name_key_per_row.sql", 14],
      ["017_payment_client_networks.sql", 16],
      ["018_admin_sign_in_networks.sql", 17],
      ["019_maximum_bids.sql", 18],
      ["020_stale_key_rows_index.sql", 19],
      ["021_name_checks_in_a_trigger.sql", 20],
    ]);
  });
});
