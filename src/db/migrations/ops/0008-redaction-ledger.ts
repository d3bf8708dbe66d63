/**
 * Ops file, migration 0008: the redaction ledger (gaps.md §12 "Nothing comes back"). One row per
 * redaction of a scope file, written after the scope's transaction committed: the redaction's
 * scope-local seq and id, the salted hash of its term, how many places, who asked, who decided,
 * why, when, and the places themselves as JSON `[{table, key, column, ranges}]` (the row's key,
 * the column, the replaced [start, end) UTF-16 ranges of the text as it was) — never the text.
 * When a scope file opens and this ledger holds a redaction the file does not (a restored older
 * copy), the redaction is applied again from these places. Append-only: never changed, never
 * deleted; one row per (scope, redaction_seq). Holds its own DDL and imports no live code.
 */
import { INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 8,
  name: "0008-redaction-ledger",
  statements: () => [
    `CREATE TABLE redaction_ledger (
      seq INTEGER PRIMARY KEY,
      scope TEXT NOT NULL CHECK (length(scope) BETWEEN 1 AND 40),
      redaction_seq INTEGER NOT NULL CHECK (redaction_seq >= 1),
      redaction_id TEXT NOT NULL CHECK (redaction_id = scope || '-x' || printf('%04d', redaction_seq)),
      term_sha256 TEXT NOT NULL CHECK (length(term_sha256) = 64 AND term_sha256 NOT GLOB '*[^0-9a-f]*'),
      places INTEGER NOT NULL CHECK (places >= 1),
      requested_by TEXT NOT NULL CHECK (length(requested_by) >= 1),
      decided_by TEXT NOT NULL CHECK (length(decided_by) >= 1),
      reason TEXT NOT NULL CHECK (length(trim(reason)) BETWEEN 1 AND 500),
      at TEXT NOT NULL CHECK (at GLOB ${INSTANT_GLOB}),
      place_list TEXT NOT NULL CHECK (json_valid(place_list) AND json_type(place_list) = 'array'
        AND json_array_length(place_list) >= 1),
      recorded_at TEXT NOT NULL CHECK (recorded_at GLOB ${INSTANT_GLOB}),
      UNIQUE (scope, redaction_seq))`,
    `CREATE TRIGGER redaction_ledger_no_update BEFORE UPDATE ON redaction_ledger BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER redaction_ledger_no_delete BEFORE DELETE ON redaction_ledger BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
