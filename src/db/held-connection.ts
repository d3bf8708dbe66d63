/**
 * Statements on the connection a transaction of this fiber holds. @effect/sql runs each statement
 * inside a span of its own, a Scope and the client's acquirer (its permit, or the transaction's
 * connection): ~20 µs of fiber steps a statement, against 1–5 µs for the statement itself. A
 * search (one read transaction a scope) and a proposal's check (inside its write transaction)
 * run 20–110 statements each. Inside a transaction of this fiber on the same client, the
 * connection is already the one the acquirer would give, and no other fiber can take it, so
 * rowsOf, valuesOf and runOf compile the statement as the client would and execute it on that connection.
 * Anywhere else (no transaction, or one on another client's connection) they run the statement
 * exactly as the client does.
 *
 * openConnection registers every client it opens (`registerConnection`); a client it did not
 * open always takes the client's own path.
 */
import type { Connection } from "@effect/sql/SqlConnection"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Context, Effect } from "effect"

/** the one connection of each client openConnection made */
const connections = new WeakMap<SqlClient.SqlClient, Connection>()

/** Remembers the connection of `sql` (its acquirer's, the same object for every statement). */
export const registerConnection = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  Effect.scoped(Effect.map(sql.reserve, (conn) => {
    connections.set(sql, conn)
  }))

/** The connection of `sql` when this fiber's transaction holds it, else undefined. */
const heldConnection = (context: Context.Context<never>, sql: SqlClient.SqlClient): Connection | undefined => {
  const held = Context.getOption(context, SqlClient.TransactionConnection)
  if (held._tag === "None") return undefined
  const conn = held.value[0]
  return conn === connections.get(sql) ? conn : undefined
}

/** The statement's rows (as `yield* statement`). */
export const rowsOf = <A extends object>(sql: SqlClient.SqlClient, statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    const conn = heldConnection(fiber.currentContext, sql)
    if (conn === undefined) return statement
    const [text, params] = statement.compile()
    return conn.execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>
  })

/** The statement's rows as arrays of values (as `statement.values`). */
export const valuesOf = (
  sql: SqlClient.SqlClient,
  statement: Statement.Statement<unknown>
): Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    const conn = heldConnection(fiber.currentContext, sql)
    if (conn === undefined) return statement.values
    const [text, params] = statement.compile()
    return conn.executeValues(text, params)
  })

/** The statement run for its effect (as `statement.raw`). */
export const runOf = (sql: SqlClient.SqlClient, statement: Statement.Statement<unknown>): Effect.Effect<unknown, SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    const conn = heldConnection(fiber.currentContext, sql)
    if (conn === undefined) return statement.raw
    const [text, params] = statement.compile(true)
    return conn.executeRaw(text, params)
  })
