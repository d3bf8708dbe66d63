/**
 * Which corpora a run measures (`--corpus`) and the groups of queries its tables report: every
 * category with answerable queries, and the cross-language queries per direction. Pure.
 */
import { CORPORA, type Corpus, type CorpusInfo, type Direction, QUERY_CATEGORIES, type QueryCategory } from "./corpus.js"

/** A group of queries a table column reports: a category, or the cross-language queries of one direction. */
export interface Slice {
  readonly name: string
  readonly has: (m: { readonly category: QueryCategory; readonly direction?: Direction | undefined }) => boolean
}

export const DIRECTION_NAMES: Record<Direction, string> = { "de-en": "xlang de→en", "en-de": "xlang en→de" }

/** The categories with answerable queries, each direction of the cross-language queries right after them. */
export const slicesOf = (corpus: Corpus): ReadonlyArray<Slice> => {
  const answerable = corpus.queries.filter((q) => q.relevant.length > 0)
  return QUERY_CATEGORIES.filter((cat) => answerable.some((q) => q.category === cat)).flatMap((cat): Array<Slice> => {
    const slice: Slice = { name: cat, has: (m) => m.category === cat }
    if (cat !== "cross-language") return [slice]
    const directions = (Object.keys(DIRECTION_NAMES) as Array<Direction>).filter((d) => answerable.some((q) => q.category === cat && q.direction === d))
    return [slice, ...directions.map((d): Slice => ({ name: DIRECTION_NAMES[d], has: (m) => m.category === cat && m.direction === d }))]
  })
}

/** The corpora `--corpus <name>,…` names (all when absent); an unknown name stops the run. */
export const selectCorpora = (args: ReadonlyArray<string>): ReadonlyArray<CorpusInfo> => {
  const i = args.indexOf("--corpus")
  if (i === -1) return CORPORA
  const names = (args[i + 1] ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
  const unknown = names.filter((n) => !CORPORA.some((c) => c.name === n))
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`--corpus: unknown corpus ${unknown.join(", ") || "(none given)"}; known: ${CORPORA.map((c) => c.name).join(", ")}`)
  }
  return CORPORA.filter((c) => names.includes(c.name))
}
