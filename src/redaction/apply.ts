/**
 * Applies a redaction (gaps.md §12), in ONE write transaction of the scope (writeTransaction:
 * the file's write lock from its start):
 *  1. the places are found again; when their digest differs from the preview the person saw,
 *     preview-stale and nothing is written (also when the term has no place: nothing to redact);
 *  2. the permit row first, then the `redaction` row (the term only as its salted hash);
 *  3. every range replaced by the marker in place (fit.ts keeps the CHECK bounds), rows, ids,
 *     versions, timestamps and statuses unchanged (the append-only triggers let exactly this
 *     through while the permit exists);
 *  4. the redaction_place rows (table, key, column, the ranges of the text as it was);
 *  5. every derived copy rebuilt (derived.ts); the permit deleted last.
 * applyPlaces does 2–5 from stored places (the ledger's replay on an older copy of the file);
 * checkpointAfterRedaction truncates the WAL after the commit so no frame keeps the old text.
 * The person's redaction runs applyRedaction on a thread of its own (apply-thread.ts).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { PreviewStale } from "../contracts/errors.js"
import { REDACTED_MARKER, type RedactionPlace } from "../contracts/redaction.js"
import { writeTransaction } from "../db/connection.js"
import { eventLoopTurns } from "../db/event-loop-turns.js"
import { RuleIndex, type RuleIndexShape } from "../domain/rule-index.js"
import { rebuildDerived } from "./derived.js"
import { PlacesDoNotFit } from "./errors.js"
import { fitText } from "./fit.js"
import { scopeSalt, termHash } from "./hash.js"
import { replaceRanges } from "./match.js"
import { scopeColumns } from "./places.js"
import { checkedTerm, findPlaces, placeOrder, placesDigest } from "./preview.js"

/** A row of the table `redaction`. */
export interface RedactionRow {
  readonly seq: number
  readonly id: string
  readonly term_sha256: string
  /** how many places (redaction_place rows) */
  readonly places: number
  readonly requested_by: string
  readonly decided_by: string
  readonly reason: string
  readonly at: string
}

export interface ApplyRequest {
  readonly scope: string
  readonly term: string
  readonly reason: string
  /** the digest of the preview the person confirmed */
  readonly preview: string
  /** the grant id of the person */
  readonly requestedBy: string
  /** the person's identity */
  readonly decidedBy: string
  readonly at: string
}

export interface Applied {
  readonly redaction: RedactionRow
  /** occurrences replaced, over every place */
  readonly total: number
  readonly places: ReadonlyArray<RedactionPlace>
}

/** redaction_place rows per INSERT statement (five bound values each) */
const PLACE_BATCH = 150

const ident = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

/** Ranges ascending, not overlapping, inside a text of `length` UTF-16 units. */
const rangesFit = (ranges: ReadonlyArray<readonly [number, number]>, length: number): boolean => {
  let at = 0
  for (const [s, e] of ranges) {
    if (!Number.isInteger(s) || !Number.isInteger(e) || s < at || e <= s || e > length) return false
    at = e
  }
  return ranges.length > 0
}

const contentStamp = (sql: SqlClient) =>
  Effect.map(sql<{ s: string }>`SELECT seq || ':' || nonce AS s FROM content_stamp WHERE id = 1`, (rows) => rows[0]?.s ?? "")

