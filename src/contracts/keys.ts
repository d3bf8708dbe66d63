/**
 * Keys of encrypted copies (gaps.md §12 R5). An age X25519 recipient (`age1…`, 62 characters, bech32): the public half of a key pair. The
 * shape is what ops migration 0006 stores; the checksum is checked by the age library itself.
 */
import { Encrypter } from "age-encryption"
import { Schema } from "effect"
import { ScopeName } from "./ids.js"

/** age1 + 58 bech32 characters (X25519 only: Litestream 0.3.13's age reads no other kind). */
export const AGE_RECIPIENT_RE = /^age1[023456789acdefghjklmnpqrstuvwxyz]{58}$/

/** Whether `s` is an X25519 recipient the age library accepts (shape and bech32 checksum). */
export const isAgeRecipient = (s: string): boolean => {
  if (!AGE_RECIPIENT_RE.test(s)) return false
  try {
    new Encrypter().addRecipient(s)
    return true
  } catch {
    return false
  }
}

export const AgeRecipient = Schema.String.pipe(Schema.filter((s) => isAgeRecipient(s), {
  message: () => "must be an age X25519 recipient: age1 followed by 58 bech32 characters (age-keygen -y prints it)"
}))

/** A scope's recipients, or the instance's (null: the copies of ops.sqlite). */
export const KeyScope = Schema.NullOr(ScopeName)

/** POST /ops/keys: a recipient for a scope (key create: origin created; key add-recipient: added). */
export const KeyAdd = Schema.Struct({
  scope: KeyScope,
  recipient: AgeRecipient,
  origin: Schema.Literal("created", "added"),
  label: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})
export type KeyAdd = typeof KeyAdd.Type

/** POST /ops/keys/rotate: the new recipient of a key pair made by key rotate. */
export const KeyRotate = Schema.Struct({
  scope: KeyScope,
  recipient: AgeRecipient,
  label: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})
export type KeyRotate = typeof KeyRotate.Type
