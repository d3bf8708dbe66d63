/** Ops file, migration 0002: result of the last `groundnote backup verify` (architecture.md §4.2). */
import { INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 2,
  name: "0002-backup-verify",
  statements: () => [
    `ALTER TABLE backup_state ADD COLUMN verified_at TEXT CHECK (verified_at IS NULL OR verified_at GLOB ${INSTANT_GLOB})`,
    `ALTER TABLE backup_state ADD COLUMN verify_ok INTEGER CHECK (verify_ok IS NULL OR verify_ok IN (0,1))`,
    `ALTER TABLE backup_state ADD COLUMN verify_result TEXT CHECK (verify_result IS NULL OR json_valid(verify_result))`,
    `ALTER TABLE backup_state ADD COLUMN verified_counts TEXT CHECK (verified_counts IS NULL OR json_valid(verified_counts))`
  ]
}
