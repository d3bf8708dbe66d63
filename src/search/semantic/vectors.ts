/**
 * The vectors of stage b in the scope file (table vec_rule, scope migration 0005-vectors): the
 * only writer of vec_rule, and its readers. What is embedded is the current version of every rule
 * that is not rejected — the versions stage a indexes (lex_doc) — as ruleEmbeddingText (rule-text.ts).
 *
 *   writeVectors(sql, model, rows)                     → Effect<number>       rows written (an existing one is kept)
 *   pendingVersions(sql, model, limit)                 → Effect<Array<PendingVersion>>  current versions without a vector
 *   embeddingInputs(sql, model, keys)                  → Effect<Array<EmbeddingInput>>  texts, and a vector to reuse
 *   currentVectors(sql, model)                         → Effect<VectorSet>    every current version's vector
 *   ruleVersionsSince(sql, rowid) / vectorsSince(sql, model, rowid)          the increments of vector-index.ts
 *   currentHeads(sql, seqs)                            → Effect<Map<seq, HeadRow>>  the current version per seq
 *
 * Vectors are stored as little-endian float32 (the byte order of every host Node runs on here;
 * encodeVector/decodeVector convert on a big-endian one).
 */
import { endianness } from "node:os"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type EmbeddableVersion, ruleEmbeddingText } from "./rule-text.js"

const LITTLE = endianness() === "LE"

export const encodeVector = (v: Float32Array): Buffer => {
  const bytes = Buffer.alloc(v.length * 4)
  if (LITTLE) bytes.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
  else {
    v.forEach((x, i) => bytes.writeFloatLE(x, i * 4))
  }
  return bytes
}

export const decodeVector = (bytes: Uint8Array): Float32Array => {
  const out = new Float32Array(bytes.length >> 2)
  if (LITTLE) new Uint8Array(out.buffer).set(bytes.subarray(0, out.length * 4))
  else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  }
  return out
}

export interface VectorWrite {
  readonly seq: number
  readonly version: number
  readonly vector: Float32Array
}

/** Writes vectors in one transaction; a row that exists already (same seq, version, model) is kept. */
export const writeVectors = (sql: SqlClient, model: string, rows: ReadonlyArray<VectorWrite>) =>
  rows.length === 0
    ? Effect.succeed(0)
    : sql.withTransaction(Effect.gen(function*() {
      let written = 0
      for (const r of rows) {
        const out = yield* sql<{ seq: number }>`INSERT INTO vec_rule (seq, version, model, dim, vector)
          VALUES (${r.seq}, ${r.version}, ${model}, ${r.vector.length}, ${encodeVector(r.vector)})
          ON CONFLICT (seq, version, model) DO NOTHING RETURNING seq`
        written += out.length
      }
      return written
    }))

export interface PendingVersion {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
}

/** Current, not rejected rule versions without a vector of `model`, by seq. */
export const pendingVersions = (sql: SqlClient, model: string, limit: number) =>
  sql<PendingVersion>`SELECT r.seq, v.rule_id, v.version FROM rule r
    JOIN rule_version v ON v.rule_id = r.id
      AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
    WHERE v.status <> 'rejected'
      AND NOT EXISTS (SELECT 1 FROM vec_rule x WHERE x.seq = r.seq AND x.version = v.version AND x.model = ${model})
    ORDER BY r.seq LIMIT ${limit}`

export interface EmbeddingInput {
  readonly seq: number
  readonly version: number
  readonly text: string
  /** the vector of an earlier version of the rule with the same text (a confirm, a review), to copy */
  readonly reuse: Float32Array | null
}

