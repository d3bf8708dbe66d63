/**
 * Scope file, migration 0004: the approval tables (architecture.md §1 invariants 1, 2 and 12,
 * §4.1 "Approval tables", gaps.md §10).
 *
 *  - classification: one row per proposal (its version 1), what the policy said of it: ruleset,
 *    class, mandatory exceptions, mode, outcome (auto | person), the reasons a person reads, the
 *    calendar day in config.zone and the daily limit in force. An `auto` row counts against the
 *    limit of its day (trigger classification_limit).
 *  - source_auth: the From header and the Authentication-Results of a mail source (§6.2).
 *  - secret_finding: a refused write that held a secret: when, who, which operation, field and
 *    kind, and a salted HMAC of the secret with the id of the salt, never the text.
 *  - decision rebuilt with origin (grant | auto), mode, classification_id and the kind retract;
 *    decided_by is a person, a service only for a retract, or policy@<ruleset> for the policy.
 *  - rule_version_transition rebuilt: a person may reject a confirmed rule only while the newest
 *    confirm/review decision is the policy's (the adoption is taken back as if never made);
 *    rule_version_policy: a version written by the policy is v1 proposed → v2 confirmed, same
 *    text, no supersedes, a checked quote (no manual source) and an `auto` classification.
 *  - decision_policy: the policy's decision is that confirm; a retract (and a person's reject of a
 *    confirmed rule) only while the newest confirm/review decision is the policy's.
 *  - search_log / feedback rebuilt for the operations retract, list_exceptions, list_auto and
 *    read_source (every earlier operation kept).
 *
 * Existing files migrate in place keeping every row (the SQLite rebuild pattern: new table, copy,
 * drop, rename, triggers and indexes again). Holds its own DDL; imports only earlier migrations.
 * `presentIf` lets the runner apply it to a file that reached schema_version 5 (0005-vectors)
 * before this migration existed.
 */
import { appendOnlyPair, INSTANT_GLOB, type Migration } from "../types.js"
import { feedbackTable, searchLogTable } from "./0001-init.js"
import { SEARCH_LOG_OPERATIONS_0002 } from "./0002-graph.js"

export const SEARCH_LOG_OPERATIONS_0004 = [
  ...SEARCH_LOG_OPERATIONS_0002, "retract", "list_exceptions", "list_auto", "read_source"
] as const

const DAY_GLOB = "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'"
const DECISION_COLUMNS = "id, rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version"
/** The origin of the newest confirm/review decision of rule `ruleId` (an SQL expression), 'grant' when none. */
const newestConfirmOrigin = (ruleId: string): string =>
  `coalesce((SELECT d.origin FROM decision d WHERE d.rule_id = ${ruleId} AND d.kind IN ('confirm','review') ORDER BY d.id DESC LIMIT 1), 'grant')`

