/**
 * The grant-wide reads that name no scope and cover exactly the grant's scopes (§5.2 step 3):
 * status (GET /v1/status) and list_scopes (the MCP tool). Each scope with its rule counts, or
 * available: false when it cannot be opened; status also says how many rules are due for recheck.
 */
import { Effect, Schema } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import { CHANNEL_RIGHTS } from "../auth/scope-check.js"
import { AppConfig } from "../config/config.js"
import { nowInstant } from "../contracts/time.js"
import { ScopeStore } from "../db/scope-store.js"
import { ruleCounts } from "../domain/rules.js"
import { dueForRecheckCount } from "../search/due-for-recheck.js"
import { VERSION } from "../version.js"

/** A grant-wide call takes no input. */
export const NoInput = Schema.Struct({})

/** Each scope with its rule counts, or available: false when it cannot be opened. */
export const scopeCounts = (scopes: ReadonlyArray<string>) =>
  Effect.flatMap(ScopeStore, (store) =>
    Effect.forEach(scopes, (scope) =>
      Effect.gen(function*() {
        const opened = yield* Effect.either(store.use(scope))
        if (opened._tag === "Left") return { scope, available: false, rules: null }
        return { scope, available: true, rules: yield* ruleCounts(opened.right.sql) }
      })))

/**
 * scopeCounts with, per available scope, how many confirmed rules are due for recheck ("still
 * valid?", the search heads' definition): what `groundnote approvals open` counts besides the
 * waiting items.
 */
const statusScopes = (scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ScopeStore
    const nowMs = yield* Effect.clockWith((c) => c.currentTimeMillis)
    const recheck = { zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs }
    const counted = yield* scopeCounts(scopes)
    const out: Array<(typeof counted)[number] & { readonly due_for_recheck: number | null }> = []
    for (const s of counted) {
      const due = s.rules === null ? null : yield* store.read(s.scope, ({ sql }) => dueForRecheckCount(sql, recheck)).pipe(
        Effect.catchTag("ScopeLocked", () => Effect.succeed(null)))
      out.push({ ...s, due_for_recheck: due })
    }
    return out
  })

export const status = operation({
  name: "status",
  right: "read",
  input: NoInput,
  label: "query",
  scopes: () => "grant" as const,
  run: (_, call) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const { grant } = yield* CurrentCaller
      const scopes = yield* statusScopes(call.scopes)
      return {
        status: 200,
        body: {
          service: "groundnote", version: VERSION, instance: config.file.instance, now: yield* nowInstant,
          grant: { id: grant.id, kind: grant.kind, rights: grant.rights }, scopes
        },
        refs: []
      }
    })
})

export const listScopes = operation({
  name: "list_scopes",
  right: "read",
  input: NoInput,
  label: "arguments",
  scopes: () => "grant" as const,
  run: (_, call) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const caller = yield* CurrentCaller
      const scopes = yield* scopeCounts(call.scopes)
      return {
        status: 200,
        body: {
          scopes,
          rights: caller.grant.rights.filter((r) => CHANNEL_RIGHTS[caller.channel].includes(r)),
          entity_types: config.file.graph.entity_types
        },
        refs: []
      }
    })
})
