/**
 * groundnote.json (architecture.md §3, graph.md §7, gaps.md §10–§11), strict: an unknown key
 * fails and names its path. Defaults as the contract gives them.
 */
import { isAbsolute } from "node:path"
import { Schema } from "effect"
import { GraphConfig } from "./graph.js"
import { Day } from "../contracts/schemas.js"
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
  deadman_url: Url,
  export_directory: Schema.optional(AbsolutePath)
})
export const BackupCopy = Schema.Struct({
  kind: Schema.Literal("copy"),
  directory: NonEmpty,
  deadman_url: Url,
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
/** Classes a mode may be set for. `payment` is a mandatory exception and cannot be configured. */
export const CONFIGURABLE_CLASSES = ["general", "personal", "external"] as const
export const MANDATORY_EXCEPTIONS = [
  "payment", "secret", "contradiction", "external-sensitive", "injection", "unchecked-quote", "doubt", "large-subtree"
] as const

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

export const ApprovalConfig = Schema.Struct({
  default_mode: Schema.optionalWith(ApprovalMode, { default: () => "classified" as const }),
  scopes: Schema.optional(Schema.Record({ key: ScopeName, value: ApprovalScope })),
  daily_limit: Schema.optionalWith(Int(1, 1000), { default: () => 20 })
})
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
