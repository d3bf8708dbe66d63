/**
 * One SQLite connection with the pragmas of architecture.md §4 on it: journal_mode=WAL,
 * busy_timeout=5000, synchronous=NORMAL, foreign_keys=ON, recursive_triggers=ON.
 * No manual checkpoints, no VACUUM.
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, type Scope } from "effect"
import { StoreOpenError } from "./errors.js"

export const PRAGMAS = [
  "PRAGMA busy_timeout = 5000",
  "PRAGMA synchronous = NORMAL",
  "PRAGMA foreign_keys = ON",
  "PRAGMA recursive_triggers = ON"
] as const

const SQLITE_HEADER = "SQLite format 3\u0000"

/** True when the file exists and starts with the SQLite header. */
export const looksLikeSqlite = (file: string): boolean => {
  if (!existsSync(file)) return false
  const fd = openSync(file, "r")
  try {
    const buf = Buffer.alloc(16)
    const n = readSync(fd, buf, 0, 16, 0)
    return n === 16 && buf.toString("latin1") === SQLITE_HEADER
  } finally {
    closeSync(fd)
  }
}

export interface OpenOptions {
  readonly readonly?: boolean
}

/**
 * Opens `file` (which must exist: create it first with mode 0600) and sets the pragmas.
 * The connection closes when the surrounding Scope closes.
 */
export const openConnection = (
  file: string,
  options: OpenOptions = {}
): Effect.Effect<SqliteClient.SqliteClient, StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!existsSync(file)) return yield* new StoreOpenError({ file, reason: "missing" })
    const client = yield* SqliteClient.make({ filename: file, readonly: options.readonly ?? false }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.catchAllDefect((defect) =>
        new StoreOpenError({ file, reason: `cannot open: ${defect instanceof Error ? defect.message : String(defect)}` })
      )
    )
    for (const pragma of PRAGMAS) {
      yield* client.unsafe(pragma).raw.pipe(
        Effect.mapError((e) => new StoreOpenError({ file, reason: `pragma failed: ${String(e.cause)}` }))
      )
    }
    return client
  })
