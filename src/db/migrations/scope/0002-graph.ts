/** Scope file, migration 0002: the knowledge graph (graph.md §3 in full, incl. the log rebuild). */
import { appendOnlyPair, type Migration } from "../types.js"
import { SEARCH_LOG_OPERATIONS_0001, feedbackTable, searchLogTable } from "./0001-init.js"

export const SEARCH_LOG_OPERATIONS_0002 = [
  ...SEARCH_LOG_OPERATIONS_0001,
  "resolve_entity", "read_entity", "create_entity", "move_entity", "update_entity", "propose_link", "list_links",
  "list_structure", "review_structure", "archive_entity", "export"
] as const

const endpointKnown = (col: string): string => `(
       EXISTS (SELECT 1 FROM rule WHERE 'rule/' || id = NEW.${col})
    OR EXISTS (SELECT 1 FROM entity WHERE 'entity/' || id = NEW.${col})
    OR EXISTS (SELECT 1 FROM source WHERE 'source/' || id = NEW.${col})
    OR EXISTS (SELECT 1 FROM source_attachment WHERE 'attachment/' || source_id || '#' || n = NEW.${col}))`

const refKind = (col: string): string =>
  `(substr(${col}, 1, 5) = 'rule/' OR substr(${col}, 1, 7) IN ('source/','entity/') OR substr(${col}, 1, 11) = 'attachment/')`

