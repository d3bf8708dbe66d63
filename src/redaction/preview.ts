/**
 * The preview of a redaction (gaps.md §12): every place of the scope where the term occurs (the
 * target columns of places.ts), the rules whose text or source evidence a place touches, a digest
 * of the places the confirmation sends back, and the identifier columns that hold the term and
 * stay. Reads only; the caller runs it in one read transaction (or apply.ts in its write
 * transaction).
 */
import { createHash } from "node:crypto"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ValidationFailed } from "../contracts/errors.js"
import { MIN_TERM_CHARS, type RedactionPlace, type RedactionPreviewOut } from "../contracts/redaction.js"
import { eventLoopTurns } from "../db/event-loop-turns.js"
import { BARRIER } from "./fold.js"
import { normalizeTerm } from "./match.js"
import { scopeColumns } from "./places.js"
import { type Found, type RowidBound, scanColumn } from "./scan.js"

/** The tables whose rows are a source's evidence, keyed by source id (the first key value). */
const SOURCE_TABLES: ReadonlySet<string> = new Set(["source", "source_segment", "source_attachment", "source_auth"])

export interface RedactionPreview {
  readonly body: RedactionPreviewOut
  /** every place with its ranges, ordered by table, column and key */
  readonly places: ReadonlyArray<RedactionPlace>
}

/** The normalized term, or validation-failed for a term under MIN_TERM_CHARS or one holding the marker. */
export const checkedTerm = (term: string): Effect.Effect<string, ValidationFailed> => {
  const folded = normalizeTerm(term)
  if ([...term.trim()].length < MIN_TERM_CHARS || [...folded.replace(/ /g, "")].length < MIN_TERM_CHARS) {
    return Effect.fail(new ValidationFailed({
      message: `a term has at least ${MIN_TERM_CHARS} characters (letters, digits or symbols; punctuation and spaces at its ends do not count)`,
      issues: [{ path: "term", message: `at least ${MIN_TERM_CHARS} characters` }]
    }))
  }
  if (folded.includes(BARRIER)) {
    return Effect.fail(new ValidationFailed({
      message: "a term cannot contain the marker [redacted]",
      issues: [{ path: "term", message: "contains the marker" }]
    }))
  }
  return Effect.succeed(folded)
}

export const placeOrder = (a: RedactionPlace, b: RedactionPlace): number =>
  a.table < b.table ? -1 : a.table > b.table ? 1 : a.column < b.column ? -1 : a.column > b.column ? 1
    : JSON.stringify(a.key) < JSON.stringify(b.key) ? -1 : JSON.stringify(a.key) > JSON.stringify(b.key) ? 1 : 0

/** The digest of a set of places: SHA-256 over their canonical JSON (ordered), hex. */
export const placesDigest = (places: ReadonlyArray<RedactionPlace>): string =>
  createHash("sha256")
    .update(JSON.stringify([...places].sort(placeOrder).map((p) => [p.table, p.column, p.key, p.ranges])))
    .digest("hex")

export interface FindOptions {
  /** only the target columns (apply: what stays is not its concern) */
  readonly targetsOnly?: boolean
  /** only these tables */
  readonly tables?: ReadonlyArray<string>
  /** search_log's rows by rowid (apply: the rows written while it prepared) */
  readonly logRows?: RowidBound
  /** turns of the event loop between statements (default true; false on a thread that answers no request) */
  readonly turns?: boolean
}

/** The places of a normalized term in the target columns, and the identifier columns that hold it. */
export const findPlaces = (sql: SqlClient, folded: string, options: FindOptions = {}) =>
  Effect.gen(function*() {
    const columns = yield* scopeColumns(sql)
    const turn = options.turns === false ? Effect.void : eventLoopTurns()
    const places: Array<RedactionPlace> = []
    const kept: Array<{ table: string; column: string; count: number }> = []
    for (const c of columns) {
      if (c.kind !== "target" && (c.kind !== "identifier" || options.targetsOnly === true)) continue
      if (options.tables !== undefined && !options.tables.includes(c.table)) continue
      yield* turn
      const found: Array<Found> = yield* scanColumn(sql, c, folded, c.table === "search_log" ? options.logRows : undefined, turn)
      if (found.length === 0) continue
      if (c.kind === "target") places.push(...found)
      else kept.push({ table: c.table, column: c.column, count: found.reduce((n, f) => n + f.ranges.length, 0) })
    }
    return { places: places.sort(placeOrder), kept }
  })

/** The refs of the rules whose version text or whose source evidence a place touches, ordered. */
const touchedRules = (sql: SqlClient, places: ReadonlyArray<RedactionPlace>) =>
  Effect.gen(function*() {
    const refs = new Set<string>()
    const sources = new Set<string>()
    for (const p of places) {
      if (p.table === "rule_version") refs.add(`rule/${String(p.key[0])}@${String(p.key[1])}`)
      else if (SOURCE_TABLES.has(p.table)) sources.add(String(p.key[0]))
    }
    if (sources.size > 0) {
      const rows = yield* sql<{ rule_id: string; version: number }>`
        SELECT rule_id, max(version) AS version FROM rule_version WHERE source_id IN ${sql.in([...sources])} GROUP BY rule_id`
      for (const r of rows) refs.add(`rule/${r.rule_id}@${r.version}`)
    }
    return [...refs].sort()
  })

/**
 * previewRedaction: the answer of POST /v1/redactions/preview for `term` in the scope's file,
 * and the places with their ranges. A term under 3 characters: validation-failed.
 */
export const previewRedaction = (sql: SqlClient, scope: string, term: string) =>
  Effect.gen(function*() {
    const folded = yield* checkedTerm(term)
    const { places, kept } = yield* findPlaces(sql, folded)
    const rules = yield* touchedRules(sql, places)
    const body: RedactionPreviewOut = {
      scope,
      total: places.reduce((n, p) => n + p.ranges.length, 0),
      places: places.map((p) => ({ table: p.table, column: p.column, key: p.key.map(String).join("/"), count: p.ranges.length })),
      rules,
      preview: placesDigest(places),
      kept
    }
    return { body, places } satisfies RedactionPreview
  }).pipe(Effect.withSpan("Redaction.preview"))
