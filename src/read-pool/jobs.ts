/**
 * The jobs of the read pool's worker threads and how a worker runs them (docs/reliability.md,
 * Overload): the existing search() and the export, unchanged, over read-only
 * connections of the worker's own, so the CPU of a search or an export is spent off the main
 * thread while the one writer stays on it.
 *
 *   search   search() of src/search with the services it needs, as the worker has them: the
 *            configuration (no secrets: a search needs none), the lexical index of the same
 *            options, a ScopeStore that hands out the worker's read-only connection of each file,
 *            stages b and c as the states the main thread computed (a search goes to a worker
 *            only when neither stage runs for any of its scopes), and a Clock fixed at the main
 *            thread's instant (so a TestClock there drives the answer here too); the answer
 *            comes back rendered as JSON text (rendered.ts)
 *   export   buildExport + exportArchive of one scope file (the .tar.gz bytes)
 *   ping     the worker is up (the pool counts it ready); it says where its lexicon came from
 *
 * A connection stays open in its worker between jobs (reads only; no transaction outlives a
 * job), so its prepared statements are reused. Every read is a new read transaction: it sees
 * every write the main thread committed before the job was posted (WAL), i.e. every write a
 * client has been told about.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Clock, type Duration, Effect, Exit, Redacted, Scope } from "effect"
import { AppConfig, type AppConfigShape, type Env } from "../config/config.js"
import type { ConfigFile } from "../config/schema.js"
import { openConnection } from "../db/connection.js"
import { ScopeStore } from "../db/scope-store.js"
import type { SearchRequest, StageState } from "../domain/search-schemas.js"
import { exportArchive } from "../export/archive.js"
import { buildExport } from "../export/build.js"
import { LexicalIndex, makeLexicalIndex } from "../search/lexical/index.js"
import { shippedLexiconFrom } from "../search/lexical/lexicon.js"
import { lexicalOptions } from "../search/lexical/options.js"
import { search } from "../search/search.js"
import { OFF, SearchStages } from "../search/stage.js"
import { type RenderedSearch, renderSearch } from "./rendered.js"

/** The environment a worker gets: everything but the secrets (a search or an export needs none). */
export type PlainEnv = Omit<Env, "sessionSecret" | "opsToken" | "devMcpToken" | "devApprovalToken" | "devApiToken" | "typesafeApiKey">

export interface WorkerInit {
  readonly file: ConfigFile
  readonly env: PlainEnv
  /** the worker thread's nice value (Linux: per thread), so the main thread's listeners come first */
  readonly nice: number
  /** the main thread's shipped lexicon in shared memory (lexicon.ts), null when the search does not use it */
  readonly lexicon: SharedArrayBuffer | null
}

export const plainEnv = (env: Env): PlainEnv => {
  const { sessionSecret: _s, opsToken: _o, devMcpToken: _m, devApprovalToken: _a, devApiToken: _p, typesafeApiKey: _t, ...rest } = env
  return rest
}

export type PoolJob =
  | { readonly kind: "ping" }
  | {
    readonly kind: "search"
    readonly req: SearchRequest
    readonly searchId: string
    /** the main thread's Clock at the start of the search (epoch ms) */
    readonly nowMs: number
    /** the file of every scope of the request */
    readonly files: Readonly<Record<string, string>>
    /** per scope, the state stages b and c report (neither runs: else the search stays on the main thread) */
    readonly stages: { readonly b: Readonly<Record<string, StageState>>; readonly c: Readonly<Record<string, StageState>> }
  }
  | { readonly kind: "export"; readonly scope: string; readonly file: string; readonly zone: string; readonly nowMs: number }

export type JobValue<J extends PoolJob> = J extends { readonly kind: "search" } ? RenderedSearch
  : J extends { readonly kind: "export" } ? Uint8Array
  : { readonly threadId: number; readonly lexicon: "file" | "shared" | "unread" }

export type PoolReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string }

/** A Clock that says `ms` (sleep is the real one's). */
export const fixedClock = (ms: number): Clock.Clock => {
  const real = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => ms,
    unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
    currentTimeMillis: Effect.succeed(ms),
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    sleep: (d: Duration.Duration) => real.sleep(d)
  }
}

const NOT_HERE = "the read pool only reads"

/** The job runner of one worker: its configuration, its lexical index and its read-only connections. */
export const makeJobRunner = (init: WorkerInit) => {
  const config: AppConfigShape = {
    file: init.file,
    env: {
      ...init.env,
      sessionSecret: Redacted.make(""), opsToken: Redacted.make(""),
      devMcpToken: null, devApprovalToken: null, devApiToken: null, typesafeApiKey: null
    }
  }
  const lexical = makeLexicalIndex(lexicalOptions(config.file.search))
  const scope = Effect.runSync(Scope.make())
  const connections = new Map<string, SqlClient>()

  const connection = (file: string) =>
    Effect.suspend(() => {
      const open = connections.get(file)
      if (open !== undefined) return Effect.succeed(open)
      return openConnection(file, { readonly: true }).pipe(
        Scope.extend(scope),
        Effect.tap((sql) => Effect.sync(() => connections.set(file, sql))),
        Effect.mapError((e) => new Error(`read pool: cannot open a scope file read-only: ${e.reason}`))
      )
    })

  const storeOf = (files: Readonly<Record<string, string>>) =>
    ScopeStore.make({
      use: (s: string) =>
        Effect.map(Effect.orDie(connection(files[s] ?? "")), (sql) => ({ scope: s, file: files[s] ?? "", sql })),
      write: () => Effect.dieMessage(NOT_HERE),
      append: () => Effect.dieMessage(NOT_HERE),
      read: () => Effect.dieMessage(NOT_HERE),
      create: () => Effect.dieMessage(NOT_HERE),
      states: Effect.succeed([]),
      configured: config.file.scopes.map((s) => s.name)
    } as unknown as Parameters<typeof ScopeStore.make>[0])

  const run = (job: PoolJob): Effect.Effect<unknown, unknown> => {
    switch (job.kind) {
      case "ping":
        return Effect.sync(() => ({ threadId: 0, lexicon: shippedLexiconFrom() }))
      case "search": {
        const stageOf = <N extends "b" | "c">(name: N, states: Readonly<Record<string, StageState>>) =>
          ({ name, availability: (s: string) => states[s] ?? OFF })
        return search(job.req, job.searchId).pipe(
          Effect.map(renderSearch),
          Effect.provideService(AppConfig, config),
          Effect.provideService(ScopeStore, storeOf(job.files)),
          Effect.provideService(LexicalIndex, lexical),
          Effect.provideService(SearchStages, { stages: [stageOf("b", job.stages.b), stageOf("c", job.stages.c)] }),
          Effect.withClock(fixedClock(job.nowMs))
        )
      }
      case "export":
        return Effect.gen(function*() {
          const sql = yield* connection(job.file)
          const files = yield* buildExport(sql, { zone: job.zone, now: job.nowMs })
          // a copy of its own: the archive's Buffer may share a pooled ArrayBuffer, which cannot be transferred
          return Uint8Array.from(exportArchive(files, { mtime: Math.floor(job.nowMs / 1000) }))
        })
    }
  }

  const close = Effect.suspend(() => Scope.close(scope, Exit.void))
  return { run, close, connection }
}
