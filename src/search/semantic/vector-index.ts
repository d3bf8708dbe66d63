/**
 * The vectors of one scope file and one model in memory, kept current by increments, and the
 * exact nearest neighbours over them (knn.ts). Reading every vector per search would move
 * 4 KB × rules from SQLite each time (400 MB at 100k rules, dim 1024); the index reads them once
 * and then only what was added since:
 *
 * - rule_version is append-only, so its rows after the last seen rowid are exactly the new
 *   versions: a rule's newer version takes its slot out until its vector exists (only current
 *   versions are searched), a rejected one removes the rule;
 * - vec_rule rows of the model after the last seen rowid are the new vectors (a deleted row of
 *   another model cannot bring rowids below one that still exists);
 * - a redaction (gaps.md §12) deletes the vectors of the versions it touched: when the file's
 *   newest redaction changed, every row whose vector is gone from the file leaves the matrix (its
 *   bytes zeroed) and its current version waits for a new vector from the redacted text.
 *
 *   makeVectorIndex(model, dim, scorer?)          → Effect<VectorIndex>
 *   index.refresh(sql)                            → Effect<void, SqlError>   read the increments
 *   index.add(seq, version, vector)               → boolean                  after writing it (catch-up)
 *   index.pending(limit)                          → Array<{ seq, version }>  current versions without a vector
 *   index.progress()                              → { total, embedded, pending }
 *   index.search(query, k)                        → Effect<Array<VectorHit>> best first, ties by seq
 *
 * One index per (scope file, model) for the life of the service; a file restored or replaced
 * needs a new index (its rowids start over).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type KnnScorer, makeKnnScorer, topK } from "./knn.js"
import { decodeVector, redactionsSeen, ruleVersionsSince, vectorKeys, vectorsSince } from "./vectors.js"

export interface VectorHit {
  readonly seq: number
  readonly version: number
  /** cosine similarity with the query */
  readonly score: number
}

export interface IndexProgress {
  /** current, not rejected rule versions */
  readonly total: number
  /** of which have a vector of the model */
  readonly embedded: number
  readonly pending: number
}

export interface VectorIndex {
  readonly model: string
  readonly dim: number
  readonly refresh: (sql: SqlClient) => Effect.Effect<void, SqlError>
  readonly add: (seq: number, version: number, vector: Float32Array) => boolean
  readonly pending: (limit: number) => Array<{ readonly seq: number; readonly version: number }>
  readonly progress: () => IndexProgress
  readonly search: (query: Float32Array, k: number) => Effect.Effect<Array<VectorHit>>
  /** vec_rule rows skipped because their dim is not the index's (another model file of the same name) */
  readonly skipped: () => number
}

const INITIAL_ROWS = 1024

export const makeVectorIndex = (model: string, dim: number, scorer?: KnnScorer): Effect.Effect<VectorIndex> =>
  Effect.gen(function*() {
    const knn = scorer ?? (yield* makeKnnScorer)
    const lock = yield* Effect.makeSemaphore(1)
    /** seq → its current version (rules whose current version is rejected are absent) */
    const current = new Map<number, number>()
    /** seqs of `current` without a vector in the matrix, in the order they became current */
    const missing = new Set<number>()
    const slotOf = new Map<number, number>()
    let seqAt = new Int32Array(INITIAL_ROWS)
    let versionAt = new Int32Array(INITIAL_ROWS)
    let matrix = new Float32Array(INITIAL_ROWS * dim)
    let count = 0
    let versionMark = 0
    let vectorMark = 0
    let redactionMark = 0
    let skippedRows = 0

    const removeSlot = (seq: number) => {
      const slot = slotOf.get(seq)
      if (slot === undefined) return
      const last = count - 1
      if (slot !== last) {
        const moved = seqAt[last] as number
        seqAt[slot] = moved
        versionAt[slot] = versionAt[last] as number
        matrix.copyWithin(slot * dim, last * dim, (last + 1) * dim)
        slotOf.set(moved, slot)
      }
      // no copy of a vector stays behind the used rows (a redacted rule's among them)
      matrix.fill(0, last * dim, (last + 1) * dim)
      slotOf.delete(seq)
      count--
    }

    const put = (seq: number, version: number, vector: Float32Array): boolean => {
      if (vector.length !== dim || current.get(seq) !== version) return false
      let slot = slotOf.get(seq)
      if (slot === undefined) {
        if (count === seqAt.length) {
          const grow = seqAt.length * 2
          const s = new Int32Array(grow)
          s.set(seqAt)
          seqAt = s
          const v = new Int32Array(grow)
          v.set(versionAt)
          versionAt = v
          const m = new Float32Array(grow * dim)
          m.set(matrix)
          matrix = m
        }
        slot = count++
        slotOf.set(seq, slot)
      } else if (versionAt[slot] === version) return false
      seqAt[slot] = seq
      versionAt[slot] = version
      matrix.set(vector, slot * dim)
      missing.delete(seq)
      return true
    }

    const refresh = (sql: SqlClient) =>
      lock.withPermits(1)(Effect.gen(function*() {
        for (const r of yield* ruleVersionsSince(sql, versionMark)) {
          versionMark = Math.max(versionMark, r.rowid)
          if (r.status === "rejected") {
            current.delete(r.seq)
            missing.delete(r.seq)
            removeSlot(r.seq)
            continue
          }
          if (r.version <= (current.get(r.seq) ?? 0)) continue
          current.set(r.seq, r.version)
          removeSlot(r.seq)
          missing.add(r.seq)
        }
        for (const v of yield* vectorsSince(sql, model, vectorMark)) {
          vectorMark = Math.max(vectorMark, v.rowid)
          if (v.dim !== dim) skippedRows++
          else put(v.seq, v.version, decodeVector(v.vector))
        }
        const redactions = yield* redactionsSeen(sql)
        if (redactions !== redactionMark) {
          redactionMark = redactions
          const stored = yield* vectorKeys(sql, model)
          for (let slot = count - 1; slot >= 0; slot--) {
            const seq = seqAt[slot] as number
            if (stored.has(`${seq}:${versionAt[slot] as number}`)) continue
            removeSlot(seq)
            if (current.has(seq)) missing.add(seq)
          }
        }
      }))

    return {
      model,
      dim,
      refresh,
      add: put,
      pending: (limit) => {
        const out: Array<{ seq: number; version: number }> = []
        for (const seq of missing) {
          if (out.length >= limit) break
          out.push({ seq, version: current.get(seq) as number })
        }
        return out
      },
      progress: () => ({ total: current.size, embedded: count, pending: missing.size }),
      search: (query, k) =>
        lock.withPermits(1)(Effect.promise(async () => {
          if (count === 0 || query.length !== dim) return []
          // The rows' labels as of the call: the catch-up may add() while the scorer runs (add is
          // not under the lock). A row changed meanwhile keeps its old version label, so the
          // file check of stage-b.ts drops it; no score is ever labelled with another rule.
          const n = count
          const seqs = seqAt.slice(0, n)
          const versions = versionAt.slice(0, n)
          const scores = await knn.scores(matrix, n, dim, query)
          return topK(scores, k, (row) => seqs[row] as number)
            .map(({ row, score }) => ({ seq: seqs[row] as number, version: versions[row] as number, score }))
        })),
      skipped: () => skippedRows
    } satisfies VectorIndex
  })
