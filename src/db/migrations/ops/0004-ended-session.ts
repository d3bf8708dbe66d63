/**
 * Ops file, migration 0004: approval sessions ended by logout (architecture.md §5.3, dev-token
 * mode). A row says "the session `sid` is over" until `exp` (the cookie's own expiry, seconds since
 * the epoch); after exp the cookie is refused by its signature check anyway. Rows are never
 * changed; only a row whose exp has passed may be deleted (OpsStore.endSession prunes them).
 */
import { INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 4,
  name: "0004-ended-session",
  statements: () => [
    `CREATE TABLE ended_session (
      sid TEXT PRIMARY KEY CHECK (length(sid) BETWEEN 22 AND 64 AND sid NOT GLOB '*[^A-Za-z0-9_-]*'),
      exp INTEGER NOT NULL CHECK (exp > 0),
      ended_at TEXT NOT NULL CHECK (ended_at GLOB ${INSTANT_GLOB}))`,
    `CREATE TRIGGER ended_session_no_update BEFORE UPDATE ON ended_session BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER ended_session_delete_expired BEFORE DELETE ON ended_session
     WHEN OLD.exp > CAST(strftime('%s', 'now') AS INTEGER) BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
