/**
 * Whether stage c may run for a scope — checked before any text could leave the host
 * (architecture.md §3: c needs search.reranker.enabled, the scope's reranker: true and "typesafe"
 * in its providers_allowed). A pure function of the configuration.
 *
 *   rerankerGate(file, scope) → { _tag: "off" } | { _tag: "not-allowed", reason } | { _tag: "allowed", reranker }
 */
import type { ConfigFile } from "../../config/schema.js"

export const GATE_REASONS = {
  off: "disabled in config",
  providerNotAllowed: "provider typesafe is not allowed for this scope",
  scopeOff: "reranker is not enabled for this scope"
} as const

type RerankerOn = Extract<ConfigFile["search"]["reranker"], { readonly enabled: true }>

export type RerankerGate =
  | { readonly _tag: "off"; readonly reason: typeof GATE_REASONS.off }
  | { readonly _tag: "not-allowed"; readonly reason: typeof GATE_REASONS.providerNotAllowed | typeof GATE_REASONS.scopeOff }
  | { readonly _tag: "allowed"; readonly reranker: RerankerOn }

export const rerankerGate = (file: Pick<ConfigFile, "search" | "scopes">, scope: string): RerankerGate => {
  const reranker = file.search.reranker
  if (!reranker.enabled) return { _tag: "off", reason: GATE_REASONS.off }
  const s = file.scopes.find((x) => x.name === scope)
  if (s === undefined || !s.providers_allowed.includes(reranker.provider)) return { _tag: "not-allowed", reason: GATE_REASONS.providerNotAllowed }
  if (!s.reranker) return { _tag: "not-allowed", reason: GATE_REASONS.scopeOff }
  return { _tag: "allowed", reranker }
}
