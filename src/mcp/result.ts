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
import type { ErrorCode } from "../contracts/errors.js"
import type { ModelOutputShape } from "../security/model-output.js"

export type ToolKind = "core" | "graph"

/** A successful result: structured content and its model text (one boundary per response). */
export const toolResult = (output: ModelOutputShape, value: object, boundary?: string): CallToolResult => ({
  content: [{ type: "text", text: output.render(value, boundary === undefined ? {} : { boundary }) }],
  structuredContent: output.annotate(value) as Record<string, unknown>
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

/** A tool call the service had no capacity for (503 overloaded on the rest of the listener). */
export interface OverloadedBody {
  readonly error: "overloaded"
  /** the server's own words, no caller input */
  readonly message: string
  /** whole seconds to wait before sending the call again (the Retry-After of HTTP) */
  readonly retry_after: number
}

/** The isError result of a tool call past capacity: nothing ran; send it again after retry_after seconds. */
export const overloadedResult = (body: OverloadedBody): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  structuredContent: { ...body },
  isError: true
})

/** The guidance of an internal failure on a graph tool (graph.md §8: every graph answer has remedy and next). */
const INTERNAL_REMEDY = "Something failed inside Groundnote. Tell the person; do not repeat the call."

/** The isError result of a refused or failed call. */
export const errorResult = (output: ModelOutputShape, result: Exclude<CallResult, { _tag: "Done" }>, kind: ToolKind): CallToolResult => {
  if (result._tag === "Internal") {
    return kind === "core" ? plainError({ error: "internal" }) : { ...toolResult(output, { error: "internal", remedy: INTERNAL_REMEDY, next: [] }), isError: true }
  }
  const requestId = result.requestId === null ? {} : { request_id: result.requestId }
  // a graph refusal, or a refusal of the scope check on a graph operation (runCall puts it in the
  // envelope {error, remedy, next}): the GraphErrorBody, framed like a result; so is a refusal
  // that carries foreign text or names fields (quote-not-found's closest passage, secret-detected's findings)
  if (kind === "graph" || result.body.remedy !== undefined || result.body.closest !== undefined || result.body.findings !== undefined) {
    return { ...toolResult(output, { error: result.code, ...result.body, ...requestId }), isError: true }
  }
  return plainError({ error: result.code, ...(result.body.current === undefined ? {} : { current: result.body.current }), ...requestId })
}
