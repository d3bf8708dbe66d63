/**
 * Where probe, verify and restore find the identity of a keyed scope: the file
 * `$GROUNDNOTE_KEY_DIR/<scope>.age-identity` (the instance's, for ops.sqlite copies:
 * `_instance.age-identity`, a name no scope can have). The file is what `groundnote key create`
 * wrote: the identity line, optionally with `#` comment lines (age-keygen's format). Without a
 * readable identity the answer is IdentityMissing; nothing falls back to another key or to
 * plaintext.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { IdentityMissing } from "../contracts/errors.js"

export const KEY_DIR_VARIABLE = "GROUNDNOTE_KEY_DIR"
export const INSTANCE_IDENTITY_FILE = "_instance.age-identity"

/** The file name of a scope's identity; null is the instance (ops.sqlite). */
export const identityFileName = (scope: string | null): string => (scope === null ? INSTANCE_IDENTITY_FILE : `${scope}.age-identity`)

/** GROUNDNOTE_KEY_DIR, or null when it is not set. */
export const keyDirOf = (env: Readonly<Record<string, string | undefined>>): string | null => {
  const dir = env[KEY_DIR_VARIABLE]
  return dir === undefined || dir === "" ? null : dir
}

const label = (scope: string | null): string => (scope === null ? "the instance (ops.sqlite)" : `scope ${scope}`)

/** The identity lines of an identity file's text (comments and blank lines left out). */
export const identitiesIn = (text: string): ReadonlyArray<string> =>
  text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))

/** The identities of `scope` from GROUNDNOTE_KEY_DIR, or IdentityMissing naming what is missing. */
export const readIdentity = (
  env: Readonly<Record<string, string | undefined>>,
  scope: string | null
): Effect.Effect<ReadonlyArray<string>, IdentityMissing> =>
  Effect.suspend(() => {
    const dir = keyDirOf(env)
    if (dir === null) {
      return Effect.fail(new IdentityMissing({
        message: `the copies of ${label(scope)} are encrypted and ${KEY_DIR_VARIABLE} is not set: set it to the directory that holds ${identityFileName(scope)} (docs/backup.md)`
      }))
    }
    const file = join(dir, identityFileName(scope))
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch (e) {
      const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : "error"
      return Effect.fail(new IdentityMissing({ message: `the copies of ${label(scope)} are encrypted and ${file} cannot be read (${code}): put the identity of groundnote key create there` }))
    }
    const ids = identitiesIn(text).filter((l) => l.startsWith("AGE-SECRET-KEY-"))
    if (ids.length === 0) return Effect.fail(new IdentityMissing({ message: `${file} holds no age identity (AGE-SECRET-KEY-1…)` }))
    return Effect.succeed(ids)
  })
