/** GET /v1/export/:scope and GET /v1/rejected — the approval channel, a person with decide. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import { handle } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ScopeName } from "../../contracts/ids.js"
import { ruleVersionOut, type RuleVersionRow } from "../../domain/rules.js"
import { exportArchive } from "../../export/archive.js"
import { buildExport } from "../../export/build.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"

const ScopeOnly = Schema.Struct({ scope: ScopeName })

export const exportCall = handle({
  channel: "approval",
  operation: "export",
  parse: ({ params }) => decodeStrict(ScopeOnly, { scope: params.scope }, "path"),
  scopes: (p) => [p.scope],
  run: (p) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const store = yield* ScopeStore
      const now = yield* Clock.currentTimeMillis
      const { sql } = yield* store.use(p.scope)
      const files = yield* buildExport(sql, { zone: config.file.zone, now })
      const archive = exportArchive(files, { mtime: Math.floor(now / 1000) })
      const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")
      return {
        status: 200,
        response: HttpServerResponse.uint8Array(archive, {
          contentType: "application/gzip",
          headers: { "content-disposition": `attachment; filename="${p.scope}-export-${stamp}.tar.gz"` }
        }),
        refs: []
      }
    })
})

export const rejectedCall = handle({
  channel: "approval",
  operation: "list_rejected",
  parse: ({ query }) => decodeStrict(ScopeOnly, query, "query"),
  scopes: (p) => [p.scope],
  run: (p) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const rows = yield* store.read(p.scope, ({ sql }) => sql<RuleVersionRow & { decided_at: string; decision_reason: string | null }>`
        SELECT v.*, d.decided_at, d.reason AS decision_reason FROM rule r
          JOIN current_version v ON v.rule_id = r.id
          JOIN decision d ON d.rule_id = r.id AND d.kind = 'reject'
        WHERE v.status = 'rejected' ORDER BY r.seq DESC`)
      const rules = rows.map((r) => ({ ...ruleVersionOut(r), rejected_at: r.decided_at, rejected_because: r.decision_reason }))
      return { status: 200, body: { rules }, refs: rules.map((r) => r.ref) }
    })
})

export const ExportLive = HttpApiBuilder.group(Api, "export", (h) =>
  h.handleRaw("export", ({ path, request }) => exportCall(request, path))
    .handleRaw("rejected", ({ request }) => rejectedCall(request)))
