/**
 * The index side of stage a: what the lex_* tables hold for one rule, reindexRule (one rule,
 * next to rule_fts in the writer's transaction) and the full rebuild that lex_meta.build
 * triggers (architecture.md §4.1).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf, runOf } from "../../db/held-connection.js"
import { ftsColumns, type FtsSource } from "../../db/fts.js"
import { buildKey, type LexicalOptions, storesTails } from "./options.js"
import { isStopword } from "./stopwords.js"
import { codeTokens, stem, tails, tokenize } from "./text.js"

export interface ColumnTexts {
  readonly word: string
  readonly stem: string
  readonly tri: string
}

/** lex_stem holds something: stems, or (decompound without stem) the words with their tails. */
export const storesStems = (o: LexicalOptions): boolean => o.features.stem || storesTails(o)

/** The three index texts of one column. */
export const columnTexts = (text: string, o: LexicalOptions): ColumnTexts => {
  const tokens = tokenize(text)
  const present = new Set(tokens)
  const codes: Array<string> = []
  if (o.features.normalize) {
    for (const c of codeTokens(text.normalize("NFKC"), (t) => isStopword(t, o.languages))) {
      if (!present.has(c.token)) {
        present.add(c.token)
        codes.push(c.token)
      }
    }
  }
  const word = [...tokens, ...codes].join(" ")
  const stems: Array<string> = []
  if (o.features.stem) {
    for (const lang of o.languages) for (const t of tokens) stems.push(stem(t, lang))
  } else if (storesTails(o)) {
    stems.push(...tokens)
  }
  if (stems.length > 0) stems.push(...codes)
  if (storesTails(o)) {
    const seen = new Set<string>()
    for (const t of tokens) {
      for (const tail of tails(t)) {
        if (seen.has(tail)) continue
        seen.add(tail)
        stems.push(tail)
      }
    }
  }
  return { word, stem: stems.join(" "), tri: o.features.trigram ? word : "" }
}

export interface DocRow extends FtsSource {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
  readonly status: "proposed" | "confirmed" | "superseded" | "rejected"
  readonly valid_from: string
  readonly valid_until: string | null
  readonly said_at: string
}

const CURRENT = `SELECT r.seq, v.rule_id, v.version, v.status, v.valid_from, v.valid_until, v.said_at,
    v.keywords, v.statement, v.relations, v.quote
  FROM rule r JOIN current_version v ON v.rule_id = r.id`

/**
 * The lex_relation key of a relation: its kind and its name in Unicode lower case (the
 * same-relation group compares names case-insensitively beyond ASCII).
 */
export const relationKey = (r: { readonly kind: string; readonly name: string }): { readonly kind: string; readonly name: string } =>
  ({ kind: r.kind, name: r.name.toLowerCase() })

const removeRow = (sql: SqlClient, seq: number) =>
  Effect.gen(function*() {
    yield* runOf(sql, sql`DELETE FROM lex_word WHERE rowid = ${seq}`)
    yield* runOf(sql, sql`DELETE FROM lex_stem WHERE rowid = ${seq}`)
    yield* runOf(sql, sql`DELETE FROM lex_tri WHERE rowid = ${seq}`)
    yield* runOf(sql, sql`DELETE FROM lex_doc WHERE seq = ${seq}`)
    yield* runOf(sql, sql`DELETE FROM lex_relation WHERE seq = ${seq}`)
  })

