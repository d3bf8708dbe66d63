/**
 * Identifiers and refs (architecture.md §4.3, graph.md §2). Pure functions only.
 */
import { Schema } from "effect"

export const SCOPE_NAME_RE = /^[a-z][a-z0-9-]{1,39}$/
export const RULE_ID_RE = /^[a-z][a-z0-9-]{1,39}-\d{4,}$/
export const RULE_REF_RE = /^rule\/[a-z][a-z0-9-]{1,39}-\d{4,}(@[1-9]\d*)?$/
export const ENTITY_ID_RE = /^[a-z][a-z0-9-]{1,39}-e\d{4,}$/
export const ENTITY_REF_RE = /^entity\/[a-z][a-z0-9-]{1,39}-e\d{4,}(@[1-9]\d*)?$/
export const LINK_ID_RE = /^[a-z][a-z0-9-]{1,39}-l\d{4,}$/
export const REVIEW_ID_RE = /^[a-z][a-z0-9-]{1,39}-r\d{4,}$/
export const JAMIE_ID_RE = /^jamie:[A-Za-z0-9._-]{1,200}$/
export const MAIL_ID_RE = /^mail:<[^<>\s]+>$/

/** Longest accepted mail id (docs/decisions.md, §4 Storage). */
export const MAIL_ID_MAX = 1000

export const ScopeName = Schema.String.pipe(Schema.pattern(SCOPE_NAME_RE, {
  message: () => "must match ^[a-z][a-z0-9-]{1,39}$"
}))
export type ScopeName = typeof ScopeName.Type

export const RuleId = Schema.String.pipe(Schema.pattern(RULE_ID_RE, {
  message: () => "must be a rule id <scope>-<nnnn>"
}))
export const RuleRef = Schema.String.pipe(Schema.pattern(RULE_REF_RE, {
  message: () => "must be a rule ref rule/<id>[@<n>]"
}))
/** A rule ref as search answers it (rule/<id>[@<n>]) or the bare rule id people and lines name (read_rule). */
export const RuleRefOrId = Schema.String.pipe(Schema.filter((s) => RULE_REF_RE.test(s) || RULE_ID_RE.test(s), {
  message: () => "must be a rule ref rule/<id>[@<n>] or a rule id <scope>-<nnnn>"
}))
export const EntityId = Schema.String.pipe(Schema.pattern(ENTITY_ID_RE, {
  message: () => "must be an entity id <scope>-e<nnnn>"
}))
export const JamieId = Schema.String.pipe(Schema.pattern(JAMIE_ID_RE, {
  message: () => "must be jamie:<id> with [A-Za-z0-9._-]{1,200}"
}))
export const MailId = Schema.String.pipe(
  Schema.maxLength(MAIL_ID_MAX),
  Schema.pattern(MAIL_ID_RE, { message: () => "must be mail:<message-id> including the angle brackets" })
)

/** `<scope>-<nnnn>`: the number is the row's seq, zero-padded to 4. */
export const formatRuleId = (scope: string, seq: number): string => `${scope}-${String(seq).padStart(4, "0")}`
export const formatEntityId = (scope: string, seq: number): string => `${scope}-e${String(seq).padStart(4, "0")}`
export const formatLinkId = (scope: string, seq: number): string => `${scope}-l${String(seq).padStart(4, "0")}`
export const formatReviewId = (scope: string, seq: number): string => `${scope}-r${String(seq).padStart(4, "0")}`

/** Scope of a rule id = the id without the trailing -\d{4,}. */
export const scopeOfRuleId = (id: string): string => id.replace(/-\d{4,}$/, "")
/** Scope of an entity, link or review id = the id without -e/-l/-r\d+. */
export const scopeOfGraphId = (id: string): string => id.replace(/-[elr]\d{4,}$/, "")
export const seqOfRuleId = (id: string): number => Number(/-(\d{4,})$/.exec(id)?.[1] ?? Number.NaN)

export const ruleRef = (id: string, version?: number): string =>
  version === undefined ? `rule/${id}` : `rule/${id}@${version}`

export interface ParsedRuleRef {
  readonly id: string
  readonly version: number | null
}

export const parseRuleRef = (ref: string): ParsedRuleRef | null => {
  if (!RULE_REF_RE.test(ref)) return null
  const body = ref.slice("rule/".length)
  const at = body.indexOf("@")
  return at === -1 ? { id: body, version: null } : { id: body.slice(0, at), version: Number(body.slice(at + 1)) }
}

export const sourceRef = (sourceId: string): string => `source/${sourceId}`
export const attachmentRef = (sourceId: string, n: number): string => `attachment/${sourceId}#${n}`
export const manualSourceId = (grantId: string): string => `manual:${grantId}`

/**
 * A request id (the search_id of a search and the id of its search_log rows): a UUID of version 7
 * (RFC 9562 §5.7) — the Unix time in milliseconds (48 bits), the version, then 74 bits of
 * `random` (10 bytes; 6 bits of them are not used). Its text sorts by its time, so a new row goes
 * in at the end of search_log's primary key instead of at a random place in it (under load an
 * insert cost ~0.17 instead of ~0.27 ms).
 */
export const requestIdAt = (ms: number, random: Uint8Array): string => {
  if (random.length < 10) throw new RangeError("requestIdAt needs 10 random bytes")
  const time = Math.min(Math.max(Math.floor(ms), 0), 0xffff_ffff_ffff).toString(16).padStart(12, "0")
  let r = ""
  for (let i = 0; i < 10; i++) r += (random[i] as number).toString(16).padStart(2, "0")
  const variant = ((Number.parseInt(r.charAt(3), 16) & 0x3) | 0x8).toString(16)
  return `${time.slice(0, 8)}-${time.slice(8)}-7${r.slice(0, 3)}-${variant}${r.slice(4, 7)}-${r.slice(7, 19)}`
}
