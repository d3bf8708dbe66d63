/**
 * A search as the read pool hands it back (issue 14): the SearchResponse already rendered as JSON
 * text where the search ran, the head of every bundle with its scope, and each scope's search_log
 * fields. A worker sends this (one string and a few small arrays) instead of a structured clone of
 * the whole answer — cloning ~20 KB of bundles cost ~1.3 ms of the worker and the main thread per
 * search, JSON.stringify ~0.2 ms — and the main thread writes the text as the body unchanged.
 */
import type { SearchOutcome } from "../search/search.js"

export interface RenderedSearch {
  /** JSON.stringify of the SearchResponse: the body of POST /v1/search as it is sent */
  readonly json: string
  /** the head of each bundle of the answer, in its order */
  readonly heads: ReadonlyArray<{ readonly scope: string; readonly ref: string }>
  /** per scope: what its search_log row records */
  readonly perScope: SearchOutcome["perScope"]
}

export const renderSearch = (out: SearchOutcome): RenderedSearch => ({
  json: JSON.stringify(out.response),
  heads: out.response.bundles.map((b) => ({ scope: b.head.scope, ref: b.head.ref })),
  perScope: out.perScope
})
