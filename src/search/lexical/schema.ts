/**
 * The lexical tables of a scope file (architecture.md §4.1 "Lexical tables"; created by the
 * frozen migration src/db/migrations/scope/0003-lexical.ts). Derived data only: every row can
 * be rebuilt from current_version; rowid = rule.seq everywhere; a rejected rule is never indexed.
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

/** The FTS tables, in the order the index writes them. */
export const LEX_FTS_TABLES = ["lex_word", "lex_stem", "lex_tri"] as const
export type LexFtsTable = (typeof LEX_FTS_TABLES)[number]

/**
 * Where each table's tokenizer ends a token (the migration's tokenize clauses): unicode61 keeps
 * letters and digits; lex_stem adds "_" (tokenchars '_': the mark of a compound's tail, "_leist"),
 * which lex_word's separates. lex_tri's trigrams are not split so; its entry is lex_word's.
 */
export const TOKEN_SEPARATORS: Readonly<Record<LexFtsTable, RegExp>> = {
  lex_word: /[^\p{L}\p{N}]+/u,
  lex_stem: /[^\p{L}\p{N}_]+/u,
  lex_tri: /[^\p{L}\p{N}]+/u
}
