/**
 * The per-connection cache of what only writes change (issue 14), valid for one stamp of the
 * scope file: index_stamp (seq, nonce; bumped by triggers on lex_doc in the writer's transaction)
 * and lex_meta.build, read when a search begins (refreshStampCache, inside the search's read
 * transaction, so the stamp belongs to the rows the search reads). A different stamp — a write of
 * this process or of another one, a rebuild, a restored file — starts an empty cache. Each user
 * (the vocabulary in vocab.ts, the phrase rows in phrases.ts) keeps its own part under a name.
 * A connection without a cache (forgetStampCache) reads everything from the file.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

interface StampCache {
  readonly stamp: string
  readonly parts: Map<string, unknown>
}

const caches = new WeakMap<SqlClient, StampCache>()

/**
 * Reads the file's stamp and keeps the connection's cache when it was filled under the same
 * stamp, else starts an empty one.
 */
export const refreshStampCache = (sql: SqlClient): Effect.Effect<void, SqlError> =>
  Effect.map(
    sql<{ seq: number; nonce: number | bigint; build: string | null }>`SELECT seq, nonce,
      (SELECT value FROM lex_meta WHERE key = 'build') AS build FROM index_stamp WHERE id = 1`,
    (rows) => {
      const r = rows[0]
      if (r === undefined) {
        caches.delete(sql)
        return
      }
      const stamp = `${String(r.seq)}:${String(r.nonce)}:${r.build ?? ""}`
      if (caches.get(sql)?.stamp !== stamp) caches.set(sql, { stamp, parts: new Map() })
    }
  )

/** Drops the connection's cache: every read goes to the file until refreshStampCache. */
export const forgetStampCache = (sql: SqlClient): void => {
  caches.delete(sql)
}

/** The part `name` of the connection's cache (made on first use); undefined without a cache. */
export const cachePart = <T>(sql: SqlClient, name: string, make: () => T): T | undefined => {
  const c = caches.get(sql)
  if (c === undefined) return undefined
  const known = c.parts.get(name) as T | undefined
  if (known !== undefined) return known
  const made = make()
  c.parts.set(name, made)
  return made
}

/**
 * The part `name` as cachePart gives it, started again (empty) once `size` of it has passed `max`:
 * each user bounds what it keeps so.
 */
export const boundedPart = <T>(sql: SqlClient, name: string, make: () => T, size: (part: T) => number, max: number): T | undefined => {
  const part = cachePart(sql, name, make)
  if (part === undefined || size(part) <= max) return part
  caches.get(sql)?.parts.delete(name)
  return cachePart(sql, name, make)
}
