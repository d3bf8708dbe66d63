/**
 * Scope file, migration 0011: the approver's day for structure (gaps.md §13, graph.md §15 Q2/Q3).
 *
 *  - `review` gets `origin` ('grant' | 'auto', as `decision.origin`): the policy adopts an agent's
 *    entity or link proposal in modes A/B with a review row of origin 'auto', decided_by
 *    'policy@<ruleset>'; two more verdicts: 'retract' (the proposing grant takes back what the
 *    policy adopted, while no person decided on it: trigger review_retract) and 'close' (a person
 *    closes a confirmed link: its valid_to is set once, as link_end_once allows). One verdict per
 *    target and kind: one person's verdict (review_once), one adoption, one retract or close.
 *  - `entity_version`: the policy's confirm is written on the agent's channel (changed_by
 *    'policy@…'); a person creates an entity on the approval channel born active (change
 *    'create', status 'active'); 'unarchive' (a person, approval channel) is the one way out of
 *    'archived'; a 'revert' may be the proposing grant's (a retract) as well as a person's.
 *  - `entity_override` is rebuilt with it (its rows reference entity_version's key).
 *
 * SQLite cannot alter a CHECK: each table is rebuilt with its rows (rowids kept) and every index,
 * view and trigger that named it comes back as it was after 0010 (the redaction exemptions of 0009
 * include the new column). Holds its own DDL and imports no live code.
 */
import type { Migration } from "../types.js"

const BUMP = "UPDATE content_stamp SET seq = seq + 1, nonce = random() WHERE id = 1;"
const PERMITTED = "EXISTS (SELECT 1 FROM redaction_permit)"
const unchanged = (columns: ReadonlyArray<string>): string => columns.map((c) => `NEW.${c} IS OLD.${c}`).join(" AND ")

const stampTriggers = (table: string): ReadonlyArray<string> =>
  (["insert", "update", "delete"] as const).map((event) =>
    `CREATE TRIGGER content_stamp_${table}_${event} AFTER ${event.toUpperCase()} ON ${table} BEGIN ${BUMP} END`)

