/**
 * The redaction ledger (gaps.md §12 "Nothing comes back"): ops.sqlite keeps every redaction of a
 * scope with its places (ops migration 0008; no text), so a copy of the scope file taken before a
 * redaction never shows the erased text again.
 *
 *  - recordInLedger: after the redaction's scope transaction committed, the redaction goes into
 *    the ledger.
 *  - bringLevel: when a scope file opens (ScopeStore's open, `groundnote restore`, the restore
 *    probe's copy), the file's `redaction` rows are compared with the ledger. A redaction the
 *    ledger holds and the file does not is applied again from the ledger's places (applyPlaces;
 *    the rows are append-only, so the offsets still fit), all in one transaction, before the scope
 *    answers; when it cannot be applied (a row missing, ranges that do not fit, a ledger that
 *    disagrees with the file) nothing is written and the caller locks the scope. A redaction the
 *    file holds and the ledger lacks (a crash between the scope's commit and the ledger write) is
 *    handed back to be added to the ledger.
 *  - checkpointOnOpen: a file whose WAL is not empty when it opens and that holds a redaction is
 *    checkpointed (TRUNCATE), so a process killed between a redaction's commit and its checkpoint
 *    leaves the old text neither in the main file nor in the WAL once the scope opens again.
 */
import { statSync } from "node:fs"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect } from "effect"
import type { RedactionPlace } from "../contracts/redaction.js"
import { writeTransaction } from "../db/connection.js"
import { StoreOpenError } from "../db/errors.js"
import type { LedgerRedaction, OpsStore } from "../db/ops-store.js"
import type { ScopeOpenCheckShape } from "../db/scope-open-check.js"
import { RuleIndex, type RuleIndexShape } from "../domain/rule-index.js"
import { type Applied, applyPlaces, checkpointAfterRedaction, type RedactionRow } from "./apply.js"

/** The scope file and the ledger disagree in a way no replay can mend; the scope stays locked. */
export class LedgerMismatch extends Data.TaggedError("LedgerMismatch")<{
  readonly reason: string
}> {}

const ledgerEntry = (scope: string, row: RedactionRow, places: ReadonlyArray<RedactionPlace>): LedgerRedaction => ({
  scope,
  seq: row.seq,
  id: row.id,
  term_sha256: row.term_sha256,
  places: row.places,
  requested_by: row.requested_by,
  decided_by: row.decided_by,
  reason: row.reason,
  at: row.at,
  place_list: places
})

const rowOf = (e: LedgerRedaction): RedactionRow => ({
  seq: e.seq,
  id: e.id,
  term_sha256: e.term_sha256,
  places: e.places,
  requested_by: e.requested_by,
  decided_by: e.decided_by,
  reason: e.reason,
  at: e.at
})

/**
 * After the redaction's scope transaction committed: the redaction into the ledger (once; a
 * second call for the same redaction adds nothing).
 */
export const recordInLedger = (ops: Pick<OpsStore, "appendLedger">, scope: string, applied: Applied): Effect.Effect<void, SqlError> =>
  Effect.asVoid(ops.appendLedger(ledgerEntry(scope, applied.redaction, applied.places)))

/** The file has the redaction tables (scope migration 0009). */
const hasRedactionTables = (sql: SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'redaction'`,
    (rows) => (rows[0]?.n ?? 0) > 0)

/** Every redaction the scope file holds, by seq, with its places as the ledger keeps them. */
export const fileRedactions = (sql: SqlClient, scope: string): Effect.Effect<ReadonlyArray<LedgerRedaction>, SqlError> =>
  Effect.gen(function*() {
    if (!(yield* hasRedactionTables(sql))) return []
    const rows = yield* sql<RedactionRow>`SELECT seq, id, term_sha256, places, requested_by, decided_by, reason, at
      FROM redaction ORDER BY seq`
    const placeRows = yield* sql<{ redaction_seq: number; tbl: string; key: string; col: string; offsets: string }>`
      SELECT redaction_seq, tbl, key, col, offsets FROM redaction_place ORDER BY redaction_seq, tbl, key, col`
    const places = new Map<number, Array<RedactionPlace>>()
    for (const p of placeRows) {
      const list = places.get(p.redaction_seq) ?? []
      list.push({
        table: p.tbl,
        key: JSON.parse(p.key) as Array<string | number>,
        column: p.col,
        ranges: JSON.parse(p.offsets) as Array<[number, number]>
      })
      places.set(p.redaction_seq, list)
    }
    return rows.map((r) => ledgerEntry(scope, r, places.get(r.seq) ?? []))
  })

export interface LedgerPlan {
  /** ledger redactions the file lacks, in seq order: applied again */
  readonly replay: ReadonlyArray<LedgerRedaction>
  /** file redactions the ledger lacks: added to the ledger */
  readonly record: ReadonlyArray<LedgerRedaction>
}

/**
 * What brings a file level with its ledger. A file's redactions are 1…n without a gap (the permit
 * trigger), so the ledger's own must continue them without a gap; a redaction both hold must be
 * the same one (id, salted hash and time).
 */
export const planLevel = (
  file: ReadonlyArray<LedgerRedaction>,
  ledger: ReadonlyArray<LedgerRedaction>
): Effect.Effect<LedgerPlan, LedgerMismatch> =>
  Effect.gen(function*() {
    const inFile = new Map(file.map((r) => [r.seq, r]))
    const inLedger = new Map(ledger.map((r) => [r.seq, r]))
    for (const [seq, l] of inLedger) {
      const f = inFile.get(seq)
      if (f !== undefined && (f.id !== l.id || f.term_sha256 !== l.term_sha256 || f.at !== l.at)) {
        return yield* new LedgerMismatch({
          reason: `the file's redaction ${f.id} of ${f.at} is not the ledger's ${l.id} of ${l.at}: the file is not a copy of this scope's file`
        })
      }
    }
    const last = file.reduce((max, r) => Math.max(max, r.seq), 0)
    const replay = ledger.filter((r) => !inFile.has(r.seq)).sort((a, b) => a.seq - b.seq)
    let next = last + 1
    for (const r of replay) {
      if (r.seq !== next) {
        const missing = `${r.scope}-x${String(next).padStart(4, "0")}`
        return yield* new LedgerMismatch({
          reason: `the ledger holds ${r.id} but neither it nor the file holds ${missing}: ${r.id} cannot be applied again`
        })
      }
      next++
    }
    return { replay, record: file.filter((r) => !inLedger.has(r.seq)) }
  })

