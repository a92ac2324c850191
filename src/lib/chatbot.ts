/**
 * NothingBot's brain (docs/product-behaviour.md#4, docs/design.md#3a): a case-insensitive substring match over
 * the keyword groups, tried in order, first match wins; otherwise a random fallback.
 * Pure: the random draw is passed in.
 */
import { CHATBOT_FALLBACK_REPLIES, CHATBOT_KEYWORD_REPLIES } from "../data/chatbot.ts";
import { pickByDraw } from "./random.ts";

const REPLY_DELAY_MIN_MS = 1_000;
const REPLY_DELAY_MAX_MS = 3_000;

export interface ChatMessage {
  id: number;
  text: string;
  isBot: boolean;
  timestamp: number;
}

/** Blank or whitespace-only messages are not sent (docs/product-behaviour.md#5). */
export function isSendable(text: string): boolean {
  return text.trim() !== "";
}

/** `random` is a draw in [0, 1); it only matters when no keyword group matches. */
export function chooseReply(message: string, random: number): string {
  const text = message.toLowerCase();
  for (const group of CHATBOT_KEYWORD_REPLIES) {
    const matches = group.all
      ? group.keywords.every((keyword) => text.includes(keyword))
      : group.keywords.some((keyword) => text.includes(keyword));
    if (matches) return group.reply;
  }
  return pickByDraw(CHATBOT_FALLBACK_REPLIES, random);
}

/** How long the bot "types": 1 to 3 s. */
export function replyDelayMs(random: number): number {
  return REPLY_DELAY_MIN_MS + Math.floor(random * (REPLY_DELAY_MAX_MS - REPLY_DELAY_MIN_MS));
}
