/**
 * The text of a rule version that stage b embeds and stage c sends to the reranker: the
 * statement, its keywords, its relations ("kind: name") and the quote, one per line, empty parts
 * left out. The statement comes first, so a token or character cap cuts a long quote, not the rule.
 */

export interface EmbeddableVersion {
  readonly statement: string
  /** JSON array of strings, as stored */
  readonly keywords: string
  /** JSON array of {kind, name, …}, as stored */
  readonly relations: string
  readonly quote: string
}

const jsonArray = (s: string): Array<unknown> => {
  try {
    const v: unknown = JSON.parse(s)
    return Array.isArray(v) ? v : []
  } catch {
    return []
  }
}

export const ruleEmbeddingText = (v: EmbeddableVersion): string => {
  const keywords = jsonArray(v.keywords).filter((k): k is string => typeof k === "string")
  const relations = jsonArray(v.relations).flatMap((r) => {
    const { kind, name } = (r ?? {}) as { kind?: unknown; name?: unknown }
    return typeof kind === "string" && typeof name === "string" ? [`${kind}: ${name}`] : []
  })
  return [v.statement, keywords.join(", "), relations.join("; "), v.quote].map((s) => s.trim()).filter((s) => s.length > 0).join("\n")
}
