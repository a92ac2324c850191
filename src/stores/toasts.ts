import { atom } from "nanostores";

/** docs/design.md#3a: 5 s on screen, at most 3 stacked, newest on top. */
export const TOAST_DURATION_MS = 5_000;
export const MAX_VISIBLE_TOASTS = 3;

/**
 * "destructive" marks errors: red styling, announced as an alert. "personal" is news for this
 * visitor alone (outbid, won: docs/product-behaviour.md#4-auction): accent styling, announced as
 * an alert too. "default" is announced politely.
 */
type ToastVariant = "default" | "destructive" | "personal";

/** A link the toast offers, to a place in the page ("Bid again" goes to the bid form). */
interface ToastAction {
  label: string;
  href: string;
}

export interface Toast {
  id: number;
  title: string;
  description?: string;
  variant: ToastVariant;
  action?: ToastAction;
}

export interface ToastInput {
  title: string;
  description?: string;
  variant?: ToastVariant;
  action?: ToastAction;
  durationMs?: number;
}

/** The one toaster's queue, newest first. Every island shows its toasts through showToast. */
export const $toasts = atom<readonly Toast[]>([]);

let lastToastId = 0;

/** Each toast's countdown: running (timer set) or paused (time left kept, no timer). */
interface Countdown {
  timer?: ReturnType<typeof setTimeout>;
  endsAt: number;
  leftMs: number;
}
const countdowns = new Map<number, Countdown>();

export function showToast({
  title,
  description,
  variant = "default",
  action,
  durationMs = TOAST_DURATION_MS,
}: ToastInput) {
  const toast: Toast = { id: ++lastToastId, title, description, variant, action };
  const stacked = [toast, ...$toasts.get()];
  for (const pushedOut of stacked.slice(MAX_VISIBLE_TOASTS)) clearDismissTimer(pushedOut.id);
  $toasts.set(stacked.slice(0, MAX_VISIBLE_TOASTS));
  countdowns.set(toast.id, { endsAt: 0, leftMs: durationMs });
  resumeToast(toast.id);
  return toast.id;
}

/**
 * Holds a toast on screen while the pointer rests on it or focus is inside it, so nobody loses
 * a toast (or the focus on its dismiss button) mid-read.
 */
export function pauseToast(id: number) {
  const countdown = countdowns.get(id);
  if (!countdown?.timer) return;
  clearTimeout(countdown.timer);
  countdown.timer = undefined;
  countdown.leftMs = Math.max(0, countdown.endsAt - Date.now());
}

/** Lets a paused toast's remaining time run out. */
export function resumeToast(id: number) {
  const countdown = countdowns.get(id);
  if (!countdown || countdown.timer) return;
  countdown.endsAt = Date.now() + countdown.leftMs;
  countdown.timer = setTimeout(() => dismissToast(id), countdown.leftMs);
}

export function dismissToast(id: number) {
  clearDismissTimer(id);
  const remaining = $toasts.get().filter((toast) => toast.id !== id);
  if (remaining.length !== $toasts.get().length) $toasts.set(remaining);
}

function clearDismissTimer(id: number) {
  clearTimeout(countdowns.get(id)?.timer);
  countdowns.delete(id);
}