const lastLogRow = (sql: SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT coalesce(max(rowid), 0) AS n FROM search_log`, (rows) => rows[0]?.n ?? 0)

/** Steps 2–5 inside the caller's write transaction. */
const writePlaces = (
  sql: SqlClient,
  index: RuleIndexShape,
  row: RedactionRow,
  places: ReadonlyArray<RedactionPlace>,
  turn: Effect.Effect<void> = eventLoopTurns()
) =>
  Effect.gen(function*() {
    const refuse = (reason: string) => new PlacesDoNotFit({ redaction: row.id, reason })
    const next = yield* sql<{ n: number }>`SELECT 1 + coalesce(max(seq), 0) AS n FROM redaction`
    if (next[0]?.n !== row.seq) return yield* refuse(`the file's next redaction is ${next[0]?.n ?? 1}, not ${row.seq}`)
    const columns = yield* scopeColumns(sql)
    const pkOf = new Map<string, ReadonlyArray<string>>()
    for (const c of columns) {
      if (c.kind === "target") pkOf.set(c.table, c.pk)
    }
    yield* sql`INSERT INTO redaction_permit (redaction_seq) VALUES (${row.seq})`.raw
    yield* sql`INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at)
      VALUES (${row.seq}, ${row.id}, ${row.term_sha256}, ${row.places}, ${row.requested_by}, ${row.decided_by}, ${row.reason}, ${row.at})`.raw

    // one UPDATE per row, every changed column of it at once
    const byRow = new Map<string, Array<RedactionPlace>>()
    for (const p of places) {
      if (!columns.some((c) => c.kind === "target" && c.table === p.table && c.column === p.column)) {
        return yield* refuse(`${p.table}.${p.column} is not a redactable column`)
      }
      const k = JSON.stringify([p.table, p.key])
      byRow.set(k, [...(byRow.get(k) ?? []), p])
    }
    const rules = new Map<string, Set<number>>()
    const entities = new Set<string>()
    for (const group of byRow.values()) {
      yield* turn
      const { table, key } = group[0]!
      const pk = pkOf.get(table)!
      if (pk.length !== key.length) return yield* refuse(`a key of ${table} has ${key.length} values, not ${pk.length}`)
      const where = pk.map((c) => `${ident(c)} = ?`).join(" AND ")
      const cols = group.map((p) => p.column)
      const found = yield* sql.unsafe<Record<string, unknown>>(
        `SELECT ${cols.map(ident).join(", ")} FROM ${ident(table)} WHERE ${where}`, [...key])
      const current = found[0]
      if (current === undefined) return yield* refuse(`no row ${JSON.stringify(key)} in ${table}`)
      const values: Array<string> = []
      for (const p of group) {
        const text = current[p.column]
        if (typeof text !== "string") return yield* refuse(`${table}.${p.column} of ${JSON.stringify(key)} holds no text`)
        if (!rangesFit(p.ranges, text.length)) return yield* refuse(`the ranges of ${table}.${p.column} ${JSON.stringify(key)} do not fit its text`)
        values.push(fitText(table, p.column, text, replaceRanges(text, p.ranges, REDACTED_MARKER)))
      }
      yield* sql.unsafe(`UPDATE ${ident(table)} SET ${cols.map((c) => `${ident(c)} = ?`).join(", ")} WHERE ${where}`,
        [...values, ...key]).raw
      if (table === "rule_version") {
        const id = String(key[0])
        rules.set(id, (rules.get(id) ?? new Set()).add(Number(key[1])))
      }
      if (table === "entity_version") entities.add(String(key[0]))
    }
    for (let i = 0; i < places.length; i += PLACE_BATCH) {
      yield* turn
      const batch = places.slice(i, i + PLACE_BATCH).map((p) => ({
        redaction_seq: row.seq, tbl: p.table, key: JSON.stringify(p.key), col: p.column, offsets: JSON.stringify(p.ranges)
      }))
      yield* sql`INSERT INTO redaction_place ${sql.insert(batch)}`.raw
    }
    yield* rebuildDerived(sql, index, { rules, entities }, turn)
    yield* sql`DELETE FROM redaction_permit`.raw
  })

export interface ApplyOptions {
  /**
   * turns of the event loop between statements (event-loop-turns.ts; default true): false on a
   * thread that answers no request (apply-thread.ts)
   */
  readonly turns?: boolean
}

