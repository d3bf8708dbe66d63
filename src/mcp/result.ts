/**
 * Tool results (architecture.md §9, §6.6; graph.md §8). A success has structuredContent (the API
 * object annotated by annotateForeign) and content[0].text (the same object rendered by
 * renderResultForModel). An expected error is an isError result: plain JSON with the code,
 * the current ref and the request id (codes and request ids only, never a message that could
 * carry foreign text); a graph refusal carries the GraphErrorBody framed like a result, because
 * candidate names and paths are foreign text. Refusals of the scope check on a graph tool get
 * the same envelope {error, remedy, next}, with the same body whether the scope exists or not.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { CallResult } from "../auth/scope-check.js"
import type { ErrorCode } from "../domain/errors.js"
import { annotateForeign, renderResultForModel } from "../security/model-output.js"

export type ToolKind = "core" | "graph"

/** A successful result: structured content and its model text (one boundary per response). */
export const toolResult = (value: object, boundary?: string): CallToolResult => ({
  content: [{ type: "text", text: renderResultForModel(value, boundary === undefined ? {} : { boundary }) }],
  structuredContent: annotateForeign(value) as Record<string, unknown>
})

export interface PlainError {
  readonly error: ErrorCode | "internal"
  readonly current?: string
  readonly request_id?: string
}

const plainError = (body: PlainError): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  structuredContent: { ...body },
  isError: true
})

/** Guidance for refusals of the scope check on graph tools (graph.md §8). */
const GRAPH_REMEDY: Partial<Record<ErrorCode | "internal", { remedy: string; next: ReadonlyArray<{ tool: string; why: string }> }>> = {
  "scope-not-allowed": {
    remedy: "Name a scope this grant covers; list_scopes shows them.",
    next: [{ tool: "list_scopes", why: "see the scopes this grant covers" }]
  },
  "channel-not-allowed": {
    remedy: "This grant may not do this. Tell the person; a person with the right must do it or grant it.",
    next: []
  },
  "multiple-scopes-without-flag": { remedy: "Name exactly one scope: links and entities exist only inside one scope.", next: [] },
  "validation-failed": { remedy: "Correct the arguments and call again; name the scope and use ids of this scope.", next: [] },
  "scope-locked": { remedy: "The scope cannot be opened right now. Tell the person to ask the operator; do not retry.", next: [] },
  "not-found": { remedy: "Check the id: resolve the entity by name with entity_resolve.", next: [{ tool: "entity_resolve", why: "find the entity by name" }] },
  "internal": { remedy: "Something failed inside Groundnote. Tell the person; do not repeat the call.", next: [] }
}

/** The isError result of a refused or failed call. */
export const errorResult = (result: Exclude<CallResult, { _tag: "Done" }>, kind: ToolKind): CallToolResult => {
  if (result._tag === "Internal") {
    if (kind === "core") return plainError({ error: "internal" })
    const g = GRAPH_REMEDY.internal ?? { remedy: "", next: [] }
    return { ...toolResult({ error: "internal", remedy: g.remedy, next: g.next }), isError: true }
  }
  const requestId = result.requestId === null ? {} : { request_id: result.requestId }
  const current = result.body.current === undefined ? {} : { current: result.body.current }
  if (result.body.remedy !== undefined && result.body.next !== undefined) {
    // a graph refusal: the GraphErrorBody, framed like a result
    return { ...toolResult({ error: result.code, ...result.body, ...requestId }), isError: true }
  }
  if (kind === "graph") {
    const g = GRAPH_REMEDY[result.code] ?? { remedy: "Follow the error code; do not repeat the same call.", next: [] }
    return { ...toolResult({ error: result.code, ...current, remedy: g.remedy, next: g.next, ...requestId }), isError: true }
  }
  return plainError({ error: result.code, ...current, ...requestId })
}
