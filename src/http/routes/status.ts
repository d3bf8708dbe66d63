/** GET /v1/status: grant-wide (covers exactly the grant's scopes, names none). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { handle } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { nowInstant } from "../../contracts/time.js"
import { VERSION } from "../../version.js"
import { Api } from "../api.js"

/**
 * Each scope of a grant-wide call with its rule counts, or available: false when it cannot be
 * opened (GET /v1/status and the MCP tool list_scopes).
 */
export const scopeCounts = (scopes: ReadonlyArray<string>) =>
  Effect.flatMap(ScopeStore, (store) =>
    Effect.forEach(scopes, (scope) =>
      Effect.gen(function*() {
        const opened = yield* Effect.either(store.use(scope))
        if (opened._tag === "Left") return { scope, available: false, rules: null }
        const rows = yield* opened.right.sql<{ status: string; n: number }>`
          SELECT status, count(*) AS n FROM current_version WHERE status <> 'rejected' GROUP BY status`
        const count = (s: string) => rows.find((r) => r.status === s)?.n ?? 0
        return { scope, available: true, rules: { proposed: count("proposed"), confirmed: count("confirmed"), superseded: count("superseded") } }
      })))

export const statusCall = handle({
  channel: "api",
  operation: "status",
  parse: () => Effect.succeed(null),
  scopes: () => "grant" as const,
  run: (_, ctx) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const scopes = yield* scopeCounts(ctx.scopes)
      return {
        status: 200,
        body: {
          service: "groundnote", version: VERSION, instance: config.file.instance, now: yield* nowInstant,
          grant: { id: ctx.grant.id, kind: ctx.grant.kind, rights: ctx.grant.rights }, scopes
        },
        refs: []
      }
    })
})

export const StatusLive = HttpApiBuilder.group(Api, "status", (h) => h.handleRaw("status", ({ request }) => statusCall(request)))
