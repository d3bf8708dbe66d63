/**
 * Scope file, migration 0010: a redaction keeps every row where it was (gaps.md §12: "only when
 * every non-text column is unchanged"). The exemption of 0009 compares every declared column of
 * a row but not the rowid of a table that has no INTEGER PRIMARY KEY, so under the redaction
 * permit an UPDATE could still move such a row to another rowid — and the rowid of rule_version
 * is how stage b finds the versions it has not embedded yet. One more trigger per such table
 * refuses that, permit or not. Holds its own DDL and imports no live code.
 */
import type { Migration } from "../types.js"

/** The append-only tables with a redaction exemption and a rowid of their own. */
const ROWID_TABLES = ["source", "rule_version", "entity_version", "entity_override"] as const

export const migration: Migration = {
  version: 10,
  name: "0010-redaction-rowid",
  statements: () =>
    ROWID_TABLES.map((table) =>
      `CREATE TRIGGER ${table}_keeps_rowid BEFORE UPDATE ON ${table} WHEN NEW.rowid IS NOT OLD.rowid
       BEGIN SELECT RAISE(ABORT, 'append-only'); END`)
}
