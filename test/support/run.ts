/** Runs an effect against the stores of a data dir; the layer (and every connection) closes after. */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Exit, type Layer } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import type { Services } from "../../src/services.js"
import { storeLayer } from "./env.js"

export type Stores = Services

/** `outer` wraps the store layer too (e.g. a log capture that must see the layer's own logs). */
export const run = <A, E>(config: AppConfigShape, effect: Effect.Effect<A, E, Stores>, outer?: Layer.Layer<never>): Promise<A> => {
  const inner = effect.pipe(Effect.provide(storeLayer(config) as Layer.Layer<Stores, unknown>), Effect.scoped) as Effect.Effect<A, unknown>
  return Effect.runPromise(outer === undefined ? inner : Effect.provide(inner, outer))
}

/** The failure of an effect that must fail (the test fails if it succeeds). */
export const runFail = async <A, E>(config: AppConfigShape, effect: Effect.Effect<A, E, Stores>): Promise<E> => {
  const exit = await Effect.runPromiseExit(
    effect.pipe(Effect.provide(storeLayer(config) as Layer.Layer<Stores, unknown>), Effect.scoped) as Effect.Effect<A, E>
  )
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return failure
}

export const sqlOf = (scope: string) => Effect.map(Effect.flatMap(ScopeStore, (s) => s.use(scope)), (h) => h.sql)

export const fileHash = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex")

export const APPEND_ONLY_TABLES = ["rule", "rule_version", "decision", "source", "source_attachment", "source_segment"] as const

/** Row counts of the append-only tables (and the FTS tables) of a scope. */
export const counts = (sql: SqlClient) =>
  Effect.gen(function*() {
    const out: Record<string, number> = {}
    for (const t of [...APPEND_ONLY_TABLES, "rule_fts", "rejected_fts"]) {
      const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${t}`)
      out[t] = rows[0]?.n ?? 0
    }
    return out
  })