export const migration: Migration = {
  version: 2,
  name: "0002-graph",
  statements: () => [
    // 3.1 log rebuild (SQLite cannot alter a CHECK)
    searchLogTable("search_log_new", SEARCH_LOG_OPERATIONS_0002),
    `INSERT INTO search_log_new (id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256)
     SELECT id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256 FROM search_log`,
    feedbackTable("feedback_new", "search_log_new"),
    `INSERT INTO feedback_new (id, search_id, ref, verdict, given_by, given_at)
     SELECT id, search_id, ref, verdict, given_by, given_at FROM feedback`,
    `DROP TABLE feedback`,
    `DROP TABLE search_log`,
    `ALTER TABLE search_log_new RENAME TO search_log`,
    `ALTER TABLE feedback_new RENAME TO feedback`,

    // 3.2 entities
    `CREATE TABLE entity (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      scope TEXT NOT NULL,
      created_at TEXT NOT NULL CHECK (created_at GLOB '????-??-??T??:??:??*Z'),
      created_by TEXT NOT NULL CHECK (created_by IN ('human','agent','import')))`,
    `CREATE TRIGGER entity_in_scope BEFORE INSERT ON entity
     WHEN NEW.scope IS NOT (SELECT scope FROM meta) OR NEW.id IS NOT NEW.scope || '-e' || printf('%04d', NEW.seq)
     BEGIN SELECT RAISE(ABORT, 'entity-id-not-in-scope'); END`,
    `CREATE TABLE entity_version (
      id TEXT NOT NULL REFERENCES entity(id),
      version INTEGER NOT NULL CHECK (version >= 1),
      type TEXT NOT NULL CHECK (length(type) BETWEEN 2 AND 30 AND type NOT GLOB '*[^a-z0-9_]*'),
      name TEXT NOT NULL CHECK (length(trim(name)) BETWEEN 1 AND 200),
      aliases TEXT NOT NULL CHECK (json_valid(aliases) AND json_type(aliases) = 'array' AND json_array_length(aliases) <= 20),
      parent_id TEXT REFERENCES entity(id),
      status TEXT NOT NULL CHECK (status IN ('active','unconfirmed','archived')),
      valid_from TEXT NOT NULL CHECK (valid_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
      valid_to TEXT CHECK (valid_to IS NULL OR valid_to GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
      evidence TEXT CHECK (evidence IS NULL OR length(evidence) BETWEEN 1 AND 1000),
      change TEXT NOT NULL CHECK (change IN ('create','move','update','confirm','revert','archive')),
      channel TEXT NOT NULL CHECK (channel IN ('mcp','api','approval')),
      changed_by TEXT NOT NULL,
      changed_at TEXT NOT NULL CHECK (changed_at GLOB '????-??-??T??:??:??*Z'),
      reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
      PRIMARY KEY (id, version),
      CHECK (parent_id IS NULL OR parent_id <> id),
      CHECK (valid_to IS NULL OR valid_to >= valid_from),
      CHECK ((status = 'archived') = (valid_to IS NOT NULL)),
      CHECK ((channel = 'approval') = (change IN ('confirm','revert','archive'))),
      CHECK (channel <> 'approval' OR changed_by GLOB 'person:*'),
      CHECK (change <> 'create' OR status = 'unconfirmed'),
      CHECK (change <> 'confirm' OR status = 'active'),
      CHECK (change <> 'archive' OR status = 'archived'))`,
    `CREATE VIEW entity_current AS SELECT v.* FROM entity_version v
     WHERE v.version = (SELECT max(w.version) FROM entity_version w WHERE w.id = v.id)`,
    `CREATE TABLE entity_closure (
      ancestor_id TEXT NOT NULL REFERENCES entity(id),
      descendant_id TEXT NOT NULL REFERENCES entity(id),
      depth INTEGER NOT NULL CHECK (depth >= 0),
      PRIMARY KEY (ancestor_id, descendant_id),
      CHECK ((depth = 0) = (ancestor_id = descendant_id))) WITHOUT ROWID`,
    `CREATE INDEX entity_closure_up ON entity_closure(descendant_id, depth)`,
    `CREATE INDEX entity_closure_down ON entity_closure(ancestor_id, depth)`,
    `CREATE TRIGGER entity_version_rules BEFORE INSERT ON entity_version BEGIN
      SELECT RAISE(ABORT, 'version-gap') WHERE NEW.version <>
        1 + coalesce((SELECT max(version) FROM entity_version WHERE id = NEW.id), 0);
      SELECT RAISE(ABORT, 'invalid-transition') WHERE (NEW.version = 1) <> (NEW.change = 'create');
      SELECT RAISE(ABORT, 'terminal-state') WHERE
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1) = 'archived';
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.change = 'confirm' AND
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1) <> 'unconfirmed';
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.change IN ('move','update') AND NEW.status IS NOT
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1);
      SELECT RAISE(ABORT, 'state-changed') WHERE NEW.change IN ('confirm','archive') AND EXISTS (
        SELECT 1 FROM entity_version p WHERE p.id = NEW.id AND p.version = NEW.version - 1 AND (p.type IS NOT NEW.type
          OR p.name IS NOT NEW.name OR p.aliases IS NOT NEW.aliases OR p.parent_id IS NOT NEW.parent_id));
      SELECT RAISE(ABORT, 'cycle') WHERE NEW.parent_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM entity_closure WHERE ancestor_id = NEW.id AND descendant_id = NEW.parent_id);
      SELECT RAISE(ABORT, 'parent-archived') WHERE NEW.status <> 'archived' AND NEW.parent_id IS NOT NULL
        AND (SELECT status FROM entity_current WHERE id = NEW.parent_id) = 'archived';
      SELECT RAISE(ABORT, 'has-children') WHERE NEW.status = 'archived' AND EXISTS (
        SELECT 1 FROM entity_closure c JOIN entity_current k ON k.id = c.descendant_id
        WHERE c.ancestor_id = NEW.id AND c.depth = 1 AND k.status <> 'archived');
    END`,
    `CREATE VIRTUAL TABLE entity_fts USING fts5(name, aliases, tokenize = 'trigram')`,

    // 3.3 links and reviews
    `CREATE TABLE link (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      from_ref TEXT NOT NULL, to_ref TEXT NOT NULL,
      type TEXT NOT NULL CHECK (length(type) BETWEEN 3 AND 40 AND type NOT GLOB '*[^a-z_]*'),
      origin TEXT NOT NULL CHECK (origin IN ('deterministic','proposed','human')),
      confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
      reason TEXT CHECK (reason IS NULL OR length(trim(reason)) > 0),
      evidence TEXT CHECK (evidence IS NULL OR length(evidence) BETWEEN 1 AND 1000),
      valid_from TEXT NOT NULL CHECK (valid_from GLOB '????-??-??T??:??:??*Z'),
      valid_to TEXT CHECK (valid_to IS NULL OR valid_to GLOB '????-??-??T??:??:??*Z'),
      created_at TEXT NOT NULL CHECK (created_at GLOB '????-??-??T??:??:??*Z'),
      created_by TEXT NOT NULL,
      CHECK (from_ref <> to_ref),
      CHECK ((origin = 'proposed') = (confidence IS NOT NULL)),
      CHECK (origin = 'deterministic' OR reason IS NOT NULL),
      CHECK ((origin = 'deterministic') = (created_by = 'code')),
      CHECK (valid_to IS NULL OR valid_to >= valid_from),
      CHECK ${refKind("from_ref")},
      CHECK ${refKind("to_ref")})`,
    `CREATE UNIQUE INDEX link_open ON link(from_ref, type, to_ref) WHERE valid_to IS NULL`,
    `CREATE INDEX link_to ON link(to_ref, type)`,
    `CREATE TRIGGER link_in_scope BEFORE INSERT ON link
     WHEN NEW.id IS NOT (SELECT scope FROM meta) || '-l' || printf('%04d', NEW.seq)
     BEGIN SELECT RAISE(ABORT, 'link-id-not-in-scope'); END`,
    `CREATE TRIGGER link_endpoints BEFORE INSERT ON link BEGIN
      SELECT RAISE(ABORT, 'link-endpoint-unknown') WHERE NOT ${endpointKnown("from_ref")};
      SELECT RAISE(ABORT, 'link-endpoint-unknown') WHERE NOT ${endpointKnown("to_ref")};
      SELECT RAISE(ABORT, 'entity-archived') WHERE EXISTS (SELECT 1 FROM entity_current
        WHERE status = 'archived' AND 'entity/' || id IN (NEW.from_ref, NEW.to_ref));
    END`,
    `CREATE TRIGGER link_end_once BEFORE UPDATE ON link WHEN NOT (OLD.valid_to IS NULL AND NEW.valid_to IS NOT NULL
      AND NEW.seq IS OLD.seq AND NEW.id IS OLD.id AND NEW.from_ref IS OLD.from_ref AND NEW.to_ref IS OLD.to_ref
      AND NEW.type IS OLD.type AND NEW.origin IS OLD.origin AND NEW.confidence IS OLD.confidence
      AND NEW.reason IS OLD.reason AND NEW.evidence IS OLD.evidence AND NEW.valid_from IS OLD.valid_from
      AND NEW.created_at IS OLD.created_at AND NEW.created_by IS OLD.created_by)
     BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER link_no_delete BEFORE DELETE ON link BEGIN SELECT RAISE(ABORT, 'append-only'); END`,

    `CREATE TABLE review (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      target TEXT NOT NULL,
      verdict TEXT NOT NULL CHECK (verdict IN ('confirm','reject','revert')),
      decided_by TEXT NOT NULL CHECK (decided_by GLOB 'person:*'),
      decided_by_identity TEXT NOT NULL,
      decided_at TEXT NOT NULL CHECK (decided_at GLOB '????-??-??T??:??:??*Z'),
      reason TEXT,
      new_version INTEGER,
      CHECK (target GLOB 'entity/*@*' OR target GLOB 'link/*'),
      CHECK (verdict <> 'reject' OR target GLOB 'link/*'),
      CHECK (verdict <> 'revert' OR target GLOB 'entity/*'),
      CHECK (verdict = 'confirm' OR length(trim(coalesce(reason, ''))) > 0))`,
    `CREATE UNIQUE INDEX review_once ON review(target)`,
    `CREATE TRIGGER review_in_scope BEFORE INSERT ON review
     WHEN NEW.id IS NOT (SELECT scope FROM meta) || '-r' || printf('%04d', NEW.seq)
     BEGIN SELECT RAISE(ABORT, 'review-id-not-in-scope'); END`,

    ...["entity", "entity_version", "review"].flatMap(appendOnlyPair),

    // derived read structures, no record (docs/decisions.md, graph.md §6 Queries): children in the
    // tree's order, archived versions, a rule's links by from_ref at any validity (link_to's twin),
    // and the exact/initials keys of entity_fts (written by src/graph/fts.ts)
    `CREATE INDEX entity_version_child ON entity_version(parent_id, lower(name), id)`,
    `CREATE INDEX entity_version_archived ON entity_version(id) WHERE status = 'archived'`,
    `CREATE INDEX link_from ON link(from_ref, type)`,
    `CREATE TABLE entity_fts_key (
      kind TEXT NOT NULL CHECK (kind IN ('exact','initials')),
      key TEXT NOT NULL CHECK (length(key) > 0),
      seq INTEGER NOT NULL,
      PRIMARY KEY (kind, key, seq)) WITHOUT ROWID`,
    `CREATE INDEX entity_fts_key_seq ON entity_fts_key(seq)`
  ]
}
