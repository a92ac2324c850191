import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { CHATBOT_GREETING } from "../data/chatbot.ts";
import { type ChatMessage, chooseReply, isSendable, replyDelayMs } from "../lib/chatbot.ts";

export interface NothingBotPanelProps {
  open: boolean;
  onClose: () => void;
}

let lastMessageId = 0;
const message = (text: string, isBot: boolean): ChatMessage => ({
  id: ++lastMessageId,
  text,
  isBot,
  timestamp: Date.now(),
});

/**
 * The NothingBot panel: a non-modal dialog. It stays mounted once opened (hidden when closed), so
 * the conversation and a pending reply survive closing it. Messages sit in a log, so replies are
 * announced.
 */
export default function NothingBotPanel({ open, onClose }: NothingBotPanelProps) {
  const [messages, setMessages] = useState(() => [message(CHATBOT_GREETING, true)]);
  const [draft, setDraft] = useState("");
  const [typing, setTyping] = useState(false);
  const dialogRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const logRef = useRef<HTMLDivElement>(null);
  const replyTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  useEffect(() => () => clearTimeout(replyTimer.current), []);

  // Focus moves into the panel on open: the input, or the panel itself while the input is disabled.
  useEffect(() => {
    if (open) (inputRef.current?.disabled ? dialogRef.current : inputRef.current)?.focus();
  }, [open]);

  // The input was disabled while the bot typed, which dropped focus: give it back.
  useEffect(() => {
    const focused = document.activeElement;
    if (!typing && open && (!focused || focused === document.body || focused === dialogRef.current)) {
      inputRef.current?.focus();
    }
  }, [typing, open]);

  useEffect(() => {
    const log = logRef.current;
    if (log && messages.length + Number(typing) > 0) log.scrollTop = log.scrollHeight;
  }, [messages, typing]);

  const send = () => {
    if (typing || !isSendable(draft)) return;
    const text = draft.trim();
    setMessages((current) => [...current, message(text, false)]);
    setDraft("");
    setTyping(true);
    replyTimer.current = setTimeout(() => {
      setMessages((current) => [...current, message(chooseReply(text, Math.random()), true)]);
      setTyping(false);
    }, replyDelayMs(Math.random()));
  };

  const onInputKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key !== "Enter" || event.nativeEvent.isComposing) return;
    // Enter sends; Shift+Enter does not (and must not submit the form either).
    event.preventDefault();
    if (!event.shiftKey) send();
  };

  return (
    <div
      ref={dialogRef}
      role="dialog"
      aria-labelledby="nothingbot-title"
      tabIndex={-1}
      hidden={!open}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.stopPropagation();
          onClose();
        }
      }}
      className="fixed bottom-4 right-4 z-40 flex h-[min(32rem,calc(100dvh-6rem))] w-[min(24rem,calc(100vw-2rem))] flex-col overflow-hidden rounded-2xl border border-void-600 bg-void-800 shadow-2xl outline-none"
    >
      <header className="flex items-center justify-between gap-2 border-b border-void-600 bg-void-700 px-4 py-3">
        <div>
          <h2 id="nothingbot-title" className="text-lg font-bold">
            NothingBot
          </h2>
          <p className="text-xs text-ink-muted">Online. Thinking about nothing.</p>
        </div>
        <button
          type="button"
          aria-label="Close NothingBot"
          onClick={onClose}
          className="grid h-10 w-10 place-items-center rounded-lg text-xl text-ink-muted hover:text-ink focus-visible:outline-2 focus-visible:outline-accent-strong"
        >
          <span aria-hidden="true">×</span>
        </button>
      </header>
      <div
        ref={logRef}
        role="log"
        aria-label="Conversation with NothingBot"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable log must be reachable to scroll by keyboard
        tabIndex={0}
        className="flex flex-1 flex-col gap-2 overflow-y-auto p-4 focus-visible:outline-2 focus-visible:outline-offset--2 focus-visible:outline-accent-strong"
      >
        {messages.map((entry) => (
          <p
            key={entry.id}
            data-chat-message={entry.isBot ? "bot" : "user"}
            className={`max-w-[85%] rounded-2xl px-3 py-2 text-sm ${
              entry.isBot ? "self-start bg-void-700 text-ink" : "self-end bg-accent text-void"
            }`}
          >
            <span className="sr-only">{entry.isBot ? "NothingBot: " : "You: "}</span>
            {entry.text}
          </p>
        ))}
        {typing && (
          <p data-chat-typing className="flex items-center gap-1 self-start rounded-2xl bg-void-700 px-3 py-3">
            <span className="sr-only">NothingBot is typing…</span>
            {[0, 150, 300].map((delay) => (
              <span
                key={delay}
                aria-hidden="true"
                className="h-2 w-2 rounded-full bg-ink-muted motion-safe:animate-bounce"
                style={{ animationDelay: `${delay}ms` }}
              />
            ))}
          </p>
        )}
      </div>
      <form
        className="flex gap-2 border-t border-void-600 p-3"
        onSubmit={(event) => {
          event.preventDefault();
          send();
        }}
      >
        <label htmlFor="nothingbot-input" className="sr-only">
          Message NothingBot
        </label>
        <input
          ref={inputRef}
          id="nothingbot-input"
          type="text"
          autoComplete="off"
          maxLength={500}
          placeholder="Ask about nothing..."
          value={draft}
          disabled={typing}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onInputKeyDown}
          className="min-h-11 min-w-0 flex-1 rounded-xl border border-void-600 bg-void px-3 text-ink placeholder:text-ink-muted focus-visible:outline-2 focus-visible:outline-accent-strong disabled:opacity-60"
        />
        <button type="submit" className="btn-primary px-4" disabled={typing}>
          Send
        </button>
      </form>
    </div>
  );
}
