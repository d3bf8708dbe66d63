/**
 * Ops file, migration 0005: the spend of stage c (architecture.md §3 search.reranker.monthly_cap_usd,
 * §11 OpsStatus.usage). One row per reranker call, written before the call leaves the host, with
 * the calendar month in the instance zone and the estimated cost; never changed, never deleted
 * (the month's spend is the sum of its rows). No text and no key is stored: the scope, the
 * provider and model, how many documents and the estimated tokens.
 */
import { appendOnlyPair, INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 5,
  name: "0005-reranker-usage",
  statements: () => [
    `CREATE TABLE reranker_usage (
      seq INTEGER PRIMARY KEY,
      at TEXT NOT NULL CHECK (at GLOB ${INSTANT_GLOB}),
      month TEXT NOT NULL CHECK (month GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]'),
      scope TEXT NOT NULL CHECK (length(scope) BETWEEN 1 AND 40),
      provider TEXT NOT NULL CHECK (length(provider) BETWEEN 1 AND 40),
      model TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 80),
      documents INTEGER NOT NULL CHECK (documents >= 0),
      tokens INTEGER NOT NULL CHECK (tokens >= 0),
      cost_usd REAL NOT NULL CHECK (cost_usd >= 0))`,
    `CREATE INDEX reranker_usage_month ON reranker_usage(month)`,
    ...appendOnlyPair("reranker_usage")
  ]
}
