/** Scope file, migration 0001 (architecture.md §4.1 in full). */
import { appendOnlyPair, type Migration } from "../types.js"

export const SEARCH_LOG_OPERATIONS_0001 = [
  "search", "read_rule", "list_rules", "provenance", "propose", "list_proposals", "list_rejected", "decide",
  "store_source", "feedback", "list_scopes", "status"
] as const

export const searchLogTable = (name: string, operations: ReadonlyArray<string>): string => `CREATE TABLE ${name} (
  id TEXT PRIMARY KEY,
  at TEXT NOT NULL, grant_id TEXT NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('mcp','api','approval','proactive','task')),
  operation TEXT NOT NULL CHECK (operation IN (${operations.map((o) => `'${o}'`).join(",")})),
  outcome INTEGER NOT NULL,
  cross_scope INTEGER NOT NULL CHECK (cross_scope IN (0,1)),
  refs TEXT NOT NULL CHECK (json_valid(refs)),
  terms TEXT, variants TEXT, stages TEXT,
  input_sha256 TEXT,
  CHECK (operation <> 'search' OR (terms IS NOT NULL AND variants IS NOT NULL AND stages IS NOT NULL)))`

export const feedbackTable = (name: string, searchLog: string): string => `CREATE TABLE ${name} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  search_id TEXT NOT NULL REFERENCES ${searchLog}(id),
  ref TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('relevant','irrelevant','missing')),
  given_by TEXT NOT NULL, given_at TEXT NOT NULL)`