/** Writes the rows of one rule version; rejected versions are never written. */
const insertRow = (sql: SqlClient, row: DocRow, o: LexicalOptions) =>
  Effect.gen(function*() {
    if (row.status === "rejected") return
    const c = ftsColumns(row)
    const k = columnTexts(c.keywords, o)
    const s = columnTexts(c.statement, o)
    const r = columnTexts(c.relations, o)
    const q = columnTexts(c.quote, o)
    yield* runOf(sql, sql`INSERT INTO lex_word (rowid, keywords, statement, relations, quote)
      VALUES (${row.seq}, ${k.word}, ${s.word}, ${r.word}, ${q.word})`)
    if (storesStems(o)) {
      yield* runOf(sql, sql`INSERT INTO lex_stem (rowid, keywords, statement, relations, quote)
        VALUES (${row.seq}, ${k.stem}, ${s.stem}, ${r.stem}, ${q.stem})`)
    }
    if (o.features.trigram) {
      yield* runOf(sql, sql`INSERT INTO lex_tri (rowid, keywords, statement, relations, quote)
        VALUES (${row.seq}, ${k.tri}, ${s.tri}, ${r.tri}, ${q.tri})`)
    }
    yield* runOf(sql, sql`INSERT INTO lex_doc (seq, rule_id, version, status, valid_from, valid_until)
      VALUES (${row.seq}, ${row.rule_id}, ${row.version}, ${row.status}, ${row.valid_from}, ${row.valid_until})`)
    // one row per distinct (kind, lower-case name): a rule naming a relation twice counts once
    for (const r of JSON.parse(row.relations) as ReadonlyArray<{ kind: string; name: string }>) {
      const key = relationKey(r)
      yield* runOf(sql, sql`INSERT OR IGNORE INTO lex_relation (kind, name, seq, said_at)
        VALUES (${key.kind}, ${key.name}, ${row.seq}, ${row.said_at})`)
    }
  })

/** Rebuilds every lex_* table from current_version (not rejected) and records the build. */
export const rebuild = (sql: SqlClient, o: LexicalOptions): Effect.Effect<void, SqlError> =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`DELETE FROM lex_word`.raw
    yield* sql`DELETE FROM lex_stem`.raw
    yield* sql`DELETE FROM lex_tri`.raw
    yield* sql`DELETE FROM lex_doc`.raw
    yield* sql`DELETE FROM lex_relation`.raw
    const rows = yield* sql.unsafe<DocRow>(`${CURRENT} WHERE v.status <> 'rejected' ORDER BY r.seq`)
    for (const row of rows) yield* insertRow(sql, row, o)
    yield* sql`INSERT INTO lex_meta (key, value) VALUES ('build', ${buildKey(o)})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`.raw
  })).pipe(Effect.withSpan("LexicalIndex.rebuild"))

/** lex_meta.build, or null when the tables were never built. */
export const storedBuild = (sql: SqlClient): Effect.Effect<string | null, SqlError> =>
  Effect.map(rowsOf(sql, sql<{ value: string }>`SELECT value FROM lex_meta WHERE key = 'build'`), (rows) => rows[0]?.value ?? null)

/** the build a check found current on each connection (a rebuild of other options is a restart away) */
const foundCurrent = new WeakMap<SqlClient, string>()

/** Whether a check on this connection found the tables built for these options (nothing is read). */
export const foundBuilt = (sql: SqlClient, o: LexicalOptions): boolean => foundCurrent.get(sql) === buildKey(o)

/**
 * Rebuilds when lex_meta.build is missing or differs from the options (the first search or
 * write on a connection after a config change or the migration). True when it rebuilt.
 */
export const ensureBuild = (sql: SqlClient, o: LexicalOptions): Effect.Effect<boolean, SqlError> =>
  Effect.gen(function*() {
    const key = buildKey(o)
    if ((yield* storedBuild(sql)) === key) {
      foundCurrent.set(sql, key)
      return false
    }
    yield* rebuild(sql, o)
    return true
  })

/**
 * Maintains the lex_* rows (lex_relation included) of one rule next to rule_fts, in the caller's transaction: the
 * current version replaces the old rows unless it is rejected (then the rule is removed).
 */
export const reindexRule = (sql: SqlClient, ruleId: string, o: LexicalOptions): Effect.Effect<void, SqlError> =>
  Effect.gen(function*() {
    if (yield* ensureBuild(sql, o)) return
    const rows = yield* rowsOf(sql, sql.unsafe<DocRow>(`${CURRENT} WHERE r.id = ?`, [ruleId]))
    const row = rows[0]
    if (row === undefined) return
    yield* removeRow(sql, row.seq)
    yield* insertRow(sql, row, o)
  })
