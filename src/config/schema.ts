/**
 * groundnote.json (architecture.md §3, graph.md §7, gaps.md §10–§11), strict: an unknown key
 * fails and names its path. Defaults as the contract gives them.
 */
import { isAbsolute } from "node:path"
import { Schema } from "effect"
import { GraphConfig } from "./graph.js"
import { Day, MANDATORY_EXCEPTIONS } from "../contracts/schemas.js"
import { ScopeName } from "../contracts/ids.js"
import { LexicalConfig } from "./lexical.js"

export const isIanaZone = (zone: string): boolean => {
  if (zone.length === 0) return false
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

const isUrl = (s: string): boolean => {
  try {
    new URL(s)
    return true
  } catch {
    return false
  }
}

const Url = Schema.String.pipe(Schema.filter((s) => isUrl(s) || "must be an absolute URL"))
/** backup.deadman_url: null is no dead-man service (the demo); the key itself stays required, so it is never forgotten. */
const DeadmanUrl = Schema.NullOr(Schema.String).pipe(Schema.filter((s) => s === null || isUrl(s) || "must be an absolute URL, or null for no dead-man ping"))
const NonEmpty = Schema.String.pipe(Schema.minLength(1))
const Int = (min: number, max: number) => Schema.Number.pipe(Schema.int(), Schema.between(min, max))
const PerMinute = (d: number) => Schema.optionalWith(Int(1, 100_000), { default: () => d })
export const AbsolutePath = Schema.String.pipe(
  Schema.filter((s) => (s.length > 0 && isAbsolute(s)) || "must be an absolute path")
)

/** The `{}`-parsed value of a struct whose keys all have defaults (Zod's prefault({})). */
const prefault = <A, I>(schema: Schema.Schema<A, I>) =>
  Schema.optionalWith(schema, { default: () => Schema.decodeUnknownSync(schema)({}) })

export const Provider = Schema.Literal("local", "voyage", "openai", "jina", "typesafe")

const Off = Schema.Struct({ enabled: Schema.Literal(false) })

export const SemanticOn = Schema.Struct({
  enabled: Schema.Literal(true),
  model: Schema.optionalWith(Schema.Literal("bge-m3", "qwen3-embedding-0.6b"), { default: () => "bge-m3" as const }),
  model_dir: Schema.optional(NonEmpty)
})
export const Semantic = Schema.Union(Off, SemanticOn)

export const RerankerOn = Schema.Struct({
  enabled: Schema.Literal(true),
  provider: Schema.optionalWith(Schema.Literal("typesafe"), { default: () => "typesafe" as const }),
  model: Schema.optionalWith(Schema.Literal("jev-1.14.0"), { default: () => "jev-1.14.0" as const }),
  monthly_cap_usd: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1000)), { default: () => 5 }),
  timeout_ms: Schema.optionalWith(Int(100, 5000), { default: () => 1000 }),
  threshold: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.5 })
})
export const Reranker = Schema.Union(Off, RerankerOn)

export const ScopeConfig = Schema.Struct({
  name: ScopeName,
  providers_allowed: Schema.Array(Provider),
  reranker: Schema.optionalWith(Schema.Boolean, { default: () => false })
})
export type ScopeConfig = typeof ScopeConfig.Type

export const Access = Schema.Struct({
  team_domain: Url,
  aud_mcp: NonEmpty,
  aud_approval: NonEmpty,
  aud_api: NonEmpty
}).pipe(Schema.filter((a) => {
  const auds = [a.aud_mcp, a.aud_approval, a.aud_api]
  return new Set(auds).size === auds.length || "aud_mcp, aud_approval and aud_api must be three different audiences"
}))

export const Search = Schema.Struct({
  synonyms: Schema.optionalWith(Schema.Array(Schema.Array(NonEmpty).pipe(Schema.minItems(2))), { default: () => [] }),
  languages: Schema.optionalWith(Schema.Array(Schema.Literal("de", "en")).pipe(Schema.minItems(1)), {
    default: () => ["de", "en"] as const
  }),
  lexical: prefault(LexicalConfig),
  min_coverage: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0 }),
  semantic: Schema.optionalWith(Semantic, { default: () => ({ enabled: false as const }) }),
  reranker: Schema.optionalWith(Reranker, { default: () => ({ enabled: false as const }) })
})

