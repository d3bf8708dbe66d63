/**
 * Scope file, migration 0004 (renumbered at merge: 0004 is reserved for 0004-approval, so this
 * becomes the next free number): the vectors of stage b (gaps.md §11). One row per indexed rule
 * version and embedding model: seq = rule.seq, version of that rule, the model id, the dimension
 * and the vector as little-endian float32 (4 × dim bytes), unit length. Derived data, written only
 * by src/search/semantic/vectors.ts: a row is never changed (a new version gets a new row);
 * rows of a model no longer configured may be deleted. The trigger refuses a vector of a version
 * that does not exist. This migration holds its own DDL and imports no live code.
 */
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 5,
  name: "0005-vectors",
  statements: () => [
    `CREATE TABLE vec_rule (
      seq INTEGER NOT NULL REFERENCES rule(seq),
      version INTEGER NOT NULL CHECK (version >= 1),
      model TEXT NOT NULL CHECK (length(model) BETWEEN 1 AND 64),
      dim INTEGER NOT NULL CHECK (dim BETWEEN 1 AND 8192),
      vector BLOB NOT NULL CHECK (typeof(vector) = 'blob' AND length(vector) = 4 * dim),
      PRIMARY KEY (seq, version, model))`,
    `CREATE TRIGGER vec_rule_version_exists BEFORE INSERT ON vec_rule
     WHEN NOT EXISTS (SELECT 1 FROM rule r JOIN rule_version v ON v.rule_id = r.id
                      WHERE r.seq = NEW.seq AND v.version = NEW.version)
     BEGIN SELECT RAISE(ABORT, 'vector-of-unknown-version'); END`,
    `CREATE TRIGGER vec_rule_no_update BEFORE UPDATE ON vec_rule BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