export const migration: Migration = {
  version: 1,
  name: "0001-init",
  statements: (ctx) => [
    `CREATE TABLE meta (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      scope TEXT NOT NULL, schema_version INTEGER NOT NULL CHECK (schema_version >= 1),
      created_at TEXT NOT NULL)`,
    `CREATE TRIGGER meta_fixed BEFORE UPDATE OF scope, created_at ON meta BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    { sql: "INSERT INTO meta (singleton, scope, schema_version, created_at) VALUES (1, ?, 1, ?)", params: [ctx.scope, ctx.now] },

    `CREATE TABLE rule (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL, created_by TEXT NOT NULL)`,
    `CREATE TRIGGER rule_id_in_scope BEFORE INSERT ON rule
     WHEN substr(NEW.id, 1, length((SELECT scope FROM meta)) + 1) <> (SELECT scope FROM meta) || '-'
       OR length(NEW.id) - length((SELECT scope FROM meta)) - 1 < 4
       OR substr(NEW.id, length((SELECT scope FROM meta)) + 2) GLOB '*[^0-9]*'
     BEGIN SELECT RAISE(ABORT, 'rule-id-not-in-scope'); END`,

    `CREATE TABLE source (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('jamie','mail','manual')),
      title TEXT, occurred_at TEXT, sender TEXT,
      thread TEXT,
      link TEXT,
      excerpt TEXT,
      fulltext_sha256 TEXT,
      fetched_at TEXT NOT NULL,
      feeder TEXT NOT NULL,
      CHECK (substr(id, 1, length(kind) + 1) = kind || ':'),
      CHECK (kind = 'mail' OR thread IS NULL),
      CHECK (kind <> 'mail' OR excerpt IS NOT NULL),
      CHECK (kind = 'mail' OR excerpt IS NULL),
      CHECK ((kind = 'manual') = (fulltext_sha256 IS NULL)),
      CHECK (kind = 'manual' OR (title IS NOT NULL AND occurred_at GLOB '????-??-??T??:??:??*Z')))`,
    `CREATE INDEX source_thread ON source(thread) WHERE thread IS NOT NULL`,

    `CREATE TABLE source_segment (
      source_id TEXT NOT NULL REFERENCES source(id), n INTEGER NOT NULL CHECK (n >= 1),
      start_s INTEGER NOT NULL CHECK (start_s >= 0), speaker TEXT,
      text TEXT NOT NULL CHECK (length(text) > 0),
      PRIMARY KEY (source_id, n)) WITHOUT ROWID`,

    `CREATE TABLE source_attachment (
      source_id TEXT NOT NULL REFERENCES source(id), n INTEGER NOT NULL CHECK (n >= 1),
      filename TEXT NOT NULL, media_type TEXT NOT NULL,
      size INTEGER CHECK (size IS NULL OR size >= 0),
      external TEXT,
      text TEXT,
      text_origin TEXT NOT NULL CHECK (text_origin IN ('ocr','description','none')),
      CHECK ((text_origin = 'none') = (text IS NULL)),
      PRIMARY KEY (source_id, n)) WITHOUT ROWID`,
    `CREATE TRIGGER attachment_contiguous BEFORE INSERT ON source_attachment
     WHEN NEW.n <> 1 + coalesce((SELECT max(n) FROM source_attachment WHERE source_id = NEW.source_id), 0)
     BEGIN SELECT RAISE(ABORT, 'attachment-gap'); END`,

    `CREATE TABLE rule_version (
      rule_id TEXT NOT NULL REFERENCES rule(id),
      version INTEGER NOT NULL CHECK (version >= 1),
      kind TEXT NOT NULL CHECK (kind IN ('rule','note')),
      statement TEXT NOT NULL CHECK (length(statement) BETWEEN 10 AND 500),
      source_id TEXT NOT NULL REFERENCES source(id),
      quote TEXT NOT NULL,
      timestamp_s INTEGER CHECK (timestamp_s IS NULL OR timestamp_s >= 0),
      source_link TEXT,
      said_at TEXT NOT NULL CHECK (said_at GLOB '????-??-??T??:??:??*Z'),
      speaker TEXT,
      relations TEXT NOT NULL CHECK (json_valid(relations) AND json_type(relations) = 'array'),
      keywords TEXT NOT NULL CHECK (json_valid(keywords) AND json_type(keywords) = 'array'
                                    AND json_array_length(keywords) <= 30),
      valid_from TEXT NOT NULL CHECK (valid_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
      valid_until TEXT CHECK (valid_until IS NULL OR valid_until GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
      supersedes TEXT REFERENCES rule(id),
      superseded_by TEXT REFERENCES rule(id),
      status TEXT NOT NULL CHECK (status IN ('proposed','confirmed','superseded','rejected')),
      reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
      changed_by TEXT NOT NULL,
      changed_at TEXT NOT NULL CHECK (changed_at GLOB '????-??-??T??:??:??*Z'),
      PRIMARY KEY (rule_id, version),
      CHECK ((status = 'superseded') = (valid_until IS NOT NULL)),
      CHECK (superseded_by IS NULL OR status = 'superseded'),
      CHECK (valid_until IS NULL OR valid_until >= valid_from),
      CHECK (supersedes IS NULL OR supersedes <> rule_id),
      CHECK (superseded_by IS NULL OR superseded_by <> rule_id),
      CHECK ((source_id GLOB 'jamie:*') = (timestamp_s IS NOT NULL)),
      CHECK (length(quote) >= CASE WHEN source_id GLOB 'manual:*' THEN 1 ELSE 20 END))`,
    `CREATE TRIGGER rule_version_transition BEFORE INSERT ON rule_version BEGIN
      SELECT RAISE(ABORT, 'version-gap') WHERE NEW.version <>
        1 + coalesce((SELECT max(version) FROM rule_version WHERE rule_id = NEW.rule_id), 0);
      SELECT RAISE(ABORT, 'terminal-state') WHERE (SELECT status FROM rule_version
        WHERE rule_id = NEW.rule_id ORDER BY version DESC LIMIT 1) IN ('rejected','superseded');
      SELECT RAISE(ABORT, 'invalid-transition') WHERE
           (NEW.version = 1 AND NEW.status <> 'proposed')
        OR (NEW.version > 1 AND NEW.status = 'proposed')
        OR (NEW.status = 'rejected' AND (SELECT status FROM rule_version WHERE rule_id = NEW.rule_id
              ORDER BY version DESC LIMIT 1) <> 'proposed')
        OR (NEW.status = 'superseded' AND (SELECT status FROM rule_version WHERE rule_id = NEW.rule_id
              ORDER BY version DESC LIMIT 1) <> 'confirmed');
      SELECT RAISE(ABORT, 'source-immutable') WHERE NEW.version > 1 AND EXISTS (
        SELECT 1 FROM rule_version f WHERE f.rule_id = NEW.rule_id AND f.version = 1 AND (
          f.source_id IS NOT NEW.source_id OR f.quote IS NOT NEW.quote
          OR f.timestamp_s IS NOT NEW.timestamp_s OR f.source_link IS NOT NEW.source_link));
    END`,

    `CREATE VIEW current_version AS SELECT v.* FROM rule_version v
     WHERE v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = v.rule_id)`,

    `CREATE TABLE decision (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      rule_id TEXT NOT NULL, version INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('confirm','reject','revoke','review')),
      decided_by TEXT NOT NULL CHECK (decided_by GLOB 'person:*'),
      decided_by_identity TEXT NOT NULL,
      decided_at TEXT NOT NULL CHECK (decided_at GLOB '????-??-??T??:??:??*Z'),
      reason TEXT,
      new_version INTEGER,
      FOREIGN KEY (rule_id, version) REFERENCES rule_version(rule_id, version),
      FOREIGN KEY (rule_id, new_version) REFERENCES rule_version(rule_id, version),
      CHECK (kind NOT IN ('reject','revoke') OR length(trim(coalesce(reason, ''))) > 0),
      CHECK (kind = 'review' OR new_version IS NOT NULL),
      CHECK (new_version IS NULL OR new_version > version))`,
    `CREATE INDEX decision_rule ON decision(rule_id)`,

    ...["rule", "rule_version", "decision", "source", "source_attachment", "source_segment"].flatMap(appendOnlyPair),

    `CREATE VIRTUAL TABLE rule_fts USING fts5(keywords, statement, relations, quote,
      tokenize = 'unicode61 remove_diacritics 2')`,
    `CREATE VIRTUAL TABLE rejected_fts USING fts5(keywords, statement, relations, quote,
      tokenize = 'unicode61 remove_diacritics 2')`,

    searchLogTable("search_log", SEARCH_LOG_OPERATIONS_0001),
    feedbackTable("feedback", "search_log")
  ]
}
