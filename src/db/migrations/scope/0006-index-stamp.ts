/**
 * Scope file, migration 0006: the change stamp of the lexical index, under which a
 * connection keeps what only writes change. One row: `seq`
 * counts every change of lex_doc (a rule indexed, re-indexed, removed; the rebuild), `nonce` is a
 * new random number at each change. The triggers bump both in the writer's own transaction, so
 * every connection — another process, a worker's read connection, a restored file — sees the stamp
 * that belongs to the rows it reads; a search keeps in memory what only writes change (document
 * frequencies, known words, term counts) under the stamp it read and drops it when the stamp
 * differs. The nonce keeps a rolled-back write or a restored older file from ever showing a stamp
 * that an earlier, different state had. Every lex_word/lex_stem/lex_tri write goes with a lex_doc
 * write (src/search/lexical/document.ts), so lex_doc's triggers see them all. Derived data; this
 * migration holds its own DDL and imports no live code.
 */
import type { Migration } from "../types.js"

const BUMP = "UPDATE index_stamp SET seq = seq + 1, nonce = random() WHERE id = 1;"

export const migration: Migration = {
  version: 6,
  name: "0006-index-stamp",
  statements: () => [
    `CREATE TABLE index_stamp (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      seq INTEGER NOT NULL CHECK (seq >= 0),
      nonce INTEGER NOT NULL)`,
    "INSERT INTO index_stamp (id, seq, nonce) VALUES (1, 0, random())",
    `CREATE TRIGGER index_stamp_insert AFTER INSERT ON lex_doc BEGIN ${BUMP} END`,
    `CREATE TRIGGER index_stamp_update AFTER UPDATE ON lex_doc BEGIN ${BUMP} END`,
    `CREATE TRIGGER index_stamp_delete AFTER DELETE ON lex_doc BEGIN ${BUMP} END`
  ]
}
