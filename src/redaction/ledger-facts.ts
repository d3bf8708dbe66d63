/**
 * The scope files of a data dir against the redaction ledger of its ops.sqlite, read only (doctor's
 * redaction-ledger finding, through the CLI host; the service may run or not). Ids only: no
 * place and no text leaves the files.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { openConnection } from "../db/connection.js"
import { OPS_FILE } from "../db/ops-store.js"
import { scopeFile } from "../db/scope-store.js"

export interface ScopeLedgerFacts {
  readonly scope: string
  /** ids of the ledger's redactions the file lacks */
  readonly behind: ReadonlyArray<string>
  /** ids of the file's redactions the ledger lacks */
  readonly unrecorded: ReadonlyArray<string>
  /** how many redactions the file holds */
  readonly held: number
}

export type LedgerFactsResult =
  | { readonly read: true; readonly scopes: ReadonlyArray<ScopeLedgerFacts> }
  | { readonly read: false; readonly why: string }

const hasTable = (sql: SqlClient, name: string) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ${name}`,
    (rows) => (rows[0]?.n ?? 0) > 0)

const idsOf = (file: string, table: "redaction_ledger" | "redaction", scope: string) =>
  Effect.scoped(Effect.gen(function*() {
    const sql = yield* openConnection(file, { readonly: true })
    if (!(yield* hasTable(sql, table))) return [] as Array<string>
    const rows = table === "redaction_ledger"
      ? yield* sql<{ id: string }>`SELECT redaction_id AS id FROM redaction_ledger WHERE scope = ${scope} ORDER BY redaction_seq`
      : yield* sql<{ id: string }>`SELECT id FROM redaction ORDER BY seq`
    return rows.map((r) => r.id)
  }))

/** Every configured scope that has a file, against the ledger; why not, when a file cannot be read. */
export const readLedgerFacts = (dataDir: string, scopes: ReadonlyArray<string>): Effect.Effect<LedgerFactsResult> =>
  Effect.gen(function*() {
    const ops = join(dataDir, OPS_FILE)
    if (!existsSync(ops)) return { read: false as const, why: `there is no ${ops}` }
    const out: Array<ScopeLedgerFacts> = []
    for (const scope of scopes) {
      const file = scopeFile(dataDir, scope)
      if (!existsSync(file)) continue
      const ledger = yield* idsOf(ops, "redaction_ledger", scope)
      const held = yield* idsOf(file, "redaction", scope)
      out.push({
        scope,
        behind: ledger.filter((id) => !held.includes(id)),
        unrecorded: held.filter((id) => !ledger.includes(id)),
        held: held.length
      })
    }
    return { read: true as const, scopes: out }
  }).pipe(Effect.catchAll((e) =>
    Effect.succeed({ read: false as const, why: `a file could not be read: ${e._tag === "StoreOpenError" ? e.reason : String(e.cause).slice(0, 200)}` })))
