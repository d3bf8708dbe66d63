/**
 * Ops file, migration 0006: the age recipients of encrypted copies (gaps.md §12 R5). One row per
 * recipient (an age X25519 public key, `age1…`, 62 characters) of a scope, or of the instance
 * (scope NULL: the copies of ops.sqlite). `origin` says whether `groundnote key create|rotate`
 * made the key pair here (its identity went to the operator's file, never into this table) or
 * `key add-recipient` added someone's public key. A recipient is retired once (a rotation), never
 * changed otherwise, never deleted; copies are encrypted to every recipient not retired.
 */
import { INSTANT_GLOB, type Migration } from "../types.js"

export const migration: Migration = {
  version: 6,
  name: "0006-keys",
  statements: () => [
    `CREATE TABLE key_recipient (
      seq INTEGER PRIMARY KEY,
      scope TEXT CHECK (scope IS NULL OR length(scope) BETWEEN 1 AND 40),
      recipient TEXT NOT NULL CHECK (length(recipient) = 62 AND recipient GLOB 'age1*'
        AND substr(recipient, 5) NOT GLOB '*[^023456789acdefghjklmnpqrstuvwxyz]*'),
      origin TEXT NOT NULL CHECK (origin IN ('created','added')),
      label TEXT CHECK (label IS NULL OR length(label) BETWEEN 1 AND 200),
      added_at TEXT NOT NULL CHECK (added_at GLOB ${INSTANT_GLOB}),
      retired_at TEXT CHECK (retired_at IS NULL OR retired_at GLOB ${INSTANT_GLOB}))`,
    `CREATE UNIQUE INDEX key_recipient_active ON key_recipient(coalesce(scope, ''), recipient) WHERE retired_at IS NULL`,
    `CREATE TRIGGER key_recipient_retire_only BEFORE UPDATE ON key_recipient WHEN NOT (OLD.retired_at IS NULL
      AND NEW.retired_at IS NOT NULL AND NEW.seq IS OLD.seq AND NEW.scope IS OLD.scope AND NEW.recipient IS OLD.recipient
      AND NEW.origin IS OLD.origin AND NEW.label IS OLD.label AND NEW.added_at IS OLD.added_at)
     BEGIN SELECT RAISE(ABORT, 'append-only'); END`,
    `CREATE TRIGGER key_recipient_no_delete BEFORE DELETE ON key_recipient BEGIN SELECT RAISE(ABORT, 'append-only'); END`
  ]
}
