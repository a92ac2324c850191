/**
 * fast-check's parameters for a property: the suite's fixed seed, or FC_SEED's to run another, and
 * the number of runs, printed so that any run can be replayed.
 *
 *   fc.assert(property, seededRuns(20_261_122, 1_000));           // "fast-check seed 20261122 (FC_SEED=…"
 *   fc.assert(property, seededRuns(20_261_122, 400, "postgres"));
 */
export function seededRuns(fixedSeed: number, numRuns: number, where?: string): { seed: number; numRuns: number } {
  const seed = Number(process.env.FC_SEED ?? fixedSeed);
  console.info(`fast-check seed ${seed}${where ? ` on ${where}` : ""} (FC_SEED=${seed} to replay), ${numRuns} runs`);
  return { seed, numRuns };
}
