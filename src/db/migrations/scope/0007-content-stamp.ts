/**
 * Scope file, migration 0007: the change stamp of everything an answer reads besides the lexical
 * index, under which a search's answer is held. One row: `seq` counts every change of the file's
 * content tables, `nonce` is a
 * new random number at each change. A trigger after every insert, update and delete of each table
 * below bumps both in the writer's own transaction, so every connection (another process, a
 * worker's read connection, a restored file) sees the stamp that belongs to the rows it reads; a
 * search keeps a scope's answer (its heads and bundles) under this stamp and index_stamp (0006)
 * and reads it again when either differs. As in 0006, the nonce keeps a rolled-back write or a
 * restored older file from showing a stamp that an earlier, different state had.
 *
 * Every table of the file is here except: the logs, which no answer reads — search_log and
 * feedback (every search writes them) and secret_finding (a refused write's only trace: the file
 * changes by those rows alone); the lexical index (lex_*) and index_stamp, under 0006's stamp;
 * the full-text tables (virtual, written with their rows); this stamp itself. A later migration that
 * adds a table adds its three triggers (test/db/content-stamp.test.ts checks every table). This
 * migration holds its own DDL and imports no live code.
 */
import type { Migration } from "../types.js"

const BUMP = "UPDATE content_stamp SET seq = seq + 1, nonce = random() WHERE id = 1;"

const CONTENT_TABLES = [
  "classification", "decision", "entity", "entity_closure", "entity_fts_key", "entity_version", "link", "meta", "review",
  "rule", "rule_version", "source", "source_attachment", "source_auth", "source_segment", "vec_rule"
] as const

const triggersOf = (table: string): ReadonlyArray<string> =>
  (["insert", "update", "delete"] as const).map((event) =>
    `CREATE TRIGGER content_stamp_${table}_${event} AFTER ${event.toUpperCase()} ON ${table} BEGIN ${BUMP} END`)

export const migration: Migration = {
  version: 7,
  name: "0007-content-stamp",
  statements: () => [
    `CREATE TABLE content_stamp (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL CHECK (seq >= 0),
      nonce INTEGER NOT NULL)`,
    "INSERT INTO content_stamp (id, seq, nonce) VALUES (1, 0, random())",
    ...CONTENT_TABLES.flatMap(triggersOf)
  ]
}
