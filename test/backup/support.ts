/** Backup test support: a data dir with a copy backup directory, the service's layers, seeding. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Exit, Layer, ManagedRuntime } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { BackupLock } from "../../src/backup/lock.js"
import { openConnection } from "../../src/db/connection.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { storeLayer, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import type { Stores } from "../support/run.js"

export interface BackupEnv {
  readonly root: string
  readonly dataDir: string
  readonly backupDir: string
  readonly exportDir: string
  readonly config: AppConfigShape
  readonly cleanup: () => void
}

export interface EnvOptions {
  readonly kind?: "copy" | "litestream"
  readonly scopes?: ReadonlyArray<string>
  readonly exportDir?: boolean
}

/** <root>/data (the data dir), <root>/backup (0700) and <root>/exports (0700), and a config of them. */
export const backupEnv = (options: EnvOptions = {}): BackupEnv => {
  const root = mkdtempSync(join(tmpdir(), "gn-backup-"))
  chmodSync(root, 0o700)
  const dataDir = join(root, "data")
  const backupDir = join(root, "backup")
  const exportDir = join(root, "exports")
  mkdirSync(dataDir, { mode: 0o700 })
  mkdirSync(backupDir, { mode: 0o700 })
  mkdirSync(exportDir, { mode: 0o700 })
  const kind = options.kind ?? "copy"
  const backup = kind === "copy"
    ? { kind, directory: backupDir, deadman_url: "http://127.0.0.1:9/ping" }
    : { kind, target: "file:///replica", prefix: "gn", deadman_url: "http://127.0.0.1:9/ping" }
  const config = testConfig(dataDir, {
    scopes: (options.scopes ?? ["sales", "ops"]).map((name) => ({ name, providers_allowed: [] })),
    backup: options.exportDir === true ? { ...backup, export_directory: exportDir } : backup
  })
  return { root, dataDir, backupDir, exportDir, config, cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) }
}

export type ServiceR = Stores | BackupLock

export const serviceLayer = (config: AppConfigShape) =>
  Layer.merge(storeLayer(config), BackupLock.Default) as Layer.Layer<ServiceR, unknown>

/** Runs `effect` on a fresh service (layers built and closed around it: a start and a stop). */
export const runService = <A, E>(config: AppConfigShape, effect: Effect.Effect<A, E, ServiceR>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(serviceLayer(config)), Effect.scoped) as Effect.Effect<A, unknown>)

/** The failure of an effect that must fail (a typed failure, else the test fails). */
export const failureOf = async <A, E>(config: AppConfigShape, effect: Effect.Effect<A, E, ServiceR>): Promise<E> => {
  const exit = await Effect.runPromiseExit(effect.pipe(Effect.provide(serviceLayer(config)), Effect.scoped) as Effect.Effect<A, E>)
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  if (exit.cause._tag !== "Fail") throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return exit.cause.error
}

/** One long-lived service for tests that need two operations at once (the lock). */
export const serviceRuntime = (config: AppConfigShape) => ManagedRuntime.make(serviceLayer(config))

const agent = { grantId: "person:1", channel: "mcp" as const }
export const person = { grantId: "person:2", identity: "anna@example.com" }

/**
 * Creates `scope` and stores a mail source and `rules` proposals (the first from the mail, the
 * others manual); every second one is confirmed.
 */
export const seedScope = (scope: string, rules: number) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create(scope)
    yield* storeSource(mailSource({ scope }), "service:1")
    for (let i = 1; i <= rules; i++) {
      const req = i === 1
        ? mailProposal({ scope })
        : manualProposal(`Rule number ${i} of ${scope}: always check the delivery date`, { scope, keywords: [`kw${i}`] })
      yield* propose(req, agent)
      if (i % 2 === 1) yield* decide(`${scope}-${String(i).padStart(4, "0")}`, { decision: "confirm", version: 1 }, person)
    }
  })

/** Confirms `ruleId` (version 1) as the person. */
export const confirm = (ruleId: string) => decide(ruleId, { decision: "confirm", version: 1 }, person)

/** Runs `f` on a read-write connection to `file` (outside the service: tampering in tests). */
export const withFile = <A>(file: string, f: (sql: SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(openConnection(file), f)) as Effect.Effect<A>)

/** Rows of a table in `file`. */
export const countIn = (file: string, table: string): Promise<number> =>
  withFile(file, (sql) => Effect.map(sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${table}`), (r) => r[0]?.n ?? 0))
