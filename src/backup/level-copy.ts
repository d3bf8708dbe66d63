/**
 * A fetched copy of a scope file brought level with the redaction ledger before anything else
 * reads it (gaps.md §12 "Nothing comes back"): `groundnote restore` links only a levelled copy,
 * the restore probe checks and exports only a levelled copy. The copy is private (a temporary
 * file of restore or of the probe), migrated to this build's schema when the ledger has something
 * to apply, and closed (its WAL checkpointed away) before it is used. The answer is the check
 * `redaction-ledger`: which redactions were applied again, or why the copy cannot be levelled
 * (then restore writes nothing and the probe fails the scope).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { ConfigFile } from "../config/schema.js"
import { nowInstant } from "../contracts/time.js"
import { openConnection } from "../db/connection.js"
import { migrate } from "../db/migrate.js"
import { SCOPE_MIGRATIONS } from "../db/migrations/scope/index.js"
import { type LedgerRedaction, listLedgerOn } from "../db/ops-store.js"
import { RuleIndex } from "../domain/rule-index.js"
import { bringLevel } from "../redaction/ledger.js"
import { makeLexicalIndex } from "../search/lexical/index.js"
import { lexicalOptions } from "../search/lexical/options.js"
import { ruleIndexOf } from "../search/rule-index.js"
import type { Check } from "./schemas.js"

export const LEDGER_CHECK = "redaction-ledger"

export interface LevelCopyInput {
  /** the private copy (not a live file) */
  readonly file: string
  readonly scope: string
  /** the live ledger's redactions of the scope */
  readonly ledger: ReadonlyArray<LedgerRedaction>
  /** groundnote.json's search: the replay keeps the lexical rows of the touched rules as the service builds them */
  readonly search: ConfigFile["search"]
}

const sqlFailure = (e: SqlError | { readonly _tag: "StoreOpenError"; readonly reason: string } | { readonly _tag: "UnknownSchemaVersion" }) =>
  e._tag === "StoreOpenError" ? e.reason : e._tag === "UnknownSchemaVersion" ? "unknown schema version" : String(e.cause).slice(0, 200)

/** The copy at `file` level with the ledger; the check says what was done or why it could not be. */
export const levelCopy = (input: LevelCopyInput): Effect.Effect<Check> => {
  if (input.ledger.length === 0) return Effect.succeed({ check: LEDGER_CHECK, ok: true, detail: "the redaction ledger holds nothing of this scope" })
  const index = ruleIndexOf(makeLexicalIndex(lexicalOptions(input.search)))
  return Effect.scoped(Effect.gen(function*() {
    const sql = yield* openConnection(input.file)
    yield* migrate(sql, input.file, SCOPE_MIGRATIONS, { scope: input.scope, now: yield* nowInstant })
    return yield* bringLevel(sql, input.scope, input.file, input.ledger).pipe(Effect.provideService(RuleIndex, index))
  })).pipe(
    Effect.map((levelled): Check => ({
      check: LEDGER_CHECK,
      ok: true,
      detail: levelled.replayed.length > 0
        ? `applied again from the redaction ledger: ${levelled.replayed.join(", ")}`
        : `level with the redaction ledger (${input.ledger.length} redactions)`
    })),
    Effect.catchAll((e) =>
      Effect.succeed<Check>({ check: LEDGER_CHECK, ok: false, detail: e._tag === "LedgerMismatch" ? e.reason : `the copy could not be levelled: ${sqlFailure(e)}` }))
  )
}

/** The live ledger of a scope, read only from the ops file at `opsFile` (restore: the service may run). */
export const readLiveLedger = (opsFile: string, scope: string): Effect.Effect<ReadonlyArray<LedgerRedaction>, string> =>
  Effect.scoped(Effect.flatMap(openConnection(opsFile, { readonly: true }), (sql) => listLedgerOn(sql, scope))).pipe(
    Effect.mapError((e) => (e._tag === "StoreOpenError" ? e.reason : String(e.cause).slice(0, 200)))
  )
