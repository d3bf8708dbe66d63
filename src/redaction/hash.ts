/**
 * The salted hash a redaction keeps instead of its term (gaps.md §12): HMAC-SHA-256 keyed with
 * the scope file's redaction_salt (its 32 bytes, stored as 64 hex digits) of the normalized term
 * (match.ts normalizeTerm), as hex. The term itself is never stored.
 */
import { createHmac } from "node:crypto"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"

export const termHash = (saltHex: string, normalizedTerm: string): string =>
  createHmac("sha256", Buffer.from(saltHex, "hex")).update(normalizedTerm, "utf8").digest("hex")

/** The scope file's salt (migration 0009 writes it once). */
export const scopeSalt = (sql: SqlClient) =>
  Effect.flatMap(sql<{ salt: string }>`SELECT salt FROM redaction_salt WHERE singleton = 1`, (rows) =>
    rows[0] === undefined ? Effect.dieMessage("redaction_salt has no row") : Effect.succeed(rows[0].salt))