/**
 * applyRedaction: finds the term's places again in the write transaction and, when they are the
 * ones the person saw (`preview`), replaces them; answers the redaction row, the total and the
 * places (for the ledger). preview-stale when they differ or when there is nothing to redact;
 * validation-failed for a term under 3 characters. Nothing is written on any failure.
 */
export const applyRedaction = (sql: SqlClient, req: ApplyRequest, options: ApplyOptions = {}) =>
  Effect.gen(function*() {
    const index = yield* RuleIndex
    const folded = yield* checkedTerm(req.term)
    const turns = options.turns !== false
    // The places are found before the write transaction, statement by statement, so searches
    // (their search_log rows go through this connection) are answered meanwhile; the transaction
    // takes them when content_stamp did not move since (every target table but search_log bumps
    // it) and adds the search_log rows written since. Otherwise it finds them again itself.
    const s0 = yield* contentStamp(sql)
    const logMax = yield* lastLogRow(sql)
    const early = yield* findPlaces(sql, folded, { targetsOnly: true, logRows: { upTo: logMax }, turns })
    const s1 = yield* contentStamp(sql)
    return yield* writeTransaction(sql)(Effect.gen(function*() {
      const s2 = yield* contentStamp(sql)
      const places = s0 === s1 && s1 === s2
        ? [...early.places, ...(yield* findPlaces(sql, folded, { targetsOnly: true, tables: ["search_log"], logRows: { after: logMax }, turns })).places]
          .sort(placeOrder)
        : (yield* findPlaces(sql, folded, { targetsOnly: true, turns })).places
      if (places.length === 0) {
        return yield* new PreviewStale({ message: "the term occurs nowhere in this scope: there is nothing to redact", scope: req.scope })
      }
      if (placesDigest(places) !== req.preview) {
        return yield* new PreviewStale({
          message: "the places of this term changed since the preview: preview again and confirm what it shows",
          scope: req.scope
        })
      }
      const next = yield* sql<{ n: number }>`SELECT 1 + coalesce(max(seq), 0) AS n FROM redaction`
      const seq = next[0]?.n ?? 1
      const row: RedactionRow = {
        seq,
        id: `${req.scope}-x${String(seq).padStart(4, "0")}`,
        term_sha256: termHash(yield* scopeSalt(sql), folded),
        places: places.length,
        requested_by: req.requestedBy,
        decided_by: req.decidedBy,
        reason: req.reason,
        at: req.at
      }
      yield* writePlaces(sql, index, row, places, turns ? eventLoopTurns() : Effect.void).pipe(Effect.catchTag("PlacesDoNotFit", (e) => Effect.die(e)))
      return { redaction: row, total: places.reduce((n, p) => n + p.ranges.length, 0), places } satisfies Applied
    }))
  }).pipe(Effect.withSpan("Redaction.apply"))

/**
 * applyPlaces: the same writes from a stored redaction and its places (no term), in one write
 * transaction: the ledger brings an older copy of the file level with it. Deterministic (the same
 * file and places give the same bytes of text); PlacesDoNotFit when a place's row, text or
 * ranges are not there or the redaction is not the file's next one, and nothing is written.
 */
export const applyPlaces = (sql: SqlClient, row: RedactionRow, places: ReadonlyArray<RedactionPlace>) =>
  Effect.gen(function*() {
    const index = yield* RuleIndex
    yield* writeTransaction(sql)(writePlaces(sql, index, row, places))
  }).pipe(Effect.withSpan("Redaction.applyPlaces"))

/**
 * After the commit, outside any transaction: PRAGMA wal_checkpoint(TRUNCATE), so no WAL frame
 * keeps the old text. True when it completed (false when a reader kept it from finishing: the
 * next checkpoint, at the latest the next open, finishes it).
 */
export const checkpointAfterRedaction = (sql: SqlClient) =>
  Effect.map(sql<{ busy: number; log: number; checkpointed: number }>`PRAGMA wal_checkpoint(TRUNCATE)`,
    (rows) => rows[0] !== undefined && rows[0].busy === 0)
