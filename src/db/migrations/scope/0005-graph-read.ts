/**
 * Scope file, migration 0005: derived read structures of the entity graph (docs/decisions.md,
 * "Graph: performance"). Nothing here is part of the record; all of it follows from
 * entity_version and entity_fts.
 *
 * - entity_version_child: the versions by parent in the order of entity_tree (lower(name), id), so
 *   a page of children (the top level: parent_id IS NULL) is read in order and stops after the
 *   page instead of reading and sorting every child; versions that are no longer current are
 *   skipped by the view's check.
 * - entity_version_archived: the archived versions. Archived is terminal (trigger terminal-state:
 *   no version follows an archived one), so an entity is archived now exactly when it has a row
 *   here; the tree counts non-archived children and levels from entity_closure and this index
 *   without reading the current version of every descendant.
 * - entity_fts_key: per entity_fts row (seq = rowid), kind 'exact' with the normalized name and
 *   every normalized alias, kind 'initials' with the initials of each of them when they have 2–6
 *   characters. It turns the exact and initials passes of entity_resolve into index lookups.
 *   Written only by src/graph/fts.ts in the transaction of every entity_fts write, rebuilt by
 *   rebuildEntityFts; filled here from the entity_fts rows the file already has.
 *
 * IF NOT EXISTS and the DELETE before the fill make the migration safe to run on a file that
 * already has these structures.
 */
import type { Migration } from "../types.js"

/** The normalized name and every alias of each entity_fts row (aliases are joined by "|"). */
const STRINGS = `WITH RECURSIVE
  part(seq, s, rest) AS (
    SELECT rowid, name, aliases || '|' FROM entity_fts
    UNION ALL
    SELECT seq, substr(rest, 1, instr(rest, '|') - 1), substr(rest, instr(rest, '|') + 1) FROM part WHERE rest <> ''
  )`

export const migration: Migration = {
  version: 5,
  name: "0005-graph-read",
  statements: () => [
    `CREATE INDEX IF NOT EXISTS entity_version_child ON entity_version(parent_id, lower(name), id)`,
    `CREATE INDEX IF NOT EXISTS entity_version_archived ON entity_version(id) WHERE status = 'archived'`,
    `CREATE TABLE IF NOT EXISTS entity_fts_key (
      kind TEXT NOT NULL CHECK (kind IN ('exact','initials')),
      key TEXT NOT NULL CHECK (length(key) > 0),
      seq INTEGER NOT NULL,
      PRIMARY KEY (kind, key, seq)) WITHOUT ROWID`,
    `CREATE INDEX IF NOT EXISTS entity_fts_key_seq ON entity_fts_key(seq)`,
    `DELETE FROM entity_fts_key`,
    `INSERT OR IGNORE INTO entity_fts_key (kind, key, seq)
     ${STRINGS} SELECT 'exact', s, seq FROM part WHERE s <> ''`,
    // initials: the first character of every token (tokens are separated by single spaces)
    `INSERT OR IGNORE INTO entity_fts_key (kind, key, seq)
     ${STRINGS},
     initial(seq, rest, acc) AS (
       SELECT seq, s, '' FROM part WHERE s <> ''
       UNION ALL
       SELECT seq,
         CASE WHEN instr(rest, ' ') > 0 THEN substr(rest, instr(rest, ' ') + 1) ELSE '' END,
         acc || CASE WHEN substr(rest, 1, 1) = ' ' THEN '' ELSE substr(rest, 1, 1) END
       FROM initial WHERE rest <> ''
     )
     SELECT 'initials', acc, seq FROM initial WHERE rest = '' AND length(acc) BETWEEN 2 AND 6`
  ]
}
