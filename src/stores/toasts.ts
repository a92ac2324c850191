import { atom } from "nanostores";

/** DESIGN.md 3a: 5 s on screen (news pop-ups pass 4 s), at most 3 stacked, newest on top. */
export const TOAST_DURATION_MS = 5_000;
export const MAX_VISIBLE_TOASTS = 3;

export type ToastVariant = "default" | "destructive";

export interface Toast {
  id: number;
  title: string;
  description?: string;
  variant: ToastVariant;
}

export interface ToastInput {
  title: string;
  description?: string;
  /** "destructive" marks errors: red styling, announced as an alert. */
  variant?: ToastVariant;
  durationMs?: number;
}

/** The one toaster's queue, newest first. Every island shows its toasts through showToast. */
export const $toasts = atom<readonly Toast[]>([]);

let lastToastId = 0;
const dismissTimers = new Map<number, ReturnType<typeof setTimeout>>();

export function showToast({ title, description, variant = "default", durationMs = TOAST_DURATION_MS }: ToastInput) {
  const toast: Toast = { id: ++lastToastId, title, description, variant };
  const stacked = [toast, ...$toasts.get()];
  for (const pushedOut of stacked.slice(MAX_VISIBLE_TOASTS)) clearDismissTimer(pushedOut.id);
  $toasts.set(stacked.slice(0, MAX_VISIBLE_TOASTS));
  dismissTimers.set(
    toast.id,
    setTimeout(() => dismissToast(toast.id), durationMs),
  );
  return toast.id;
}

export function dismissToast(id: number) {
  clearDismissTimer(id);
  const remaining = $toasts.get().filter((toast) => toast.id !== id);
  if (remaining.length !== $toasts.get().length) $toasts.set(remaining);
}

function clearDismissTimer(id: number) {
  clearTimeout(dismissTimers.get(id));
  dismissTimers.delete(id);
}
