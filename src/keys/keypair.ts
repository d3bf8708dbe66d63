/** A new age X25519 key pair: the identity (secret, `AGE-SECRET-KEY-1…`) and its recipient (`age1…`). */
import { generateX25519Identity, identityToRecipient } from "age-encryption"
import { Effect } from "effect"

export interface KeyPair {
  readonly identity: string
  readonly recipient: string
}

export const makeKeyPair: Effect.Effect<KeyPair> = Effect.promise(async () => {
  const identity = await generateX25519Identity()
  return { identity, recipient: await identityToRecipient(identity) }
})

/** The recipient of an identity, or null when the text is no age X25519 identity. */
export const recipientOf = (identity: string): Effect.Effect<string | null> =>
  Effect.promise(async () => {
    try {
      return /^AGE-SECRET-KEY-1[0-9A-Z]+$/.test(identity) ? await identityToRecipient(identity) : null
    } catch {
      return null
    }
  })