export interface Levelled {
  /** ids of the redactions applied again from the ledger */
  readonly replayed: ReadonlyArray<string>
  /** redactions of the file the ledger lacked: the caller adds them */
  readonly unrecorded: ReadonlyArray<LedgerRedaction>
  /** whether a checkpoint ran and truncated the WAL (null: none was needed) */
  readonly checkpointed: boolean | null
}

/** The size of the file's WAL (0 when there is none). */
const walBytes = (file: string): number => {
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}

/**
 * Brings the scope file at `file` (open on `sql`, migrated) level with `ledger`: the missing
 * redactions applied again in one write transaction, nothing written when one does not fit
 * (LedgerMismatch naming it). Then PRAGMA wal_checkpoint(TRUNCATE) when anything was applied, or
 * when the file holds a redaction and its WAL is not empty (a redaction whose checkpoint may not
 * have run: the process was killed after the commit). Needs the RuleIndex (applyPlaces rebuilds
 * the lexical rows of the touched rules).
 */
export const bringLevel = (sql: SqlClient, scope: string, file: string, ledger: ReadonlyArray<LedgerRedaction>) =>
  Effect.gen(function*() {
    const held = yield* fileRedactions(sql, scope)
    const plan = yield* planLevel(held, ledger)
    if (plan.replay.length > 0) {
      yield* writeTransaction(sql)(Effect.forEach(plan.replay, (r) => applyPlaces(sql, rowOf(r), r.place_list), { discard: true })).pipe(
        Effect.catchTag("PlacesDoNotFit", (e) =>
          new LedgerMismatch({ reason: `the ledger's ${e.redaction} cannot be applied to this file: ${e.reason}` }))
      )
    }
    const needsCheckpoint = plan.replay.length > 0 || plan.record.length > 0 || (held.length > 0 && walBytes(file) > 0)
    const checkpointed = needsCheckpoint ? yield* checkpointAfterRedaction(sql) : null
    return { replayed: plan.replay.map((r) => r.id), unrecorded: plan.record, checkpointed } satisfies Levelled
  })

/**
 * ScopeStore's open check (src/db/scope-open-check.ts): the ledger of `scope` from ops.sqlite,
 * the file brought level, the file's redactions the ledger lacked added to it.
 */
export const levelOnOpen = (ops: Pick<OpsStore, "appendLedger" | "listLedger">, scope: string, file: string, sql: SqlClient) =>
  Effect.gen(function*() {
    const ledger = yield* ops.listLedger(scope)
    const levelled = yield* bringLevel(sql, scope, file, ledger)
    for (const r of levelled.unrecorded) yield* ops.appendLedger(r)
    if (levelled.replayed.length > 0 || levelled.unrecorded.length > 0) {
      yield* Effect.logWarning("scope brought level with the redaction ledger").pipe(Effect.annotateLogs({
        scope,
        replayed: levelled.replayed.join(","),
        recorded: levelled.unrecorded.map((r) => r.id).join(",")
      }))
    }
    if (levelled.checkpointed === false) {
      yield* Effect.logWarning("checkpoint after the redaction ledger incomplete: a reader holds the WAL").pipe(Effect.annotateLogs({ scope }))
    }
    return levelled
  })

/**
 * The ScopeOpenCheck of the service (src/services.ts wires it): levelOnOpen with `index` (the
 * lexical rows of the touched rules); a ledger the file cannot be brought level with, or a failed
 * read or write, locks the scope with the reason.
 */
export const ledgerOpenCheck = (ops: Pick<OpsStore, "appendLedger" | "listLedger">, index: RuleIndexShape): ScopeOpenCheckShape => ({
  onOpen: (scope, file, sql) =>
    levelOnOpen(ops, scope, file, sql).pipe(
      Effect.provideService(RuleIndex, index),
      Effect.asVoid,
      Effect.mapError((e) =>
        new StoreOpenError({
          file,
          reason: e._tag === "LedgerMismatch"
            ? `redaction ledger: ${e.reason}`
            : `redaction ledger: sql failure: ${String(e.cause).slice(0, 200)}`
        }))
    )
})
