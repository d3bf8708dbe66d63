/**
 * Whether stage b may run for a scope (architecture.md §3: search.semantic.enabled and "local"
 * in the scope's providers_allowed) — a pure function of the configuration, checked before the
 * question is embedded. The reasons are the texts src/search/stage.ts reports today.
 *
 *   semanticGate(file, scope) → { _tag: "off", reason } | { _tag: "not-allowed", reason } | { _tag: "allowed", semantic }
 */
import type { ConfigFile } from "../../config/schema.js"

export const SEMANTIC_GATE_REASONS = {
  off: "disabled in config",
  notAllowed: "provider local is not allowed for this scope"
} as const

type SemanticOn = Extract<ConfigFile["search"]["semantic"], { readonly enabled: true }>

export type SemanticGate =
  | { readonly _tag: "off"; readonly reason: typeof SEMANTIC_GATE_REASONS.off }
  | { readonly _tag: "not-allowed"; readonly reason: typeof SEMANTIC_GATE_REASONS.notAllowed }
  | { readonly _tag: "allowed"; readonly semantic: SemanticOn }

export const semanticGate = (file: Pick<ConfigFile, "search" | "scopes">, scope: string): SemanticGate => {
  const semantic = file.search.semantic
  if (!semantic.enabled) return { _tag: "off", reason: SEMANTIC_GATE_REASONS.off }
  const s = file.scopes.find((x) => x.name === scope)
  if (s === undefined || !s.providers_allowed.includes("local")) return { _tag: "not-allowed", reason: SEMANTIC_GATE_REASONS.notAllowed }
  return { _tag: "allowed", semantic }
}
