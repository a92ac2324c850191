-- compatible-with: 14
-- Which older code may still run on a database after each migration
-- (docs/decisions/2026-11-27-refuse-downgrades.md). A migration whose file has a
-- `-- compatible-with: NNN` line is recorded with NNN here: code whose newest migration is NNN or
-- later still runs on the database (an expand-only change, as a rolling deploy needs). Code that
-- finds migrations it does not know reads this column of the newest of them, since it cannot read
-- the newer file, and refuses to start unless its level is named (realtime/storage/migrations.ts).
-- Null: no declaration, older code is refused. Expand only: a new nullable column.
ALTER TABLE schema_migrations ADD COLUMN compatible_with integer
  CONSTRAINT schema_migrations_compatible_below CHECK (compatible_with < version);
