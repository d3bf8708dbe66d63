/**
 * Scope file, migration 0008: the duplicate candidates an entity create or update was forced past
 * (graph.md §4, §12), stored when it happens. One row per candidate of the forced version: the
 * entity version it belongs to, the candidate's position in the answer (1 = best), and the
 * candidate as the duplicate check saw it then — id, name, type, status, aliases, path, score and
 * match. The structure page reads these rows, so a later rename or a new similar entity does not
 * change what the agent overrode. Append-only (invariant 1), stamped like every content table
 * (0007). A version forced before this migration has no rows. This migration holds its own DDL and
 * imports no live code.
 */
import { appendOnlyPair, type Migration } from "../types.js"

const BUMP = "UPDATE content_stamp SET seq = seq + 1, nonce = random() WHERE id = 1;"

export const migration: Migration = {
  version: 8,
  name: "0008-entity-override",
  statements: () => [
    `CREATE TABLE entity_override (
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
      FOREIGN KEY (id, version) REFERENCES entity_version (id, version),
      CHECK (candidate_id <> id))`,
    ...appendOnlyPair("entity_override"),
    ...(["insert", "update", "delete"] as const).map((event) =>
      `CREATE TRIGGER content_stamp_entity_override_${event} AFTER ${event.toUpperCase()} ON entity_override BEGIN ${BUMP} END`)
  ]
}
