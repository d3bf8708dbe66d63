/**
 * Scope file, migration 0012: proposal_neighbour, the possible duplicates of a proposal as its
 * own transaction found them (stage a's best 3 when the proposal came in, architecture.md §6.3),
 * each with stage a's coverage and whether it is a near duplicate by the one definition
 * (src/domain/near-duplicate.ts). The approval index marks near duplicates and conflicts with
 * confirmed rules from these rows instead of asking stage a once per listed proposal (gaps.md §13
 * "Conflict view").
 *
 * A record, append-only like classification: what the check found then cannot be rebuilt later
 * (the index has changed since). It holds ids, refs and numbers only, no text a redaction must
 * reach. Proposals made before this migration have no rows (nothing is computed here: a
 * migration never runs live code). Holds its own DDL and imports no live code.
 */
import { appendOnlyPair, type Migration } from "../types.js"

export const migration: Migration = {
  version: 12,
  name: "0012-proposal-neighbour",
  statements: () => [
    `CREATE TABLE proposal_neighbour (
      rule_id TEXT NOT NULL REFERENCES rule(id),
      version INTEGER NOT NULL CHECK (version >= 1),
      rank INTEGER NOT NULL CHECK (rank BETWEEN 1 AND 3),
      ref TEXT NOT NULL CHECK (ref GLOB 'rule/*@[0-9]*'),
      other_id TEXT NOT NULL REFERENCES rule(id),
      coverage REAL NOT NULL CHECK (coverage >= 0 AND coverage <= 1),
      near INTEGER NOT NULL CHECK (near IN (0, 1)),
      PRIMARY KEY (rule_id, version, rank),
      CHECK (other_id <> rule_id))`,
    `CREATE INDEX proposal_neighbour_other ON proposal_neighbour(other_id) WHERE near = 1`,
    ...appendOnlyPair("proposal_neighbour"),
    // every answer cached under content_stamp (0007) sees a change of it
    ...(["insert", "update", "delete"] as const).map((event) =>
      `CREATE TRIGGER content_stamp_proposal_neighbour_${event} AFTER ${event.toUpperCase()} ON proposal_neighbour BEGIN UPDATE content_stamp SET seq = seq + 1, nonce = random() WHERE id = 1; END`)
  ]
}