/** The append-only pair with 0009's redaction exemption (only the text columns may change, under the permit). */
const appendOnlyRedactable = (table: string, other: ReadonlyArray<string>): ReadonlyArray<string> => [
  `CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} WHEN NOT (${PERMITTED} AND ${unchanged(other)})
   BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
  `CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, 'append-only'); END`
]

/** 0010: a row keeps its rowid. */
const keepsRowid = (table: string): string =>
  `CREATE TRIGGER ${table}_keeps_rowid BEFORE UPDATE ON ${table} WHEN NEW.rowid IS NOT OLD.rowid
   BEGIN SELECT RAISE(ABORT, 'append-only'); END`

const ENTITY_VERSION_COLUMNS = "id, version, type, name, aliases, parent_id, status, valid_from, valid_to, evidence, change, channel, changed_by, changed_at, reason"
const ENTITY_VERSION_OTHER = ["id", "version", "type", "parent_id", "status", "valid_from", "valid_to", "change", "channel", "changed_by", "changed_at"]

const ENTITY_OVERRIDE_COLUMNS = "id, version, n, candidate_id, name, type, status, aliases, path, score, match"
const ENTITY_OVERRIDE_OTHER = ["id", "version", "n", "candidate_id", "type", "status", "score", "match"]

const REVIEW_COLUMNS = "seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version"
const REVIEW_OTHER = ["seq", "id", "target", "verdict", "decided_by", "decided_by_identity", "decided_at", "new_version", "origin"]

const DAY_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'"
const INSTANT = "'????-??-??T??:??:??*Z'"

const STATEMENTS: ReadonlyArray<string> = [
  // what names entity_version from outside it: rebuilt after the rename
  "DROP VIEW entity_current",
  "DROP TRIGGER link_endpoints",

  // --- entity_version
  `CREATE TABLE entity_version_new (
      id TEXT NOT NULL REFERENCES entity(id),
      version INTEGER NOT NULL CHECK (version >= 1),
      type TEXT NOT NULL CHECK (length(type) BETWEEN 2 AND 30 AND type NOT GLOB '*[^a-z0-9_]*'),
      name TEXT NOT NULL CHECK (length(trim(name)) BETWEEN 1 AND 200),
      aliases TEXT NOT NULL CHECK (json_valid(aliases) AND json_type(aliases) = 'array' AND json_array_length(aliases) <= 20),
      parent_id TEXT REFERENCES entity(id),
      status TEXT NOT NULL CHECK (status IN ('active','unconfirmed','archived')),
      valid_from TEXT NOT NULL CHECK (valid_from GLOB ${DAY_GLOB}),
      valid_to TEXT CHECK (valid_to IS NULL OR valid_to GLOB ${DAY_GLOB}),
      evidence TEXT CHECK (evidence IS NULL OR length(evidence) BETWEEN 1 AND 1000),
      change TEXT NOT NULL CHECK (change IN ('create','move','update','confirm','revert','archive','unarchive')),
      channel TEXT NOT NULL CHECK (channel IN ('mcp','api','approval')),
      changed_by TEXT NOT NULL,
      changed_at TEXT NOT NULL CHECK (changed_at GLOB ${INSTANT}),
      reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
      PRIMARY KEY (id, version),
      CHECK (parent_id IS NULL OR parent_id <> id),
      CHECK (valid_to IS NULL OR valid_to >= valid_from),
      CHECK ((status = 'archived') = (valid_to IS NOT NULL)),
      CHECK (channel <> 'approval' OR changed_by GLOB 'person:*'),
      CHECK (channel <> 'approval' OR change IN ('create','confirm','revert','archive','unarchive')),
      CHECK (channel = 'approval' OR change NOT IN ('archive','unarchive')),
      CHECK (change <> 'confirm' OR channel = 'approval' OR changed_by GLOB 'policy@*'),
      CHECK (change <> 'create' OR status = (CASE WHEN channel = 'approval' THEN 'active' ELSE 'unconfirmed' END)),
      CHECK (change <> 'confirm' OR status = 'active'),
      CHECK (change <> 'archive' OR status = 'archived'),
      CHECK (change <> 'unarchive' OR status = 'active'))`,
  `INSERT INTO entity_version_new (rowid, ${ENTITY_VERSION_COLUMNS})
   SELECT rowid, ${ENTITY_VERSION_COLUMNS} FROM entity_version ORDER BY rowid`,

  // --- entity_override (its key references entity_version's)
  `CREATE TABLE entity_override_new (
      id TEXT NOT NULL,
      version INTEGER NOT NULL CHECK (version >= 1),
      n INTEGER NOT NULL CHECK (n BETWEEN 1 AND 20),
      candidate_id TEXT NOT NULL REFERENCES entity(id),
      name TEXT NOT NULL,
      type TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('active','unconfirmed','archived')),
      aliases TEXT NOT NULL CHECK (json_valid(aliases) AND json_type(aliases) = 'array'),
      path TEXT NOT NULL CHECK (json_valid(path) AND json_type(path) = 'array'),
      score REAL NOT NULL CHECK (score >= 0 AND score <= 1),
      match TEXT NOT NULL CHECK (match IN ('exact','alias','tokens','typo','initials','similar')),
      PRIMARY KEY (id, version, n),
      UNIQUE (id, version, candidate_id),
      FOREIGN KEY (id, version) REFERENCES entity_version_new (id, version),
      CHECK (candidate_id <> id))`,
  `INSERT INTO entity_override_new (rowid, ${ENTITY_OVERRIDE_COLUMNS})
   SELECT rowid, ${ENTITY_OVERRIDE_COLUMNS} FROM entity_override ORDER BY rowid`,

  "DROP TABLE entity_override",
  "DROP TABLE entity_version",
  // the rename carries entity_override_new's reference along
  "ALTER TABLE entity_version_new RENAME TO entity_version",
  "ALTER TABLE entity_override_new RENAME TO entity_override",

  `CREATE VIEW entity_current AS SELECT v.* FROM entity_version v
     WHERE v.version = (SELECT max(w.version) FROM entity_version w WHERE w.id = v.id)`,
  `CREATE TRIGGER link_endpoints BEFORE INSERT ON link BEGIN
      SELECT RAISE(ABORT, 'link-endpoint-unknown') WHERE NOT (
       EXISTS (SELECT 1 FROM rule WHERE 'rule/' || id = NEW.from_ref)
    OR EXISTS (SELECT 1 FROM entity WHERE 'entity/' || id = NEW.from_ref)
    OR EXISTS (SELECT 1 FROM source WHERE 'source/' || id = NEW.from_ref)
    OR EXISTS (SELECT 1 FROM source_attachment WHERE 'attachment/' || source_id || '#' || n = NEW.from_ref));
      SELECT RAISE(ABORT, 'link-endpoint-unknown') WHERE NOT (
       EXISTS (SELECT 1 FROM rule WHERE 'rule/' || id = NEW.to_ref)
    OR EXISTS (SELECT 1 FROM entity WHERE 'entity/' || id = NEW.to_ref)
    OR EXISTS (SELECT 1 FROM source WHERE 'source/' || id = NEW.to_ref)
    OR EXISTS (SELECT 1 FROM source_attachment WHERE 'attachment/' || source_id || '#' || n = NEW.to_ref));
      SELECT RAISE(ABORT, 'entity-archived') WHERE EXISTS (SELECT 1 FROM entity_current
        WHERE status = 'archived' AND 'entity/' || id IN (NEW.from_ref, NEW.to_ref));
    END`,

  "CREATE INDEX entity_version_child ON entity_version(parent_id, lower(name), id)",
  "CREATE INDEX entity_version_archived ON entity_version(id) WHERE status = 'archived'",
  // 0002's rules; 'archived' stays terminal except for a person's unarchive, which changes nothing else
  `CREATE TRIGGER entity_version_rules BEFORE INSERT ON entity_version BEGIN
      SELECT RAISE(ABORT, 'version-gap') WHERE NEW.version <>
        1 + coalesce((SELECT max(version) FROM entity_version WHERE id = NEW.id), 0);
      SELECT RAISE(ABORT, 'invalid-transition') WHERE (NEW.version = 1) <> (NEW.change = 'create');
      SELECT RAISE(ABORT, 'terminal-state') WHERE NEW.change <> 'unarchive' AND
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1) = 'archived';
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.change = 'unarchive' AND
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1) IS NOT 'archived';
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.change = 'confirm' AND
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1) <> 'unconfirmed';
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.change IN ('move','update') AND NEW.status IS NOT
        (SELECT status FROM entity_version WHERE id = NEW.id AND version = NEW.version - 1);
      SELECT RAISE(ABORT, 'state-changed') WHERE NEW.change IN ('confirm','archive','unarchive') AND EXISTS (
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
  ...appendOnlyRedactable("entity_version", ENTITY_VERSION_OTHER),
  keepsRowid("entity_version"),
  ...stampTriggers("entity_version"),

  ...appendOnlyRedactable("entity_override", ENTITY_OVERRIDE_OTHER),
  keepsRowid("entity_override"),
  ...stampTriggers("entity_override"),

  // --- review
  `CREATE TABLE review_new (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      target TEXT NOT NULL,
      verdict TEXT NOT NULL CHECK (verdict IN ('confirm','reject','revert','retract','close')),
      decided_by TEXT NOT NULL,
      decided_by_identity TEXT NOT NULL,
      decided_at TEXT NOT NULL CHECK (decided_at GLOB ${INSTANT}),
      reason TEXT,
      new_version INTEGER,
      origin TEXT NOT NULL DEFAULT 'grant' CHECK (origin IN ('grant','auto')),
      CHECK (target GLOB 'entity/*@*' OR target GLOB 'link/*'),
      CHECK (verdict NOT IN ('reject','close') OR target GLOB 'link/*'),
      CHECK (verdict <> 'revert' OR target GLOB 'entity/*'),
      CHECK (verdict = 'confirm' OR length(trim(coalesce(reason, ''))) > 0),
      CHECK ((origin = 'auto') = (decided_by GLOB 'policy@*')),
      CHECK (origin = 'grant' OR verdict = 'confirm'),
      CHECK (origin = 'auto' OR decided_by GLOB 'person:*' OR (verdict = 'retract' AND decided_by GLOB 'service:*')))`,
  `INSERT INTO review_new (${REVIEW_COLUMNS}, origin) SELECT ${REVIEW_COLUMNS}, 'grant' FROM review ORDER BY seq`,
  "DROP TABLE review",
  "ALTER TABLE review_new RENAME TO review",
  // one person's verdict per entity version or link; one adoption; one retract or close
  "CREATE UNIQUE INDEX review_once ON review(target) WHERE origin = 'grant' AND verdict IN ('confirm','reject','revert')",
  "CREATE UNIQUE INDEX review_adopted_once ON review(target) WHERE origin = 'auto'",
  "CREATE UNIQUE INDEX review_ended_once ON review(target) WHERE verdict IN ('retract','close')",
  `CREATE TRIGGER review_in_scope BEFORE INSERT ON review
     WHEN NEW.id IS NOT (SELECT scope FROM meta) || '-r' || printf('%04d', NEW.seq)
     BEGIN SELECT RAISE(ABORT, 'review-id-not-in-scope'); END`,
  // a retract only of what the policy adopted and no person decided on; a close only of a confirmed link
  `CREATE TRIGGER review_ends BEFORE INSERT ON review BEGIN
      SELECT RAISE(ABORT, 'not-retractable') WHERE NEW.verdict = 'retract' AND (
        NOT EXISTS (SELECT 1 FROM review r WHERE r.target = NEW.target AND r.origin = 'auto')
        OR EXISTS (SELECT 1 FROM review r WHERE r.target = NEW.target AND r.origin = 'grant'
          AND r.verdict IN ('confirm','reject','revert')));
      SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.verdict = 'close' AND (NEW.origin <> 'grant'
        OR NOT EXISTS (SELECT 1 FROM review r WHERE r.target = NEW.target AND r.verdict = 'confirm')
        OR EXISTS (SELECT 1 FROM review r WHERE r.target = NEW.target AND r.verdict = 'reject'));
      SELECT RAISE(ABORT, 'already-decided') WHERE NEW.verdict IN ('confirm','reject','revert') AND EXISTS (
        SELECT 1 FROM review r WHERE r.target = NEW.target AND r.verdict IN ('retract','close'));
    END`,
  ...appendOnlyRedactable("review", REVIEW_OTHER),
  ...stampTriggers("review")
]

export const migration: Migration = {
  version: 11,
  name: "0011-structure-adoption",
  statements: () => STATEMENTS
}