/** The texts of the given versions, each with the newest earlier vector of the rule when its text is the same. */
export const embeddingInputs = (sql: SqlClient, model: string, keys: ReadonlyArray<{ readonly seq: number; readonly version: number }>) =>
  Effect.gen(function*() {
    if (keys.length === 0) return []
    const rows = yield* sql<EmbeddableVersion & { seq: number; version: number; rule_id: string }>`
      SELECT r.seq, v.rule_id, v.version, v.statement, v.keywords, v.relations, v.quote
      FROM json_each(${JSON.stringify(keys.map((k) => [k.seq, k.version]))}) j
      JOIN rule r ON r.seq = json_extract(j.value, '$[0]')
      JOIN rule_version v ON v.rule_id = r.id AND v.version = json_extract(j.value, '$[1]')`
    const earlier = yield* sql<EmbeddableVersion & { seq: number; version: number; vector: Uint8Array }>`
      SELECT x.seq, x.version, x.vector, v.statement, v.keywords, v.relations, v.quote
      FROM json_each(${JSON.stringify(keys.map((k) => [k.seq, k.version]))}) j
      JOIN vec_rule x ON x.seq = json_extract(j.value, '$[0]') AND x.version < json_extract(j.value, '$[1]') AND x.model = ${model}
      JOIN rule r ON r.seq = x.seq
      JOIN rule_version v ON v.rule_id = r.id AND v.version = x.version
      ORDER BY x.seq, x.version DESC`
    const newest = new Map<number, (typeof earlier)[number]>()
    for (const e of earlier) if (!newest.has(e.seq)) newest.set(e.seq, e)
    return rows.map((r): EmbeddingInput => {
      const text = ruleEmbeddingText(r)
      const prior = newest.get(r.seq)
      return { seq: r.seq, version: r.version, text, reuse: prior !== undefined && ruleEmbeddingText(prior) === text ? decodeVector(prior.vector) : null }
    })
  })

export interface VectorSet {
  readonly dim: number
  readonly seqs: Int32Array
  readonly versions: Int32Array
  /** row-major [seqs.length, dim] */
  readonly matrix: Float32Array
}

/**
 * The vectors of `model` of every current, not rejected rule version, by seq. Rows whose dim
 * differs from the first one are skipped (a model file replaced by one of another size).
 */
export const currentVectors = (sql: SqlClient, model: string) =>
  Effect.map(
    sql<{ seq: number; version: number; dim: number; vector: Uint8Array }>`
      SELECT x.seq, x.version, x.dim, x.vector FROM rule r
      JOIN rule_version v ON v.rule_id = r.id
        AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
      JOIN vec_rule x ON x.seq = r.seq AND x.version = v.version AND x.model = ${model}
      WHERE v.status <> 'rejected' ORDER BY r.seq`,
    (rows): VectorSet => {
      const dim = rows[0]?.dim ?? 0
      const kept = rows.filter((r) => r.dim === dim)
      const matrix = new Float32Array(kept.length * dim)
      kept.forEach((r, i) => matrix.set(decodeVector(r.vector), i * dim))
      return { dim, seqs: Int32Array.from(kept, (r) => r.seq), versions: Int32Array.from(kept, (r) => r.version), matrix }
    }
  )

/** rule_version rows after `rowid` (the table is append-only, so rowids only grow), with the rule's seq. */
export const ruleVersionsSince = (sql: SqlClient, rowid: number) =>
  sql<{ rowid: number; seq: number; version: number; status: string }>`
    SELECT v.rowid AS rowid, r.seq, v.version, v.status FROM rule_version v JOIN rule r ON r.id = v.rule_id
    WHERE v.rowid > ${rowid} ORDER BY v.rowid`

/** vec_rule rows of `model` after `rowid`. */
export const vectorsSince = (sql: SqlClient, model: string, rowid: number) =>
  sql<{ rowid: number; seq: number; version: number; dim: number; vector: Uint8Array }>`
    SELECT rowid, seq, version, dim, vector FROM vec_rule WHERE rowid > ${rowid} AND model = ${model} ORDER BY rowid`

/** The newest redaction of the file (0 without one): a redaction deletes the vectors of the versions it touched. */
export const redactionsSeen = (sql: SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT coalesce(max(seq), 0) AS n FROM redaction`, (rows) => Number(rows[0]?.n ?? 0))

/** The (seq, version) pairs that hold a vector of `model`, as `seq:version`. */
export const vectorKeys = (sql: SqlClient, model: string) =>
  Effect.map(sql<{ k: string }>`SELECT seq || ':' || version AS k FROM vec_rule WHERE model = ${model}`, (rows) => new Set(rows.map((r) => r.k)))

export interface HeadRow {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
  readonly status: "proposed" | "confirmed" | "superseded" | "rejected"
  readonly valid_from: string
  readonly valid_until: string | null
}

/** The current version of each seq (in the shape of stage a's pool rows). */
export const currentHeads = (sql: SqlClient, seqs: ReadonlyArray<number>) =>
  Effect.map(
    seqs.length === 0
      ? Effect.succeed([] as Array<HeadRow>)
      : sql<HeadRow>`SELECT r.seq, v.rule_id, v.version, v.status, v.valid_from, v.valid_until
          FROM json_each(${JSON.stringify(seqs)}) j
          JOIN rule r ON r.seq = j.value
          JOIN rule_version v ON v.rule_id = r.id
            AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)`,
    (rows) => new Map(rows.map((r) => [r.seq, r]))
  )
