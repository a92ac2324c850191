/** A Content-Security-Policy's directives by name, for tests that read one back. */
export function policyDirectives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split(";").map((directive) => {
      const [name = "", ...values] = directive.trim().split(/\s+/);
      return [name, values];
    }),
  );
}
