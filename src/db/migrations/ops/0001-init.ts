/** Ops file, migration 0001 (architecture.md §4.2). */
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 1,
  name: "0001-init",
  statements: (ctx) => [
    `CREATE TABLE meta (singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      schema_version INTEGER NOT NULL, created_at TEXT NOT NULL)`,
    { sql: "INSERT INTO meta (singleton, schema_version, created_at) VALUES (1, 1, ?)", params: [ctx.now] },
    `CREATE TABLE grant (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      kind TEXT NOT NULL CHECK (kind IN ('person','service')),
      auth TEXT NOT NULL CHECK (auth IN ('email','access-service','bearer')),
      identity TEXT NOT NULL,
      scopes TEXT NOT NULL CHECK (json_valid(scopes) AND json_array_length(scopes) >= 1),
      rights TEXT NOT NULL CHECK (json_valid(rights) AND json_array_length(rights) >= 1),
      label TEXT, active INTEGER NOT NULL CHECK (active IN (0,1)),
      created_at TEXT NOT NULL, disabled_at TEXT,
      CHECK ((kind = 'person') = (auth = 'email')),
      CHECK (kind = 'person' OR instr(rights, '"decide"') = 0),
      CHECK ((active = 1) = (disabled_at IS NULL)))`,
    `CREATE UNIQUE INDEX grant_active_identity ON grant(auth, identity) WHERE active = 1`,
    `CREATE TRIGGER grant_disable_only BEFORE UPDATE ON grant WHEN NOT (OLD.active = 1 AND NEW.active = 0
      AND NEW.disabled_at IS NOT NULL AND NEW.id IS OLD.id AND NEW.kind IS OLD.kind AND NEW.auth IS OLD.auth
      AND NEW.identity IS OLD.identity AND NEW.scopes IS OLD.scopes AND NEW.rights IS OLD.rights
      AND NEW.label IS OLD.label AND NEW.created_at IS OLD.created_at)
     BEGIN SELECT RAISE(ABORT, 'grant-disable-only'); END`,
    `CREATE TRIGGER grant_no_delete BEFORE DELETE ON grant BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TABLE backup_state (
      scope TEXT PRIMARY KEY, created_at TEXT NOT NULL,
      version_count INTEGER NOT NULL CHECK (version_count >= 0), counted_at TEXT NOT NULL)`,
    `CREATE TRIGGER backup_state_monotonic BEFORE UPDATE OF version_count ON backup_state
     WHEN NEW.version_count < OLD.version_count BEGIN SELECT RAISE(ABORT, 'count-decreased'); END`,
    `CREATE TRIGGER backup_state_no_delete BEFORE DELETE ON backup_state BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
