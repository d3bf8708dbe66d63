/**
 * ScopeStore: one SQLite connection per scope file (data/scopes/<scope>.sqlite), opened and
 * checked on first use (architecture.md §4.3; its quick_check on a thread of its own,
 * quick-check.ts; then the ScopeOpenCheck, the redaction ledger's replay), locked until restart
 * on any failure, and the only writer of the files. After
 * every committed `write` it raises backup_state.version_count; `append` adds one log row alone.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, ExecutionStrategy, Exit, Fiber, Option, Scope } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeExists, ScopeLocked, ValidationFailed } from "../contracts/errors.js"
import { nowInstant } from "../contracts/time.js"
import { looksLikeSqlite, openConnection, writeTransaction } from "./connection.js"
import { StoreOpenError, UnknownSchemaVersion } from "./errors.js"
import { createPrivateFile, ensurePrivateDir } from "./files.js"
import { latestVersion, migrate, schemaVersion } from "./migrate.js"
import { SCOPE_MIGRATIONS } from "./migrations/scope/index.js"
import { OpsStore } from "./ops-store.js"
import { quickCheck } from "./quick-check.js"
import { ScopeOpenCheck } from "./scope-open-check.js"

export interface ScopeHandle {
  readonly scope: string
  readonly file: string
  readonly sql: SqlClient
}

export interface ScopeState {
  readonly scope: string
  readonly created: boolean
  readonly locked: boolean
  readonly lock_reason: string | null
}

const LOCKED_MESSAGE = "this scope is locked; an operator must check its file (see the process log)"

export const scopeFile = (dataDir: string, scope: string): string => join(dataDir, "scopes", `${scope}.sqlite`)

export class ScopeStore extends Effect.Service<ScopeStore>()("Groundnote/ScopeStore", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const openCheck = yield* ScopeOpenCheck
    const storeScope = yield* Effect.scope
    // every scope's connection lives in this child scope, closed after the work in the background
    // (inBackground) has ended: a finalizer added later runs first
    const connections = yield* Scope.fork(storeScope, ExecutionStrategy.sequential)
    const background = new Set<Fiber.RuntimeFiber<void>>()
    yield* Effect.addFinalizer(() => Effect.forEach([...background], Fiber.await, { discard: true }))
    const dataDir = config.env.dataDir
    const scopesDir = join(dataDir, "scopes")
    const configured = config.file.scopes.map((s) => s.name)
    const known = latestVersion(SCOPE_MIGRATIONS)

    const open = new Map<string, ScopeHandle>()
    const locks = new Map<string, string>()
    /** rule_version count last written to backup_state, per scope */
    const counted = new Map<string, number>()
    const opening = yield* Effect.makeSemaphore(1)

    if (existsSync(scopesDir)) {
      for (const name of readdirSync(scopesDir)) {
        if (name.endsWith(".sqlite") && !configured.includes(name.slice(0, -".sqlite".length))) {
          yield* Effect.logWarning("scope file ignored: not a configured scope").pipe(Effect.annotateLogs({ file: name }))
        }
      }
    }

    /**
     * Why a configured scope without a file is locked, or null when it was never written: a file
     * ops.sqlite remembers rule versions of is lost (§4.3: the file must exist; invariant 7), not
     * new, and `scope create` refuses it.
     */
    const lostReason = (scope: string): Effect.Effect<string | null> =>
      Effect.map(Effect.orDie(ops.getBackupState(scope)), (state) =>
        Option.isSome(state) && state.value.version_count > 0
          ? `file missing: ops.sqlite remembers ${state.value.version_count} rule versions; restore the file (groundnote restore, docs/backup.md)`
          : null)

    const markLocked = (scope: string, reason: string) =>
      Effect.gen(function*() {
        locks.set(scope, reason)
        yield* Effect.logError("scope locked").pipe(Effect.annotateLogs({ scope, reason }))
      })

    // at start, so the log line, `groundnote status` and doctor say it before the first request
    for (const scope of configured) {
      if (existsSync(scopeFile(dataDir, scope))) continue
      const reason = yield* lostReason(scope)
      if (reason !== null) yield* markLocked(scope, reason)
    }

    const countVersions = (sql: SqlClient) =>
      Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM rule_version`, (rows) => rows[0]?.n ?? 0)

    /** The open check of §4.3; every failure is a reason string. */
    const checkAndOpen = (scope: string, file: string) =>
      Effect.gen(function*() {
        if (!looksLikeSqlite(file)) return yield* new StoreOpenError({ file, reason: "not a SQLite file" })
        const child = yield* Scope.fork(connections, ExecutionStrategy.sequential)
        const exit = yield* Effect.exit(Effect.gen(function*() {
          const sql = yield* openConnection(file).pipe(Scope.extend(child))
          // on a thread of its own: it reads every page, and this thread serves every request meanwhile
          const check = yield* quickCheck(file).pipe(
            Effect.mapError((e) => new StoreOpenError({ file, reason: `quick_check failed: ${e.message.slice(0, 200)}` }))
          )
          if (check.length !== 1 || check[0] !== "ok") {
            return yield* new StoreOpenError({ file, reason: `quick_check: ${check.join("; ").slice(0, 200)}` })
          }
          const version = yield* schemaVersion(sql)
          if (version === 0) return yield* new StoreOpenError({ file, reason: "no meta table" })
          if (version > known) return yield* new UnknownSchemaVersion({ file, found: version, known })
          const meta = yield* sql<{ scope: string }>`SELECT scope FROM meta`
          if (meta[0]?.scope !== scope) {
            return yield* new StoreOpenError({ file, reason: `meta.scope is "${meta[0]?.scope ?? ""}", not "${scope}"` })
          }
          // also a file at the newest version may miss a late migration (migrate applies only what is pending)
          yield* migrate(sql, file, SCOPE_MIGRATIONS, { scope, now: yield* nowInstant })
          const count = yield* countVersions(sql)
          const state = yield* ops.getBackupState(scope)
          const remembered = Option.match(state, { onNone: () => 0, onSome: (s) => s.version_count })
          if (count < remembered) {
            return yield* new StoreOpenError({
              file,
              reason: `fewer rule versions (${count}) than ops.sqlite remembers (${remembered})`
            })
          }
          // the redaction ledger: an older copy is brought level before the scope answers, or locked
          yield* openCheck.onOpen(scope, file, sql)
          counted.set(scope, remembered)
          return sql
        }))
        if (Exit.isFailure(exit)) yield* Scope.close(child, Exit.void)
        return yield* exit
      })

    const reasonOf = (cause: Cause.Cause<StoreOpenError | UnknownSchemaVersion | SqlError>): string => {
      const failure = Cause.failureOption(cause)
      if (Option.isNone(failure)) return `defect: ${Cause.pretty(cause).split("\n")[0] ?? ""}`
      const e = failure.value
      switch (e._tag) {
        case "StoreOpenError": return e.reason
        case "UnknownSchemaVersion": return `unknown schema_version ${e.found} (this build knows up to ${e.known})`
        default: return `sql failure: ${String(e.cause).slice(0, 200)}`
      }
    }

    const lock = (scope: string, reason: string) =>
      Effect.gen(function*() {
        yield* markLocked(scope, reason)
        return yield* new ScopeLocked({ scope, message: LOCKED_MESSAGE })
      })

    /** The checked handle of a scope; fails with scope-locked while it cannot be used. */
    const use = (scope: string): Effect.Effect<ScopeHandle, ScopeLocked> =>
      Effect.suspend(() => {
        const ready = open.get(scope)
        if (ready !== undefined) return Effect.succeed(ready)
        return opening.withPermits(1)(Effect.gen(function*() {
          const again = open.get(scope)
          if (again !== undefined) return again
          if (locks.has(scope)) return yield* new ScopeLocked({ scope, message: LOCKED_MESSAGE })
          if (!configured.includes(scope)) return yield* new ScopeLocked({ scope, message: "not a configured scope" })
          const file = scopeFile(dataDir, scope)
          // A configured scope without a file is 503 but not locked: `groundnote scope create` makes
          // it. One whose file ops.sqlite remembers rule versions of is lost: locked.
          if (!existsSync(file)) {
            const lost = yield* lostReason(scope)
            if (lost !== null) return yield* lock(scope, lost)
            return yield* new ScopeLocked({ scope, message: "this scope has no file yet; create it with groundnote scope create" })
          }
          const exit = yield* Effect.exit(checkAndOpen(scope, file))
          if (Exit.isFailure(exit)) return yield* lock(scope, reasonOf(exit.cause))
          const handle: ScopeHandle = { scope, file, sql: exit.value }
          open.set(scope, handle)
          return handle
        }))
      })

    /** Counts rule versions after a committed write and raises backup_state.version_count. */
    const recordCount = (h: ScopeHandle) =>
      Effect.gen(function*() {
        const count = yield* countVersions(h.sql)
        if (count > (counted.get(h.scope) ?? -1)) {
          yield* ops.raiseVersionCount(h.scope, count)
          counted.set(h.scope, count)
        }
      })

    /**
     * Runs `f` in one transaction on the scope's connection, holding the file's write lock from
     * its start (writeTransaction: Litestream commits on its own connection); after the commit the
     * version count is raised in ops.sqlite. A failure rolls everything back.
     */
    const write = <A, E, R>(scope: string, f: (h: ScopeHandle) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const h = yield* use(scope)
        const result = yield* writeTransaction(h.sql)(f(h))
        yield* recordCount(h).pipe(Effect.orDie)
        return result
      })

    /**
     * Runs `f`, one statement that only adds a row to a log table (search_log, step 6 of every
     * request), on the scope's connection outside a transaction: SQLite commits a single statement
     * by itself, atomically, and a transaction in progress on the connection holds it until that
     * commits, so the row never joins another write. Such a row cannot change the rule versions, so
     * the count is not read (0.08 ms a row against 0.22 ms through `write`).
     */
    const append = <A, E, R>(scope: string, f: (h: ScopeHandle) => Effect.Effect<A, E, R>) => Effect.flatMap(use(scope), f)

    /**
     * Runs `effect` (log rows written once a long write has freed the connection) in the
     * background: the caller answers meanwhile, and the store closes its connections only after
     * it has ended, so a service stopping right after a redaction's apply still writes every row.
     */
    const inBackground = (effect: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkDaemon(effect)
        background.add(fiber)
        fiber.addObserver(() => background.delete(fiber))
      })

    /** Runs `f` on the scope's connection in one read transaction (one snapshot). */
    const read = <A, E, R>(scope: string, f: (h: ScopeHandle) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(use(scope), (h) => h.sql.withTransaction(f(h)))

    /** Creates the file of a configured scope (0600) with its backup_state row. */
    const create = Effect.fn("ScopeStore.create")(function*(scope: string) {
      return yield* opening.withPermits(1)(Effect.gen(function*() {
        if (!configured.includes(scope)) {
          return yield* new ValidationFailed({
            message: `"${scope}" is not a configured scope: add it to scopes in groundnote.json first`,
            issues: [{ path: "name", message: "not a configured scope" }]
          })
        }
        const file = scopeFile(dataDir, scope)
        if (existsSync(file)) return yield* new ScopeExists({ message: `the scope ${scope} has a file already` })
        const state = yield* ops.getBackupState(scope).pipe(Effect.orDie)
        if (Option.isSome(state) && state.value.version_count > 0) {
          return yield* new ScopeExists({
            message: `ops.sqlite remembers ${state.value.version_count} rule versions of ${scope}: restore its file from the backup instead`
          })
        }
        ensurePrivateDir(scopesDir)
        createPrivateFile(file)
        const child = yield* Scope.fork(connections, ExecutionStrategy.sequential)
        const sql = yield* openConnection(file).pipe(Scope.extend(child), Effect.orDie)
        yield* migrate(sql, file, SCOPE_MIGRATIONS, { scope, now: yield* nowInstant }).pipe(Effect.orDie)
        yield* ops.ensureBackupState(scope).pipe(Effect.orDie)
        locks.delete(scope)
        counted.set(scope, 0)
        open.set(scope, { scope, file, sql })
        yield* Effect.logInfo("scope created").pipe(Effect.annotateLogs({ scope }))
        return { scope, created: true as const }
      }))
    })

    /** Per configured scope, in config order: file present, locked and why (for ops status). */
    const states = Effect.sync((): ReadonlyArray<ScopeState> =>
      configured.map((scope) => ({
        scope,
        created: existsSync(scopeFile(dataDir, scope)),
        locked: locks.has(scope),
        lock_reason: locks.get(scope) ?? null
      }))
    )

    return { use, write, append, inBackground, read, create, states, configured } as const
  }),
  dependencies: [OpsStore.Default]
}) {}
