/**
 * Scope file, migration 0003: the lexical tables of stage a (architecture.md §4.1). Derived data
 * only: every row can be rebuilt from current_version; rowid = rule.seq everywhere; a rejected
 * rule is never indexed. lex_meta starts without a build, so the first search or write on a file
 * with rules rebuilds the tables from current_version. lex_relation (one row per distinct
 * relation of an indexed rule: kind, lower-case name, seq, said_at) makes the same-relation group
 * an indexed lookup (docs/decisions.md, §8 Bundles).
 *
 * A shipped migration is frozen: it holds its own DDL and imports no live code, so editing the
 * search module can never change an existing data dir's history (test/db/schema-snapshot.test.ts).
 */
import type { Migration } from "../types.js"

const STATEMENTS: ReadonlyArray<string> = [
  `CREATE VIRTUAL TABLE lex_word USING fts5(keywords, statement, relations, quote,
    tokenize = 'unicode61 remove_diacritics 2')`,
  `CREATE VIRTUAL TABLE lex_stem USING fts5(keywords, statement, relations, quote,
    tokenize = "unicode61 remove_diacritics 2 tokenchars '_'")`,
  `CREATE VIRTUAL TABLE lex_tri USING fts5(keywords, statement, relations, quote,
    tokenize = 'trigram remove_diacritics 1')`,
  `CREATE VIRTUAL TABLE lex_word_vocab USING fts5vocab(lex_word, row)`,
  `CREATE VIRTUAL TABLE lex_stem_vocab USING fts5vocab(lex_stem, row)`,
  `CREATE TABLE lex_doc (
    seq INTEGER PRIMARY KEY,
    rule_id TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL CHECK (version >= 1),
    status TEXT NOT NULL CHECK (status IN ('proposed','confirmed','superseded')),
    valid_from TEXT NOT NULL,
    valid_until TEXT)`,
  `CREATE TABLE lex_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
  `CREATE TABLE lex_relation (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    said_at TEXT NOT NULL,
    PRIMARY KEY (kind, name, seq)) WITHOUT ROWID`,
  `CREATE INDEX lex_relation_seq ON lex_relation (seq)`
]

export const migration: Migration = {
  version: 3,
  name: "0003-lexical",
  statements: () => STATEMENTS
}
