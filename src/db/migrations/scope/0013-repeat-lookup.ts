/**
 * Scope file, migration 0013: the look-up of an identical repeat of a proposal (its first
 * version by source, grant, statement and quote) by its source and the length of its statement.
 * The index of 0004 (rule_version_first_source) narrows it to a source's first versions only: a
 * mail or a meeting many rules quote gave a scan of all of them, each statement compared, on
 * every proposal. The length tells almost every statement of one source apart and holds no text,
 * so no copy of a statement a redaction must reach is made. Holds its own DDL and imports no live
 * code.
 */
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 13,
  name: "0013-repeat-lookup",
  statements: () => [
    `CREATE INDEX rule_version_first_length ON rule_version(source_id, length(statement)) WHERE version = 1`
  ]
}
