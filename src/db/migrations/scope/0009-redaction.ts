/**
 * Scope file, migration 0009: redaction, the one audited exception to append-only (gaps.md §12,
 * architecture.md §15.2 slices R1 and R2).
 *
 *  - every FTS5 table gets its `secure-delete` option, so a deleted or replaced row leaves no
 *    token in the index segments (R1; the connection pragmas secure_delete and temp_store are set
 *    by src/db/connection.ts);
 *  - `redaction_salt`: one random salt per scope file; a redaction keeps the term only as
 *    HMAC-SHA-256(salt, normalized term), never the term;
 *  - `redaction`: one row per redaction (id `<scope>-x0001`, scope-local seq, the salted hash,
 *    how many places, the requesting grant, the deciding person, the reason, when);
 *  - `redaction_place`: where one redaction replaced text: table, the row's key (a JSON array of
 *    its primary-key values), column and the replaced ranges of the text as it was (a JSON array of
 *    [start, end] UTF-16 offsets, ascending). No text. Answers read it to mark a record redacted;
 *    the ledger in ops.sqlite holds the same places so an older copy can be brought level;
 *  - `redaction_permit`: at most one row, inserted first and deleted last by the transaction of a
 *    redaction; while it exists, the append-only UPDATE triggers of the tables below let through
 *    an UPDATE that changes only the listed text columns (every other column unchanged). DELETE
 *    stays refused everywhere.
 *
 * The text columns per table are this migration's own list (frozen with it); src/redaction/places.ts
 * carries the live catalogue and test/redaction/places.test.ts checks that the two agree. Holds its
 * own DDL and imports no live code.
 */
import { appendOnlyPair, INSTANT_GLOB, type Migration } from "../types.js"

const BUMP = "UPDATE content_stamp SET seq = seq + 1, nonce = random() WHERE id = 1;"

const FTS5_TABLES = ["rule_fts", "rejected_fts", "entity_fts", "lex_word", "lex_stem", "lex_tri"] as const

/** Append-only tables and their redactable text columns; every other column must stay as it was. */
const REDACTABLE: ReadonlyArray<readonly [table: string, text: ReadonlyArray<string>, other: ReadonlyArray<string>]> = [
  ["source", ["title", "sender", "excerpt"],
    ["id", "kind", "occurred_at", "thread", "link", "fulltext_sha256", "fetched_at", "feeder"]],
  ["source_segment", ["speaker", "text"], ["source_id", "n", "start_s"]],
  ["source_attachment", ["filename", "text"], ["source_id", "n", "media_type", "size", "external", "text_origin"]],
  ["source_auth", ["mail_from", "authentication_results"], ["source_id"]],
  ["rule_version", ["statement", "quote", "speaker", "relations", "keywords", "reason"],
    ["rule_id", "version", "kind", "source_id", "timestamp_s", "source_link", "said_at", "valid_from", "valid_until",
      "supersedes", "superseded_by", "status", "changed_by", "changed_at"]],
  ["decision", ["reason"],
    ["id", "rule_id", "version", "kind", "origin", "mode", "classification_id", "decided_by", "decided_by_identity",
      "decided_at", "new_version"]],
  ["review", ["reason"], ["seq", "id", "target", "verdict", "decided_by", "decided_by_identity", "decided_at", "new_version"]],
  ["entity_version", ["name", "aliases", "evidence", "reason"],
    ["id", "version", "type", "parent_id", "status", "valid_from", "valid_to", "change", "channel", "changed_by",
      "changed_at"]],
  ["classification", ["reasons"],
    ["id", "rule_id", "version", "ruleset", "class", "exceptions", "mode", "outcome", "day", "daily_limit",
      "classified_at"]],
  ["entity_override", ["name", "aliases", "path"],
    ["id", "version", "n", "candidate_id", "type", "status", "score", "match"]]
]

const PERMITTED = "EXISTS (SELECT 1 FROM redaction_permit)"

const unchanged = (columns: ReadonlyArray<string>): string => columns.map((c) => `NEW.${c} IS OLD.${c}`).join(" AND ")

const exemption = ([table, , other]: (typeof REDACTABLE)[number]): ReadonlyArray<string> => [
  `DROP TRIGGER ${table}_no_update`,
  `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} WHEN NOT (${PERMITTED} AND ${unchanged(other)})
   BEGIN SELECT RAISE(ABORT, 'append-only'); END`
]

/** link: its one permitted change (valid_to set once) stays; a redaction may change reason and evidence. */
const LINK_OTHER = ["seq", "id", "from_ref", "to_ref", "type", "origin", "confidence", "valid_from", "valid_to",
  "created_at", "created_by"]

