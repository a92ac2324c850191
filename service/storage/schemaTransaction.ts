/**
 * The transaction a backend lends the schema's writers (migrations.ts, functions.ts,
 * nameKeyVersion.ts): a module of its own, below all three, so that none imports another for it.
 */

/** What a backend lends the runner inside one transaction. */
export interface MigrationTransaction {
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Runs a script of several statements. */
  exec(script: string): Promise<void>;
}

export type InTransaction = <T>(work: (tx: MigrationTransaction) => Promise<T>) => Promise<T>;
