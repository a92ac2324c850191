/**
 * Timers on a clock the test advances by hand (src/lib/timers.ts's interface): the page's heartbeat
 * and acknowledgement deadlines fire only when `advance` passes them, while sockets stay real.
 */
import type { Timers } from "../../src/lib/timers.ts";

export class ManualTimers implements Timers {
  now = 0;
  private queue: { due: number; ms: number; callback: () => void; id: number }[] = [];
  private lastId = 0;
  readonly scheduled: number[] = [];

  setTimeout(callback: () => void, ms: number) {
    const id = ++this.lastId;
    this.queue.push({ due: this.now + ms, ms, callback, id });
    this.scheduled.push(ms);
    return id;
  }

  clearTimeout(handle: unknown) {
    this.queue = this.queue.filter((timer) => timer.id !== handle);
  }

  /** Moves the clock on by `ms`, running every timer due by then in order. */
  advance(ms: number) {
    const until = this.now + ms;
    for (;;) {
      const next = this.queue.filter((timer) => timer.due <= until).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.queue = this.queue.filter((timer) => timer !== next);
      this.now = next.due;
      next.callback();
    }
    this.now = until;
  }

  /** The delays the pending timeouts were set for. */
  pendingDelays(): number[] {
    return this.queue.map((timer) => timer.ms);
  }

  /** Runs (and removes) every pending timeout set for `ms`, whatever the clock says; how many ran. */
  fireSetFor(ms: number): number {
    const due = this.queue.filter((timer) => timer.ms === ms);
    this.queue = this.queue.filter((timer) => timer.ms !== ms);
    for (const timer of due) timer.callback();
    return due.length;
  }
}
