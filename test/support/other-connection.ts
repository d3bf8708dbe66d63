/**
 * Another connection to a SQLite file, as Litestream or a CLI process holds one: the driver under
 * @effect/sql-sqlite-node, opened directly. It never waits for a lock (busy_timeout 0).
 */
import { createRequire } from "node:module"

export interface OtherConnection {
  exec(sql: string): void
  pragma(sql: string): unknown
  prepare(sql: string): { get(): unknown }
  close(): void
}

export const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => OtherConnection

export const otherConnection = (file: string): OtherConnection => {
  const db = new Database(file)
  db.pragma("busy_timeout = 0")
  return db
}

/** Runs `sql` on the other connection: "committed", or the SQLite code it was refused with. */
export const tryCommit = (db: OtherConnection, sql: string): string => {
  try {
    db.exec(sql)
    return "committed"
  } catch (e) {
    return (e as { code?: string }).code ?? String(e)
  }
}
