/**
 * The per-address limits raised for tests, the end-to-end server and benchmarks: every client of
 * those runs from 127.0.0.1, so the defaults (256 connections, 50 sockets, 10 bids per 10 s, a
 * tenth of each capacity for its /24) would refuse them.
 * One preset, in both shapes the service takes it: its config fields and its environment. The
 * RPC budget, a payment setting, is only in the environment: the local chain has no quota.
 */
import type { ServiceConfig } from "../../service/config.ts";

export const LIFTED_LIMITS: Partial<ServiceConfig> = {
  bidRateLimit: 1_000_000,
  maxSocketsPerAddress: 1_000_000,
  maxConnectionsPerClient: 1_000_000,
  networkSharePercent: 100,
};

export const LIFTED_LIMITS_ENV = {
  BID_RATE_LIMIT: String(LIFTED_LIMITS.bidRateLimit),
  MAX_SOCKETS_PER_ADDRESS: String(LIFTED_LIMITS.maxSocketsPerAddress),
  MAX_CONNECTIONS_PER_CLIENT: String(LIFTED_LIMITS.maxConnectionsPerClient),
  NETWORK_SHARE_PERCENT: String(LIFTED_LIMITS.networkSharePercent),
  PAYMENT_RPC_CALLS_PER_SECOND: "100000",
};
