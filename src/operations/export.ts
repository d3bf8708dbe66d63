/**
 * export (GET /v1/export/:scope: the scope's Markdown export as .tar.gz, architecture.md §4.4)
 * and list_rejected (GET /v1/rejected): the approval channel, a person with decide. With
 * `?recipient=age1…` the download is age-encrypted to that recipient (<name>.tar.gz.age,
 * application/octet-stream; gaps.md §12 R5: the reader's own key, on request); without it the
 * download stays plaintext.
 */
import { Clock, Effect, Schema } from "effect"
import { operation } from "../auth/operation.js"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { AgeRecipient } from "../contracts/keys.js"
import { ScopeName } from "../contracts/ids.js"
import { ScopeInput } from "../domain/rule-schemas.js"
import { redactedMark, redactedOf } from "../domain/redacted.js"
import { encryptBytes } from "../keys/stream-file.js"
import { rejectedRows, ruleVersionOut } from "../domain/rules.js"
import { ReadPool } from "../read-pool/pool.js"

/** The file name of an export: <scope>-export-<UTC stamp>.tar.gz. */
export const exportFileName = (scope: string, nowMs: number): string =>
  `${scope}-export-${new Date(nowMs).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}.tar.gz`

export const ExportInput = Schema.Struct({ scope: ScopeName, recipient: Schema.optional(AgeRecipient) })

export const exportScope = operation({
  name: "export",
  right: "decide",
  input: ExportInput,
  label: "path",
  scopes: (p) => [p.scope],
  run: (p) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const pool = yield* ReadPool
      const now = yield* Clock.currentTimeMillis
      // the export's reads and its archive run in the read pool (off the main thread where it can)
      const bytes = yield* pool.exportArchive(p.scope, { zone: config.file.zone, now })
      const recipient = p.recipient
      if (recipient !== undefined) {
        const sealed = yield* Effect.promise(() => encryptBytes(bytes, [recipient]))
        return { status: 200, body: { _tag: "File", bytes: sealed, contentType: "application/octet-stream", filename: `${exportFileName(p.scope, now)}.age` }, refs: [] }
      }
      return { status: 200, body: { _tag: "File", bytes, contentType: "application/gzip", filename: exportFileName(p.scope, now) }, refs: [] }
    })
})

export const listRejected = operation({
  name: "list_rejected",
  right: "decide",
  input: ScopeInput,
  label: "query",
  scopes: (p) => [p.scope],
  run: (p) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const [rows, marks] = yield* store.read(p.scope, ({ sql }) => Effect.all([rejectedRows(sql), redactedOf(sql)]))
      // marked when a redaction touched the version's text or the reason of its rejection
      const rules = rows.map(({ decision_id, ...r }) => ({
        ...ruleVersionOut(r), rejected_at: r.decided_at, rejected_because: r.decision_reason,
        ...redactedMark(marks.row("rule_version", r.rule_id, r.version) || marks.row("decision", decision_id))
      }))
      return { status: 200, body: { rules }, refs: rules.map((r) => r.ref) }
    })
})
