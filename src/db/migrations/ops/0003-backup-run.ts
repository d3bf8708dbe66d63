/** Ops file, migration 0003: backup run and restore probe (architecture.md §4.2, §11.1, §11.2). */
import { INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 3,
  name: "0003-backup-run",
  statements: () => [
    `ALTER TABLE backup_state ADD COLUMN last_backup_at TEXT CHECK (last_backup_at IS NULL OR last_backup_at GLOB ${INSTANT_GLOB})`,
    `ALTER TABLE backup_state ADD COLUMN probed_at TEXT CHECK (probed_at IS NULL OR probed_at GLOB ${INSTANT_GLOB})`,
    `ALTER TABLE backup_state ADD COLUMN probe_ok INTEGER CHECK (probe_ok IS NULL OR probe_ok IN (0,1))`,
    `ALTER TABLE backup_state ADD COLUMN probe_result TEXT CHECK (probe_result IS NULL OR json_valid(probe_result))`,
    `ALTER TABLE backup_state ADD COLUMN exported_at TEXT CHECK (exported_at IS NULL OR exported_at GLOB ${INSTANT_GLOB})`,
    `ALTER TABLE backup_state ADD COLUMN export_sha256 TEXT CHECK (export_sha256 IS NULL OR (length(export_sha256) = 64 AND export_sha256 NOT GLOB '*[^0-9a-f]*'))`,
    `CREATE TABLE backup_run (
      seq INTEGER PRIMARY KEY,
      kind TEXT NOT NULL CHECK (kind IN ('run','probe')),
      backup_kind TEXT NOT NULL CHECK (backup_kind IN ('copy','litestream')),
      started_at TEXT NOT NULL CHECK (started_at GLOB ${INSTANT_GLOB}),
      finished_at TEXT NOT NULL CHECK (finished_at GLOB ${INSTANT_GLOB}),
      ok INTEGER NOT NULL CHECK (ok IN (0,1)),
      result TEXT NOT NULL CHECK (json_valid(result)),
      CHECK (finished_at >= started_at))`,
    `CREATE TRIGGER backup_run_no_update BEFORE UPDATE ON backup_run BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER backup_run_no_delete BEFORE DELETE ON backup_run BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
