/**
 * How the Actions routes answer (docs/decisions/2026-11-28-the-store-as-a-blink.md): every answer,
 * refusals and preflights included, carries the Actions spec's CORS headers for any origin (a blink
 * client fetches from its own page: X, a wallet, dial.to), the spec version it is written to and the
 * chain it pays on. A refusal is an ActionError, `{"message"}`, which a blink client shows.
 */
import type { ServerResponse } from "node:http";
import type { ActionError } from "@solana/actions-spec";
import { PAYMENT_CHAIN } from "../../src/lib/payments.ts";
import { answerJson } from "../http/answers.ts";

/** The Actions spec version these answers follow (@solana/actions-spec 2.4.2). */
const ACTION_VERSION = "2.4";

/** CAIP-2 ids of the chains a wallet may be on, as Wallet Standard names them (PAYMENT_CHAIN). */
const BLOCKCHAIN_IDS: Record<string, string> = {
  "solana:mainnet": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  "solana:devnet": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  "solana:testnet": "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z",
};

/** The chain the store's $ZN lives on, as X-Blockchain-Ids names it. */
const BLOCKCHAIN_ID = BLOCKCHAIN_IDS[PAYMENT_CHAIN] ?? BLOCKCHAIN_IDS["solana:mainnet"];

/** @solana/actions' ACTIONS_CORS_HEADERS, with the version and the chain; on no other path. */
const ACTION_HEADERS: Readonly<Record<string, string>> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET,POST,PUT,OPTIONS",
  "Access-Control-Allow-Headers":
    "Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Accept-Action-Version, X-Accept-Blockchain-Ids",
  "Access-Control-Expose-Headers": "X-Action-Version, X-Blockchain-Ids",
  "X-Action-Version": ACTION_VERSION,
  "X-Blockchain-Ids": String(BLOCKCHAIN_ID),
};

const PREFLIGHT_MAX_AGE_S = 600;

/** An Actions answer: JSON, never cached (a button's state and a payment's change). */
export function answerAction(
  res: ServerResponse,
  status: number,
  body: object,
  headers: Record<string, string> = {},
): void {
  answerJson(res, status, body, { ...ACTION_HEADERS, ...headers });
}

/** A refusal as an ActionError. */
export function refuseAction(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  answerAction(res, status, { message } satisfies ActionError, headers);
}

/** The preflight: any origin, the spec's methods and headers. */
export function preflightAction(res: ServerResponse): void {
  res
    .writeHead(204, {
      ...ACTION_HEADERS,
      "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_S),
      "Cache-Control": "no-store",
    })
    .end();
}

/** 405 as an ActionError, with Allow. */
export function refuseActionMethod(res: ServerResponse, allow: string): void {
  refuseAction(res, 405, "This method is not allowed here.", { Allow: allow });
}
