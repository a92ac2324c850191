/**
 * What a message that replaces a page's state reflects: the moderation version and the round (and
 * whether its end was recorded). The broadcaster compares the standing of what it sent with the
 * newest it heard of, so a page never keeps a list from before an action or a round's end.
 */
export interface Standing {
  moderation: number;
  /** 0 before round 1. */
  round: number;
  roundClosed: boolean;
}

export const INITIAL_STANDING: Standing = { moderation: 0, round: 0, roundClosed: false };

/** Whether `seen` misses something of `heard`: a later action, a later round, or this round's end. */
export function isBehind(seen: Standing, heard: Standing): boolean {
  if (seen.moderation < heard.moderation || seen.round < heard.round) return true;
  return seen.round === heard.round && !seen.roundClosed && heard.roundClosed;
}

/** The newer of each part. */
export function newest(a: Standing, b: Standing): Standing {
  const round = Math.max(a.round, b.round);
  const closedIn = (s: Standing) => s.round === round && s.roundClosed;
  return { moderation: Math.max(a.moderation, b.moderation), round, roundClosed: closedIn(a) || closedIn(b) };
}
