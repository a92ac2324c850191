/**
 * The operator at the console (docs/design.md#6a) as a browser drives it, over plain HTTP: the
 * sign-in form's password for the session cookie, then the console's forms posted with the page's
 * own Origin. For the fault tests, where an action may meet a database that is down, an instance
 * killed or draining, or a load balancer answering 502: the operator tries again, like a person
 * would, until a deadline, and every try is recorded.
 *
 *   const operator = openOperatorConsole(balancer.httpUrl, PASSWORD);
 *   await operator.signIn();
 *   await operator.hide(bidId);        // resolves once the console says the bid is hidden
 *   await operator.block("Mallory");   // restore(id), unblock(name) likewise
 *   operator.actions                   // each action: its tries, the refusals met, the notice
 *
 * An answer other than the console's redirect with a notice (a 5xx, a 502 from the balancer, a
 * refused or reset connection, no answer in time) may or may not have changed anything: the next
 * try finds out, and the console then says "already hidden" and so on. A 401 means the session is
 * gone: the operator signs in again. A 403 or an unknown notice is a bug and throws.
 */

/** What each action is answered with when it changed something, and when it was already so. */
const NOTICES = {
  hide: { done: "hidden", already: "already_hidden" },
  restore: { done: "restored", already: "already_visible" },
  block: { done: "blocked", already: "already_blocked" },
  unblock: { done: "unblocked", already: "not_blocked" },
} as const;
type ConsoleActionKind = keyof typeof NOTICES;

export interface ConsoleAction {
  kind: ConsoleActionKind;
  /** A bid id (hide, restore) or a bidder name (block, unblock). */
  target: number | string;
  /** performance.now() when the first try was sent and when the console confirmed it. */
  startedAt: number;
  doneAt?: number;
  /** The notice of the confirming answer: the action's own ("hidden"), or "already_…" after a refused try. */
  notice?: string;
  /** Why each earlier try was refused: a status, or the connection's error code. */
  refusals: string[];
}

export interface OperatorConsole {
  /** Signs in now (each action signs in again whenever the session is refused). */
  signIn(): Promise<void>;
  hide(bidId: number): Promise<ConsoleAction>;
  restore(bidId: number): Promise<ConsoleAction>;
  block(name: string): Promise<ConsoleAction>;
  unblock(name: string): Promise<ConsoleAction>;
  readonly actions: readonly ConsoleAction[];
  /** Sign-ins that got a session, and sign-in tries refused on the way (busy, 5xx, no connection). */
  readonly signIns: { done: number; refused: number };
}

export interface OperatorConsoleOptions {
  /** Longest an action (with its sign-ins) may take before the test fails. */
  deadlineMs?: number;
  /** How long a single request may go unanswered. */
  requestTimeoutMs?: number;
  /** The pause between tries. */
  retryMs?: number;
}

const SESSION_COOKIE = "nothing_admin";

/** Why a request got no answer: undici's cause code (ECONNREFUSED, ECONNRESET…) or the abort. */
function failureReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (cause?.code) return cause.code;
  return error instanceof Error ? error.name : String(error);
}

export function openOperatorConsole(
  baseUrl: string,
  password: string,
  options: OperatorConsoleOptions = {},
): OperatorConsole {
  const deadlineMs = options.deadlineMs ?? 45_000;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const retryMs = options.retryMs ?? 250;
  const actions: ConsoleAction[] = [];
  const signIns = { done: 0, refused: 0 };
  let cookie: string | null = null;

  /** A form posted as the console's page posts it: same Origin, the session cookie, no redirects followed. */
  async function post(path: string, form: Record<string, string>): Promise<Response | string> {
    try {
      return await fetch(`${baseUrl}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Origin: baseUrl,
          ...(cookie ? { Cookie: cookie } : {}),
        },
        body: new URLSearchParams(form).toString(),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      return failureReason(error);
    }
  }

  const pause = () => new Promise((resolve) => setTimeout(resolve, retryMs));

  async function signIn(deadline: number): Promise<void> {
    while (performance.now() < deadline) {
      const answer = await post("/admin/login", { password });
      if (typeof answer !== "string") await answer.arrayBuffer();
      if (typeof answer !== "string" && answer.status === 303) {
        const pair = (answer.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
        if (!pair.startsWith(`${SESSION_COOKIE}=`)) throw new Error(`sign-in set no session cookie: "${pair}"`);
        cookie = pair;
        signIns.done += 1;
        return;
      }
      if (typeof answer !== "string" && [401, 403, 429].includes(answer.status)) {
        throw new Error(`the console refused the operator's sign-in with ${answer.status}`);
      }
      // 503 (checks busy), another 5xx, a 502 from the balancer, or no connection: again.
      signIns.refused += 1;
      await pause();
    }
    throw new Error(`the operator could not sign in within ${deadlineMs} ms`);
  }

  async function act(kind: ConsoleActionKind, target: number | string): Promise<ConsoleAction> {
    const action: ConsoleAction = { kind, target, startedAt: performance.now(), refusals: [] };
    actions.push(action);
    const path =
      typeof target === "number"
        ? `/admin/bids/${target}/${kind}`
        : kind === "block"
          ? "/admin/blocks"
          : "/admin/blocks/remove";
    const form: Record<string, string> = typeof target === "number" ? {} : { name: target };
    const deadline = action.startedAt + deadlineMs;
    // A try with no answer, or a 5xx, may still have committed; a 401 did nothing.
    let mayHaveActed = false;
    while (performance.now() < deadline) {
      if (!cookie) await signIn(deadline);
      const answer = await post(path, form);
      if (typeof answer === "string") {
        action.refusals.push(answer);
        mayHaveActed = true;
      } else {
        await answer.arrayBuffer();
        const location = answer.headers.get("location") ?? "";
        if (answer.status === 303 && location.startsWith("/admin?")) {
          const notice = new URLSearchParams(location.slice("/admin?".length)).get("done") ?? "";
          const expected = NOTICES[kind];
          // "Already so" is right only when an earlier try may have done it.
          const allowed: string[] = mayHaveActed ? [expected.done, expected.already] : [expected.done];
          if (!allowed.includes(notice)) {
            throw new Error(
              `${kind} ${target}: the console answered "${notice}" after ${action.refusals.length} refusals`,
            );
          }
          action.notice = notice;
          action.doneAt = performance.now();
          return action;
        }
        if (answer.status === 401) cookie = null;
        else if (answer.status >= 500) mayHaveActed = true;
        else throw new Error(`${kind} ${target}: the console answered ${answer.status} ${location}`);
        action.refusals.push(String(answer.status));
      }
      await pause();
    }
    throw new Error(
      `${kind} ${target} was not confirmed within ${deadlineMs} ms (refused: ${action.refusals.join(", ")})`,
    );
  }

  return {
    signIn: () => signIn(performance.now() + deadlineMs),
    hide: (bidId) => act("hide", bidId),
    restore: (bidId) => act("restore", bidId),
    block: (name) => act("block", name),
    unblock: (name) => act("unblock", name),
    actions,
    signIns,
  };
}