export const BackupLitestream = Schema.Struct({
  kind: Schema.Literal("litestream"),
  target: Url,
  prefix: NonEmpty,
  deadman_url: DeadmanUrl,
  export_directory: Schema.optional(AbsolutePath)
})
export const BackupCopy = Schema.Struct({
  kind: Schema.Literal("copy"),
  directory: NonEmpty,
  deadman_url: DeadmanUrl,
  export_directory: Schema.optional(AbsolutePath)
})
export const Backup = Schema.Union(BackupLitestream, BackupCopy)

export const AtRest = Schema.Struct({ kind: Schema.Literal("volume"), attested_at: Schema.optional(Day) })

export const Doctor = Schema.Struct({
  max_backup_age_hours: Schema.optionalWith(Int(1, 24 * 14), { default: () => 26 }),
  max_probe_age_hours: Schema.optionalWith(Int(1, 24 * 14), { default: () => 26 })
})

export const Limits = Schema.Struct({
  requests_per_minute: PerMinute(60),
  decisions_per_minute: PerMinute(60),
  login_attempts_per_minute: PerMinute(5),
  exports_per_hour: Schema.optionalWith(Int(1, 10_000), { default: () => 6 }),
  trusted_proxy: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

/** Approval modes (gaps.md §10). */
export const ApprovalMode = Schema.Literal("autonomous", "classified", "manual")
export type ApprovalMode = typeof ApprovalMode.Type
/** Classes a mode may be set for. `payment` is a class and a mandatory exception: it takes no mode. */
export const CONFIGURABLE_CLASSES = ["general", "personal", "external"] as const
export { MANDATORY_EXCEPTIONS }

const squash = (key: string): string => key.toLowerCase().replace(/[^a-z]/g, "")
/** Words of a key that reach for the guardrails as a whole. */
const GUARDRAIL_WORDS = ["exception", "guardrail", "mandatory"]

/** Why a key of the approval block may not exist, or null: it names a mandatory exception or the guardrails. */
const guardrailKeyProblem = (key: string): string | null => {
  const k = squash(key)
  if (k === "payment") {
    return "\"payment\" is a class and a mandatory exception: a payment proposal always waits for a person, in every mode, so it takes no mode and no setting. Remove this key"
  }
  const named = MANDATORY_EXCEPTIONS.find((e) => k.includes(squash(e)))
  if (named !== undefined) {
    return `"${named}" is a mandatory exception: it always sends the proposal to a person, in every mode, and no key switches it off or changes it. Remove this key`
  }
  if (GUARDRAIL_WORDS.some((w) => k.includes(w))) {
    return `the mandatory exceptions (${MANDATORY_EXCEPTIONS.join(", ")}) are code, not configuration: no key lists, switches off or changes them. Remove this key`
  }
  return null
}

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === "object" && v !== null && !Array.isArray(v)

/**
 * Invariant 12: the raw approval block, before it is decoded, must not hold a key that names a
 * mandatory exception or the guardrails — at the top, in a scope's entry or in its classes
 * (scope names themselves are not checked: a scope may be called "payments"). Each such key is
 * named with its path and the fix.
 */
const guardrailKeys = (raw: unknown): Array<{ path: ReadonlyArray<string>; message: string }> => {
  const issues: Array<{ path: ReadonlyArray<string>; message: string }> = []
  const check = (obj: Readonly<Record<string, unknown>>, path: ReadonlyArray<string>) => {
    for (const key of Object.keys(obj)) {
      const problem = guardrailKeyProblem(key)
      if (problem !== null) issues.push({ path: [...path, key], message: problem })
    }
  }
  if (!isRecord(raw)) return issues
  check(raw, [])
  if (isRecord(raw.scopes)) {
    for (const [scope, entry] of Object.entries(raw.scopes)) {
      if (!isRecord(entry)) continue
      check(entry, ["scopes", scope])
      if (isRecord(entry.classes)) check(entry.classes, ["scopes", scope, "classes"])
    }
  }
  return issues
}

const ClassModes = Schema.Record({ key: Schema.String, value: ApprovalMode }).pipe(
  Schema.filter((classes) => {
    for (const key of Object.keys(classes)) {
      if ((MANDATORY_EXCEPTIONS as ReadonlyArray<string>).includes(key)) {
        return { path: [key], message: `"${key}" is a mandatory exception: it always waits for a person and cannot be configured (remove it)` }
      }
      if (!(CONFIGURABLE_CLASSES as ReadonlyArray<string>).includes(key)) {
        return { path: [key], message: `unknown class (use one of ${CONFIGURABLE_CLASSES.join(", ")})` }
      }
    }
    return true
  })
)

export const ApprovalScope = Schema.Struct({
  mode: Schema.optional(ApprovalMode),
  classes: Schema.optional(ClassModes)
})

const DOMAIN_RE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/
/** A mail domain of this instance, e.g. acme.example: lowercase, no @, at least one dot. */
export const MailDomain = Schema.String.pipe(
  Schema.filter((d) => DOMAIN_RE.test(d) || "must be a mail domain such as acme.example (lowercase, no @, no scheme)")
)

const OwnDomains = Schema.Array(MailDomain).pipe(
  Schema.maxItems(100),
  Schema.filter((domains) => {
    const seen = new Set<string>()
    for (const [i, d] of domains.entries()) {
      if (seen.has(d)) return { path: [i], message: `duplicate domain "${d}" (list each domain once)` }
      seen.add(d)
    }
    return true
  })
)

const ApprovalFields = Schema.Struct({
  default_mode: Schema.optionalWith(ApprovalMode, { default: () => "classified" as const }),
  scopes: Schema.optional(Schema.Record({ key: ScopeName, value: ApprovalScope })),
  daily_limit: Schema.optionalWith(Int(1, 1000), { default: () => 20 }),
  /** the instance's own mail domains (a sender outside them is external-sensitive); subdomains count */
  own_domains: Schema.optionalWith(OwnDomains, { default: () => [] }),
  /** where backup nightly POSTs the digest since yesterday (GET /ops/digest's JSON); left out: no post */
  digest_url: Schema.optional(Url.pipe(Schema.filter((u) => /^https?:\/\//.test(u) || "must be an http: or https: URL")))
})

/** `approval` (gaps.md §10): first the guardrail check on the raw block, then the fields. */
export const ApprovalConfig = Schema.compose(
  Schema.Unknown.pipe(Schema.filter(guardrailKeys)),
  ApprovalFields,
  { strict: false }
)
export type ApprovalConfig = typeof ApprovalConfig.Type

export const ConfigFile = Schema.Struct({
  instance: ScopeName,
  zone: Schema.String.pipe(Schema.filter((z) => isIanaZone(z) || "must be an IANA time zone such as Europe/Berlin")),
  public_url: Url.pipe(Schema.filter((u) => !u.endsWith("/") || "must not end with a slash")),
  scopes: Schema.Array(ScopeConfig).pipe(
    Schema.minItems(1),
    Schema.filter((scopes) => {
      const seen = new Set<string>()
      for (const [i, s] of scopes.entries()) {
        if (seen.has(s.name)) return { path: [i, "name"], message: `duplicate scope name "${s.name}" (each scope once)` }
        seen.add(s.name)
      }
      return true
    })
  ),
  access: Schema.optional(Access),
  search: Search,
  backup: Backup,
  at_rest: Schema.optional(AtRest),
  doctor: prefault(Doctor),
  recheck_after_days: Schema.optionalWith(Int(30, 730), { default: () => 180 }),
  limits: prefault(Limits),
  graph: prefault(GraphConfig),
  approval: Schema.optional(ApprovalConfig)
}).pipe(Schema.filter((c) => {
  const names = new Set(c.scopes.map((s) => s.name))
  for (const scope of Object.keys(c.approval?.scopes ?? {})) {
    if (!names.has(scope)) {
      return { path: ["approval", "scopes", scope], message: `"${scope}" is not a configured scope (add it to scopes or remove it here)` }
    }
  }
  return true
}))
export type ConfigFile = typeof ConfigFile.Type
