/**
 * A secret never gets stored (invariant 12): before anything of a proposal or a source is
 * written, its texts go through the secret scan (src/security/secrets.ts). A hit refuses the
 * write with 422 secret-detected naming each field and kind, never the secret; the only row
 * written is one secret_finding per hit (when, who, which operation, field, kind, and a salted
 * HMAC of the secret with the id of the salt), in its own transaction, so the refusal that
 * follows cannot roll it back.
 *
 * The salt is derived from GROUNDNOTE_SESSION_SECRET (HMAC-SHA256 with a fixed label), so a
 * copy of the data dir alone cannot test guesses of a short secret against a fingerprint;
 * salt_id (16 hex of the salt's SHA-256) tells which fingerprints can be compared (a rotated
 * session secret starts a new salt).
 */
import { createHash, createHmac } from "node:crypto"
import { Effect, Redacted } from "effect"
import { AppConfig } from "../config/config.js"
import { SecretDetected } from "../contracts/errors.js"
import type { Channel } from "../contracts/schemas.js"
import { nowInstant } from "../contracts/time.js"
import { ScopeStore } from "../db/scope-store.js"
import { type SecretField, secretFindings, secretMessage } from "../security/secrets.js"

const SALT_LABEL = "groundnote/secret_finding/v1"

/** The fingerprint salt of the instance and its id. */
export const findingSalt = (sessionSecret: Redacted.Redacted<string>): { readonly salt: Buffer; readonly saltId: string } => {
  const salt = createHmac("sha256", Redacted.value(sessionSecret)).update(SALT_LABEL, "utf8").digest()
  return { salt, saltId: createHash("sha256").update(salt).digest("hex").slice(0, 16) }
}

export interface FindingContext {
  readonly grantId: string
  readonly channel: Channel
  readonly operation: "propose" | "store_source"
  /** the id of the request's search_log row, when the call runs in the pipeline */
  readonly requestId: string | null
}

/**
 * Scans `fields`; without a hit nothing happens. With hits: one secret_finding row per hit in
 * the scope's file (its own transaction), a warning in the process log (fields and kinds), and
 * the refusal secret-detected.
 */
export const refuseSecrets = (scope: string, fields: ReadonlyArray<SecretField>, ctx: FindingContext) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const { salt, saltId } = findingSalt(config.env.sessionSecret)
    const findings = secretFindings(fields, salt)
    if (findings.length === 0) return
    const store = yield* ScopeStore
    const at = yield* nowInstant
    yield* store.write(scope, ({ sql }) =>
      Effect.forEach(findings, (f) =>
        sql`INSERT INTO secret_finding (at, request_id, grant_id, channel, operation, field, kind, fingerprint, salt_id)
          VALUES (${at}, ${ctx.requestId}, ${ctx.grantId}, ${ctx.channel}, ${ctx.operation}, ${f.field}, ${f.kind}, ${f.fingerprint}, ${saltId})`.raw,
        { discard: true })).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e)))
    const named = findings.map((f) => ({ field: f.field, kind: f.kind }))
    yield* Effect.logWarning("secret-detected").pipe(Effect.annotateLogs({
      scope, grant: ctx.grantId, operation: ctx.operation, findings: named.map((f) => `${f.field}:${f.kind}`).join(",")
    }))
    return yield* new SecretDetected({ message: secretMessage(named), findings: named })
  })