const STATEMENTS: ReadonlyArray<string> = [
  // --- search_log / feedback (SQLite cannot alter a CHECK)
  searchLogTable("search_log_new", SEARCH_LOG_OPERATIONS_0004),
  `INSERT INTO search_log_new (id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256)
   SELECT id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256 FROM search_log`,
  feedbackTable("feedback_new", "search_log_new"),
  `INSERT INTO feedback_new (id, search_id, ref, verdict, given_by, given_at)
   SELECT id, search_id, ref, verdict, given_by, given_at FROM feedback`,
  `DROP TABLE feedback`,
  `DROP TABLE search_log`,
  `ALTER TABLE search_log_new RENAME TO search_log`,
  `ALTER TABLE feedback_new RENAME TO feedback`,

  // --- classification
  `CREATE TABLE classification (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id TEXT NOT NULL REFERENCES rule(id),
    version INTEGER NOT NULL CHECK (version >= 1),
    ruleset TEXT NOT NULL CHECK (length(ruleset) BETWEEN 1 AND 40 AND ruleset NOT GLOB '*[^a-z0-9.-]*'),
    class TEXT NOT NULL CHECK (class IN ('general','payment','personal','external')),
    exceptions TEXT NOT NULL CHECK (json_valid(exceptions) AND json_type(exceptions) = 'array'),
    mode TEXT NOT NULL CHECK (mode IN ('autonomous','classified','manual')),
    outcome TEXT NOT NULL CHECK (outcome IN ('auto','person')),
    reasons TEXT NOT NULL CHECK (json_valid(reasons) AND json_type(reasons) = 'array' AND json_array_length(reasons) >= 1),
    day TEXT NOT NULL CHECK (day GLOB ${DAY_GLOB}),
    daily_limit INTEGER NOT NULL CHECK (daily_limit >= 0),
    classified_at TEXT NOT NULL CHECK (classified_at GLOB ${INSTANT_GLOB}),
    FOREIGN KEY (rule_id, version) REFERENCES rule_version(rule_id, version),
    UNIQUE (rule_id, version),
    CHECK (outcome = 'person' OR (json_array_length(exceptions) = 0 AND mode <> 'manual'
      AND (mode = 'autonomous' OR class = 'general'))))`,
  `CREATE INDEX classification_auto_day ON classification(day) WHERE outcome = 'auto'`,
  `CREATE TRIGGER classification_limit BEFORE INSERT ON classification WHEN NEW.outcome = 'auto' BEGIN
    SELECT RAISE(ABORT, 'daily-limit') WHERE
      (SELECT count(*) FROM classification WHERE day = NEW.day AND outcome = 'auto') >= NEW.daily_limit;
    SELECT RAISE(ABORT, 'invalid-transition') WHERE NEW.version <> 1 OR NOT EXISTS (
      SELECT 1 FROM rule_version v WHERE v.rule_id = NEW.rule_id AND v.version = 1 AND v.status = 'proposed'
        AND v.supersedes IS NULL AND v.source_id NOT GLOB 'manual:*');
  END`,

  // --- source_auth
  `CREATE TABLE source_auth (
    source_id TEXT PRIMARY KEY REFERENCES source(id),
    mail_from TEXT NOT NULL CHECK (length(mail_from) BETWEEN 1 AND 1000),
    authentication_results TEXT NOT NULL CHECK (length(authentication_results) <= 20000),
    CHECK (source_id GLOB 'mail:*')) WITHOUT ROWID`,

  // --- secret_finding
  `CREATE TABLE secret_finding (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL CHECK (at GLOB ${INSTANT_GLOB}),
    request_id TEXT,
    grant_id TEXT NOT NULL,
    channel TEXT NOT NULL CHECK (channel IN ('mcp','api','approval','proactive','task')),
    operation TEXT NOT NULL CHECK (operation IN ('propose','store_source')),
    field TEXT NOT NULL CHECK (length(field) BETWEEN 1 AND 200),
    kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 40 AND kind NOT GLOB '*[^a-z0-9-]*'),
    fingerprint TEXT NOT NULL CHECK (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'),
    salt_id TEXT NOT NULL CHECK (length(salt_id) = 16 AND salt_id NOT GLOB '*[^0-9a-f]*'))`,

  // --- decision rebuilt (the append-only triggers go with the old table and come back below)
  `CREATE TABLE decision_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id TEXT NOT NULL, version INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('confirm','reject','revoke','review','retract')),
    origin TEXT NOT NULL DEFAULT 'grant' CHECK (origin IN ('grant','auto')),
    mode TEXT CHECK (mode IS NULL OR mode IN ('autonomous','classified','manual')),
    classification_id INTEGER REFERENCES classification(id),
    decided_by TEXT NOT NULL,
    decided_by_identity TEXT NOT NULL,
    decided_at TEXT NOT NULL CHECK (decided_at GLOB ${INSTANT_GLOB}),
    reason TEXT,
    new_version INTEGER,
    FOREIGN KEY (rule_id, version) REFERENCES rule_version(rule_id, version),
    FOREIGN KEY (rule_id, new_version) REFERENCES rule_version(rule_id, version),
    CHECK (kind NOT IN ('reject','revoke','retract') OR length(trim(coalesce(reason, ''))) > 0),
    CHECK (kind = 'review' OR new_version IS NOT NULL),
    CHECK (new_version IS NULL OR new_version > version),
    CHECK ((origin = 'auto') = (decided_by GLOB 'policy@*')),
    CHECK (origin = 'auto' OR decided_by GLOB 'person:*' OR (kind = 'retract' AND decided_by GLOB 'service:*')),
    CHECK (origin = 'grant' OR kind = 'confirm'),
    CHECK ((origin = 'auto') = (mode IS NOT NULL)),
    CHECK (origin = 'grant' OR classification_id IS NOT NULL))`,
  `INSERT INTO decision_new (${DECISION_COLUMNS}, origin, mode, classification_id)
   SELECT ${DECISION_COLUMNS}, 'grant', NULL, NULL FROM decision`,
  `DROP TABLE decision`,
  `ALTER TABLE decision_new RENAME TO decision`,
  `CREATE INDEX decision_rule ON decision(rule_id)`,
  ...appendOnlyPair("decision"),
  `CREATE TRIGGER decision_policy BEFORE INSERT ON decision BEGIN
    SELECT RAISE(ABORT, 'policy-not-allowed') WHERE NEW.origin = 'auto' AND NOT (
      NEW.kind = 'confirm' AND NEW.version = 1 AND NEW.new_version = 2
      AND EXISTS (SELECT 1 FROM classification c WHERE c.id = NEW.classification_id AND c.rule_id = NEW.rule_id
        AND c.version = 1 AND c.outcome = 'auto' AND c.mode = NEW.mode)
      AND EXISTS (SELECT 1 FROM rule_version v WHERE v.rule_id = NEW.rule_id AND v.version = 2
        AND v.status = 'confirmed' AND v.changed_by = NEW.decided_by));
    SELECT RAISE(ABORT, 'not-retractable') WHERE
      (NEW.kind = 'retract' OR (NEW.kind = 'reject' AND (SELECT status FROM rule_version
        WHERE rule_id = NEW.rule_id AND version = NEW.version) = 'confirmed'))
      AND ${newestConfirmOrigin("NEW.rule_id")} <> 'auto';
    SELECT RAISE(ABORT, 'not-retractable') WHERE NEW.kind = 'retract' AND (SELECT status FROM rule_version
      WHERE rule_id = NEW.rule_id AND version = NEW.new_version) IS NOT 'superseded';
  END`,

  // --- rule_version: a person's reject of an auto-adopted rule; what the policy may write
  `DROP TRIGGER rule_version_transition`,
  `CREATE TRIGGER rule_version_transition BEFORE INSERT ON rule_version BEGIN
    SELECT RAISE(ABORT, 'version-gap') WHERE NEW.version <>
      1 + coalesce((SELECT max(version) FROM rule_version WHERE rule_id = NEW.rule_id), 0);
    SELECT RAISE(ABORT, 'terminal-state') WHERE (SELECT status FROM rule_version
      WHERE rule_id = NEW.rule_id ORDER BY version DESC LIMIT 1) IN ('rejected','superseded');
    SELECT RAISE(ABORT, 'invalid-transition') WHERE
         (NEW.version = 1 AND NEW.status <> 'proposed')
      OR (NEW.version > 1 AND NEW.status = 'proposed')
      OR (NEW.status = 'rejected' AND NOT coalesce((SELECT status FROM rule_version WHERE rule_id = NEW.rule_id
            ORDER BY version DESC LIMIT 1) = 'proposed' OR ((SELECT status FROM rule_version WHERE rule_id = NEW.rule_id
            ORDER BY version DESC LIMIT 1) = 'confirmed' AND ${newestConfirmOrigin("NEW.rule_id")} = 'auto'), 0))
      OR (NEW.status = 'superseded' AND (SELECT status FROM rule_version WHERE rule_id = NEW.rule_id
            ORDER BY version DESC LIMIT 1) <> 'confirmed');
    SELECT RAISE(ABORT, 'source-immutable') WHERE NEW.version > 1 AND EXISTS (
      SELECT 1 FROM rule_version f WHERE f.rule_id = NEW.rule_id AND f.version = 1 AND (
        f.source_id IS NOT NEW.source_id OR f.quote IS NOT NEW.quote
        OR f.timestamp_s IS NOT NEW.timestamp_s OR f.source_link IS NOT NEW.source_link));
  END`,
  `CREATE TRIGGER rule_version_policy BEFORE INSERT ON rule_version WHEN NEW.changed_by GLOB 'policy@*' BEGIN
    SELECT RAISE(ABORT, 'policy-not-allowed') WHERE NOT (
      NEW.status = 'confirmed' AND NEW.version = 2 AND NEW.supersedes IS NULL AND NEW.superseded_by IS NULL
      AND NEW.valid_until IS NULL AND NEW.source_id NOT GLOB 'manual:*'
      AND EXISTS (SELECT 1 FROM rule_version f WHERE f.rule_id = NEW.rule_id AND f.version = 1 AND f.status = 'proposed'
        AND f.statement IS NEW.statement AND f.kind IS NEW.kind AND f.keywords IS NEW.keywords
        AND f.relations IS NEW.relations AND f.valid_from IS NEW.valid_from AND f.said_at IS NEW.said_at
        AND f.speaker IS NEW.speaker AND f.supersedes IS NULL)
      AND EXISTS (SELECT 1 FROM classification c WHERE c.rule_id = NEW.rule_id AND c.version = 1 AND c.outcome = 'auto'));
  END`,

  // an identical repeat of a proposal (answered with the stored rule) is looked up by its source
  `CREATE INDEX rule_version_first_source ON rule_version(source_id) WHERE version = 1`,

  ...["classification", "source_auth", "secret_finding"].flatMap(appendOnlyPair)
]

export const migration: Migration = {
  version: 4,
  name: "0004-approval",
  statements: () => STATEMENTS,
  presentIf: "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'classification'"
}
