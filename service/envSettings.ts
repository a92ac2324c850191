/**
 * Reading settings from the environment, shared by the service's settings (config.ts) and the
 * payments' (payments/settings.ts). It imports nothing, so either may use it without crossing a
 * wall; each names the error its own callers expect.
 */

/** Unset or only white space: the setting takes its default. */
export function isBlank(value: string | undefined): value is undefined {
  return value === undefined || value.trim() === "";
}

/** The integer setting `name`, `fallback` when blank; anything else out of min..max throws `Failure`. */
export function integerSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  range: { fallback: number; min: number; max: number },
  Failure: new (message: string) => Error,
): number {
  const value = env[name];
  if (isBlank(value)) return range.fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < range.min || parsed > range.max) {
    throw new Failure(`${name} must be an integer from ${range.min} to ${range.max}, got "${value}"`);
  }
  return parsed;
}

/** The setting `name`, one of `choices` in any case, `fallback` when blank; anything else throws `Failure`. */
export function choiceSetting<Choice extends string>(
  name: string,
  value: string | undefined,
  choices: { options: readonly Choice[]; fallback: Choice },
  Failure: new (message: string) => Error,
): Choice {
  if (isBlank(value)) return choices.fallback;
  const choice = value.trim().toLowerCase();
  if (!(choices.options as readonly string[]).includes(choice)) {
    throw new Failure(`${name} must be one of ${choices.options.join(", ")}, got "${value}"`);
  }
  return choice as Choice;
}
