/**
 * Where a redaction may find a term, from the schema (gaps.md §12): every TEXT (or untyped)
 * column of every table of a scope file is one of
 *  - target: text a redaction replaces in place (gaps.md §12's list);
 *  - identifier: stays as it is (ids, message ids, hashes, dates, statuses, refs, who and when);
 *  - derived: rebuilt from the targets after a redaction (full-text tables and their shadow
 *    tables, the lexical tables, the entity lookup keys, the vectors, the stamps);
 *  - own: the redaction's own record.
 * The tables and columns are read from the open file (sqlite_master, pragma_table_info), so a
 * column a later migration adds and this catalogue does not know shows up as unclassified
 * (test/redaction/places.test.ts fails on it).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { JsonShape } from "./match.js"

export type ColumnKind = "target" | "identifier" | "derived" | "own"

/** A JSON column: its values are searched, never its structure (keys only where keys are data). */
const JSON_VALUES: JsonShape = { keys: false, skipMembers: [] }

/** The target columns: table → column → the JSON shape when the column holds JSON. */
export const TARGETS: Readonly<Record<string, Readonly<Record<string, JsonShape | null>>>> = {
  source: { title: null, sender: null, excerpt: null },
  source_segment: { speaker: null, text: null },
  source_attachment: { filename: null, text: null },
  source_auth: { mail_from: null, authentication_results: null },
  // a relation's kind is one of three words and its ref an id: only its name is text
  rule_version: {
    statement: null, quote: null, speaker: null, relations: { keys: false, skipMembers: ["kind", "ref"] }, keywords: JSON_VALUES,
    reason: null
  },
  decision: { reason: null },
  review: { reason: null },
  entity_version: { name: null, aliases: JSON_VALUES, evidence: null, reason: null },
  link: { reason: null, evidence: null },
  // variants are keyed by the term they vary, and go with it
  search_log: {
    terms: { keys: false, skipMembers: [], phrase: true },
    variants: { keys: true, skipMembers: [], valuesOfMatchedKey: true, phrase: true }
  },
  classification: { reasons: JSON_VALUES },
  entity_override: { name: null, aliases: JSON_VALUES, path: JSON_VALUES }
}

/** The columns that stay (message ids stay identifiers, gaps.md §12). */
export const IDENTIFIERS: Readonly<Record<string, ReadonlyArray<string>>> = {
  meta: ["scope", "created_at"],
  rule: ["id", "created_at", "created_by"],
  source: ["id", "kind", "occurred_at", "thread", "link", "fulltext_sha256", "fetched_at", "feeder"],
  source_segment: ["source_id"],
  source_attachment: ["source_id", "media_type", "external", "text_origin"],
  source_auth: ["source_id"],
  rule_version: ["rule_id", "kind", "source_id", "source_link", "said_at", "valid_from", "valid_until", "supersedes",
    "superseded_by", "status", "changed_by", "changed_at"],
  decision: ["rule_id", "kind", "origin", "mode", "decided_by", "decided_by_identity", "decided_at"],
  review: ["id", "target", "verdict", "decided_by", "decided_by_identity", "decided_at", "origin"],
  entity: ["id", "scope", "created_at", "created_by"],
  entity_version: ["id", "type", "parent_id", "status", "valid_from", "valid_to", "change", "channel", "changed_by",
    "changed_at"],
  entity_closure: ["ancestor_id", "descendant_id"],
  link: ["id", "from_ref", "to_ref", "type", "origin", "valid_from", "valid_to", "created_at", "created_by"],
  search_log: ["id", "at", "grant_id", "channel", "operation", "refs", "stages", "input_sha256"],
  feedback: ["search_id", "ref", "verdict", "given_by", "given_at"],
  classification: ["rule_id", "ruleset", "class", "exceptions", "mode", "outcome", "day", "classified_at"],
  secret_finding: ["at", "request_id", "grant_id", "channel", "operation", "field", "kind", "fingerprint", "salt_id"],
  entity_override: ["id", "candidate_id", "type", "status", "match"],
  // the possible duplicates a proposal's check found: rule ids and refs only, the statements stay in rule_version
  proposal_neighbour: ["rule_id", "ref", "other_id"]
}

/** Tables rebuilt from the targets (beside every full-text table and its shadow tables, found from the schema). */
const DERIVED_TABLES: ReadonlyArray<string> = ["entity_fts_key", "vec_rule", "index_stamp", "content_stamp"]
const DERIVED_PREFIX = "lex_"
const OWN_PREFIX = "redaction"
const FTS_SHADOW = ["data", "idx", "content", "docsize", "config"] as const

export interface ColumnInfo {
  readonly table: string
  readonly column: string
  readonly kind: ColumnKind | null
  /** the table's primary-key columns in key order (rowid when it has none) */
  readonly pk: ReadonlyArray<string>
  readonly json: JsonShape | null
}

const isTextType = (type: string): boolean => type === "" || /CHAR|CLOB|TEXT/i.test(type)

interface MasterRow {
  readonly name: string
  readonly sql: string | null
}

interface ColumnRow {
  readonly name: string
  readonly type: string
  readonly pk: number
}

/** Every TEXT or untyped column of every table of the open scope file, classified (kind null: not in the catalogue). */
export const scopeColumns = (sql: SqlClient) =>
  Effect.gen(function*() {
    const tables = yield* sql<MasterRow>`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`
    const virtual = tables.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? "")).map((t) => t.name)
    const fts = tables.filter((t) => /USING\s+fts5\s*\(/i.test(t.sql ?? "")).map((t) => t.name)
    const shadow = new Set(fts.flatMap((t) => FTS_SHADOW.map((s) => `${t}_${s}`)))
    const out: Array<ColumnInfo> = []
    for (const t of tables) {
      const columns = yield* sql<ColumnRow>`SELECT name, type, pk FROM pragma_table_info(${t.name})`
      const pk = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
      const derived = t.name.startsWith("sqlite_") || virtual.includes(t.name) || shadow.has(t.name) ||
        t.name.startsWith(DERIVED_PREFIX) || DERIVED_TABLES.includes(t.name)
      for (const c of columns) {
        if (!isTextType(c.type)) continue
        const target = TARGETS[t.name]?.[c.name]
        const kind: ColumnKind | null = derived
          ? "derived"
          : t.name.startsWith(OWN_PREFIX)
          ? "own"
          : target !== undefined
          ? "target"
          : (IDENTIFIERS[t.name] ?? []).includes(c.name)
          ? "identifier"
          : null
        out.push({ table: t.name, column: c.name, kind, pk: pk.length > 0 ? pk : ["rowid"], json: target ?? null })
      }
    }
    return out
  })
