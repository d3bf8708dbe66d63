/**
 * Ops file, migration 0007: the grant right `redact` (gaps.md §12). Only a person holds it, like
 * `decide` (0001's CHECK); SQLite cannot add a CHECK to an existing table, so a trigger refuses a
 * service grant whose rights name "redact". The grant row never changes its rights afterwards
 * (grant_disable_only), so the insert is the one place to check.
 */
import type { Migration } from "../types.js"

export const migration: Migration = {
  version: 7,
  name: "0007-redact-right",
  statements: () => [
    `CREATE TRIGGER grant_redact_person_only BEFORE INSERT ON grant
     WHEN NEW.kind IS NOT 'person' AND instr(NEW.rights, '"redact"') > 0
     BEGIN SELECT RAISE(ABORT, 'redact-person-only'); END`
  ]
}
