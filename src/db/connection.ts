/**
 * One SQLite connection with the pragmas of architecture.md §4 on it: journal_mode=WAL,
 * busy_timeout=5000, synchronous=NORMAL, foreign_keys=ON, recursive_triggers=ON; and
 * secure_delete=ON, temp_store=MEMORY (gaps.md §12, R1): a freed page or a replaced row is zeroed
 * in the file, and no sort or temporary index spills text to a temporary file.
 * No VACUUM; the one manual checkpoint is the one after a redaction (src/redaction).
 */
import { closeSync, existsSync, openSync, readSync } from "node:fs"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Scope } from "effect"
import { StoreOpenError } from "./errors.js"
import { registerConnection } from "./held-connection.js"

/**
 * Storage hygiene (gaps.md §12, R1): run on every connection the service opens to one of its
 * files — the writer, the ops store, the read pool's and the backup worker's read-only
 * connections, the quick check's thread — so no connection frees a page with old text in it or
 * sorts into a temporary file. Each opener runs this one list; none keeps a copy.
 */
export const HYGIENE_PRAGMAS = [
  "PRAGMA secure_delete = ON",
  "PRAGMA temp_store = MEMORY"
] as const

export const PRAGMAS = [
  "PRAGMA busy_timeout = 5000",
  "PRAGMA synchronous = NORMAL",
  "PRAGMA foreign_keys = ON",
  "PRAGMA recursive_triggers = ON",
  ...HYGIENE_PRAGMAS
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
    yield* registerConnection(client).pipe(
      Effect.mapError((e) => new StoreOpenError({ file, reason: `cannot open: ${String(e.cause)}` }))
    )
    return client
  })

/**
 * `sql.withTransaction` that begins IMMEDIATE: the transaction takes the file's write lock at its
 * start (waiting up to busy_timeout for it), not at its first write. A DEFERRED transaction that
 * reads and then writes fails at once with SQLITE_BUSY_SNAPSHOT, which busy_timeout does not wait
 * out, when another connection to the file committed in between: Litestream writing its own
 * tables, a CLI process, a second server. Every transaction that writes goes through here;
 * nested in another transaction on the connection it is a savepoint, as withTransaction's. When
 * the lock stays taken past busy_timeout, it fails with the BEGIN's SqlError (SQLITE_BUSY).
 */
export const writeTransaction = (sql: SqlClient.SqlClient): WithWriteTransaction => {
  const known = writeTransactions.get(sql)
  if (known !== undefined) return known
  const inner = withWriteTransaction(sql)
  const made: WithWriteTransaction = (effect) => countedWriting(sql, inner(effect))
  writeTransactions.set(sql, made)
  return made
}

/**
 * Runs `effect` holding the connection without a transaction: no statement of this thread runs on
 * it meanwhile (they wait for it without blocking the thread; searches read in the workers), so
 * another thread's write on the file (a redaction's apply and checkpoint) meets no writer of ours,
 * whose wait for the lock (busy_timeout) would stop this thread.
 */
export const holdingConnection = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  Effect.scoped(countedWriting(sql, Effect.zipRight(sql.reserve, effect)))

/** write transactions running on, or waiting for, each connection */
const writing = new WeakMap<SqlClient.SqlClient, number>()

/** `effect` counted as a write on the connection from its start to its end, whatever the outcome. */
const countedWriting = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    writing.set(sql, (writing.get(sql) ?? 0) + 1)
    return Effect.ensuring(effect, Effect.sync(() => writing.set(sql, (writing.get(sql) ?? 1) - 1)))
  })

/**
 * Whether a write transaction holds the connection or waits for it: every other statement on it
 * waits until that commits (a redaction's apply: seconds), so a read that must not wait goes to a
 * connection of its own (the read pool's workers).
 */
export const isWriting = (sql: SqlClient.SqlClient): boolean => (writing.get(sql) ?? 0) > 0

type WithWriteTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>

/** writeTransaction of each connection, made once (not at every write). */
const writeTransactions = new WeakMap<SqlClient.SqlClient, WithWriteTransaction>()

const withWriteTransaction = (sql: SqlClient.SqlClient): WithWriteTransaction =>
  SqlClient.makeWithTransaction({
    transactionTag: SqlClient.TransactionConnection,
    spanAttributes: [["db.system.name", "sqlite"]],
    acquireConnection: Effect.flatMap(Scope.make(), (scope) =>
      Effect.map(Scope.extend(sql.reserve, scope), (conn) => [scope, conn] as const)),
    begin: (conn) => conn.executeUnprepared("BEGIN IMMEDIATE", [], undefined),
    savepoint: (conn, id) => conn.executeUnprepared(`SAVEPOINT effect_sql_${id}`, [], undefined),
    commit: (conn) => conn.executeUnprepared("COMMIT", [], undefined),
    // a BEGIN IMMEDIATE that found the lock taken after busy_timeout left no transaction to end:
    // its SqlError (SQLITE_BUSY) is the answer, not a defect of the rollback
    rollback: (conn) =>
      conn.executeUnprepared("ROLLBACK", [], undefined).pipe(
        Effect.catchIf((e) => /no transaction is active/.test(String(e.cause)), () => Effect.succeed([]))
      ),
    rollbackSavepoint: (conn, id) => conn.executeUnprepared(`ROLLBACK TO SAVEPOINT effect_sql_${id}`, [], undefined)
  })