const STATEMENTS: ReadonlyArray<string> = [
  ...FTS5_TABLES.map((t) => `INSERT INTO ${t}(${t}, rank) VALUES('secure-delete', 1)`),

  `CREATE TABLE redaction_salt (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    salt TEXT NOT NULL CHECK (length(salt) = 64 AND salt NOT GLOB '*[^0-9a-f]*'))`,
  "INSERT INTO redaction_salt (singleton, salt) VALUES (1, lower(hex(randomblob(32))))",
  ...appendOnlyPair("redaction_salt"),

  `CREATE TABLE redaction (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    term_sha256 TEXT NOT NULL CHECK (length(term_sha256) = 64 AND term_sha256 NOT GLOB '*[^0-9a-f]*'),
    places INTEGER NOT NULL CHECK (places >= 1),
    requested_by TEXT NOT NULL CHECK (length(requested_by) >= 1),
    decided_by TEXT NOT NULL CHECK (length(decided_by) >= 1),
    reason TEXT NOT NULL CHECK (length(trim(reason)) BETWEEN 1 AND 500),
    at TEXT NOT NULL CHECK (at GLOB ${INSTANT_GLOB}))`,
  `CREATE TRIGGER redaction_in_scope BEFORE INSERT ON redaction
   WHEN NEW.id IS NOT (SELECT scope FROM meta) || '-x' || printf('%04d', NEW.seq)
     OR NOT EXISTS (SELECT 1 FROM redaction_permit WHERE redaction_seq = NEW.seq)
   BEGIN SELECT RAISE(ABORT, 'redaction-not-permitted'); END`,
  ...appendOnlyPair("redaction"),

  `CREATE TABLE redaction_place (
    redaction_seq INTEGER NOT NULL REFERENCES redaction(seq),
    tbl TEXT NOT NULL CHECK (length(tbl) BETWEEN 1 AND 64),
    key TEXT NOT NULL CHECK (json_valid(key) AND json_type(key) = 'array'),
    col TEXT NOT NULL CHECK (length(col) BETWEEN 1 AND 64),
    offsets TEXT NOT NULL CHECK (json_valid(offsets) AND json_type(offsets) = 'array' AND json_array_length(offsets) >= 1),
    PRIMARY KEY (redaction_seq, tbl, key, col)) WITHOUT ROWID`,
  `CREATE INDEX redaction_place_row ON redaction_place(tbl, key)`,
  `CREATE TRIGGER redaction_place_permitted BEFORE INSERT ON redaction_place
   WHEN NOT EXISTS (SELECT 1 FROM redaction_permit WHERE redaction_seq = NEW.redaction_seq)
   BEGIN SELECT RAISE(ABORT, 'redaction-not-permitted'); END`,
  ...appendOnlyPair("redaction_place"),

  `CREATE TABLE redaction_permit (
    redaction_seq INTEGER PRIMARY KEY CHECK (redaction_seq >= 1))`,
  `CREATE TRIGGER redaction_permit_single BEFORE INSERT ON redaction_permit
   WHEN EXISTS (SELECT 1 FROM redaction_permit)
     OR NEW.redaction_seq <> 1 + coalesce((SELECT max(seq) FROM redaction), 0)
   BEGIN SELECT RAISE(ABORT, 'redaction-not-permitted'); END`,
  `CREATE TRIGGER redaction_permit_no_update BEFORE UPDATE ON redaction_permit
   BEGIN SELECT RAISE(ABORT, 'append-only'); END`,

  ...REDACTABLE.flatMap(exemption),
  `DROP TRIGGER link_end_once`,
  `CREATE TRIGGER link_end_once BEFORE UPDATE ON link WHEN NOT (
      (OLD.valid_to IS NULL AND NEW.valid_to IS NOT NULL
        AND NEW.seq IS OLD.seq AND NEW.id IS OLD.id AND NEW.from_ref IS OLD.from_ref AND NEW.to_ref IS OLD.to_ref
        AND NEW.type IS OLD.type AND NEW.origin IS OLD.origin AND NEW.confidence IS OLD.confidence
        AND NEW.reason IS OLD.reason AND NEW.evidence IS OLD.evidence AND NEW.valid_from IS OLD.valid_from
        AND NEW.created_at IS OLD.created_at AND NEW.created_by IS OLD.created_by)
      OR (${PERMITTED} AND ${unchanged(LINK_OTHER)}))
   BEGIN SELECT RAISE(ABORT, 'append-only'); END`,

  ...["redaction", "redaction_place"].flatMap((table) =>
    (["insert", "update", "delete"] as const).map((event) =>
      `CREATE TRIGGER content_stamp_${table}_${event} AFTER ${event.toUpperCase()} ON ${table} BEGIN ${BUMP} END`))
]

export const migration: Migration = {
  version: 9,
  name: "0009-redaction",
  statements: () => STATEMENTS
}
