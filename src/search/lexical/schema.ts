/**
 * The lexical tables of a scope file (architecture.md §4.1 "Lexical tables"; migration
 * 0003-lexical runs exactly these statements). Derived data only: every row can be rebuilt from
 * current_version; rowid = rule.seq everywhere; a rejected rule is never indexed.
 *
 * - lex_word: the four columns (keywords, statement, relations, quote) as NFKC lowercase word
 *   tokens, followed by the canonical code and unit tokens of the column (normalize).
 * - lex_stem: Snowball stems (one run per configured language), the code tokens, and the
 *   "_"-marked tails of compounds (decompound; "_leist" for Hakenleisten).
 * - lex_tri: the lex_word text under the trigram tokenizer (filled only with features.trigram).
 * - lex_word_vocab / lex_stem_vocab: fts5vocab rows (term, doc, cnt) for IDF, key terms,
 *   decompounding and typo correction.
 * - lex_doc: per indexed rule the id, version, status, valid_from and valid_until.
 * - lex_meta: key/value; build = the analyzer version and the options that change what is stored.
 */
export const LEX_SCHEMA: ReadonlyArray<string> = [
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
  `CREATE TABLE lex_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`
]

/**
 * lex_relation (migration 0003-lexical): one row per distinct relation of an indexed rule,
 * kind and the name in Unicode lower case (String.prototype.toLowerCase), with the version's
 * said_at. Derived data like the lex_* tables (same writes, same rebuild): it makes the
 * same-relation group of a bundle an indexed lookup instead of a scan of every current version.
 */
export const LEX_RELATION_SCHEMA: ReadonlyArray<string> = [
  `CREATE TABLE lex_relation (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    said_at TEXT NOT NULL,
    PRIMARY KEY (kind, name, seq)) WITHOUT ROWID`,
  `CREATE INDEX lex_relation_seq ON lex_relation (seq)`
]

/** The FTS tables, in the order the index writes them. */
export const LEX_FTS_TABLES = ["lex_word", "lex_stem", "lex_tri"] as const
export type LexFtsTable = (typeof LEX_FTS_TABLES)[number]
