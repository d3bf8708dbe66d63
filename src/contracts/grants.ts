/** Grants (architecture.md §4.2, §11 GrantOut; gaps.md §3 create). */
import { Schema } from "effect"
import { ScopeName } from "./ids.js"
import { Instant } from "./schemas.js"

export const GrantKind = Schema.Literal("person", "service")
export type GrantKind = typeof GrantKind.Type
export const GrantAuth = Schema.Literal("email", "access-service", "bearer")
export type GrantAuth = typeof GrantAuth.Type
/**
 * `redact` erases a term from a scope (gaps.md §12): persons only, and given on its own — `decide`
 * does not imply it.
 */
export const Right = Schema.Literal("read", "propose", "decide", "redact")
export type Right = typeof Right.Type
/** Canonical order of rights in the stored JSON array. */
export const RIGHTS_ORDER: ReadonlyArray<Right> = ["read", "propose", "decide", "redact"]
/** The rights only a person grant may hold. */
export const PERSON_ONLY_RIGHTS: ReadonlyArray<Right> = ["decide", "redact"]

export const GrantCreate = Schema.Struct({
  kind: GrantKind,
  auth: GrantAuth,
  identity: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(320))),
  scopes: Schema.Array(ScopeName).pipe(Schema.minItems(1), Schema.maxItems(100)),
  rights: Schema.Array(Right).pipe(Schema.minItems(1)),
  label: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})
export type GrantCreate = typeof GrantCreate.Type

export const GrantOut = Schema.Struct({
  id: Schema.String,
  kind: GrantKind,
  auth: GrantAuth,
  identity: Schema.NullOr(Schema.String),
  fingerprint: Schema.NullOr(Schema.String),
  scopes: Schema.Array(ScopeName),
  rights: Schema.Array(Right),
  label: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  created_at: Instant,
  disabled_at: Schema.NullOr(Instant)
})
export type GrantOut = typeof GrantOut.Type

/** An active grant as the request pipeline sees it. */
export interface Grant {
  readonly id: string
  readonly kind: GrantKind
  readonly auth: GrantAuth
  readonly identity: string
  readonly scopes: ReadonlyArray<string>
  readonly rights: ReadonlyArray<Right>
}
