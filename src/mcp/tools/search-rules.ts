/**
 * search_rules: SearchRequest plus detail compact|full (architecture.md §6.5). The same search()
 * and pipeline as POST /v1/search (searchSpec), channel mcp; detail "full" answers the
 * SearchResponse, "compact" (default) its compact form, capped at 30,000 characters of the
 * larger of this result's model text and its structured JSON.
 */
import { bodyValue } from "../../auth/operation.js"
import { SearchRulesRequest, type SearchResponse } from "../../domain/search-schemas.js"
import { search } from "../../operations/search.js"
import { toCompact } from "../../search/compact.js"
import { toolResult } from "../result.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const SEARCH_RULES_DESCRIPTION =
  "Cite every bundle with its date and source. If a head carries recheck, ask the person \"still valid?\" before " +
  "applying it and read provenance first. If a stage did not run and nothing was found, say which stages ran. " +
  "Prefer rules that state a restriction for the action you are planning. Groups list refs, each entry once in " +
  "related; for a full bundle call read_rule or pass detail: \"full\", and if truncated is set, search narrower for " +
  "the omitted bundles."

export const searchRules: ToolSpec<typeof SearchRulesRequest.Encoded, typeof search.input.Type, Services> = {
  name: "search_rules",
  title: "Search rules",
  description: SEARCH_RULES_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: search,
  args: SearchRulesRequest,
  toInput: ({ detail: _detail, ...request }) => request,
  present: (outcome, output, args) => {
    const full = bodyValue(outcome.body) as SearchResponse
    if (args.detail === "full") return toolResult(output, full)
    const boundary = output.boundary()
    const compact = toCompact(full, (c) => output.render(c, { boundary }), output.annotate)
    return toolResult(output, compact, boundary)
  }
}
