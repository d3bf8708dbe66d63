/**
 * POST /mcp: the agents' door (architecture.md §9, gaps.md §2). Stateless Streamable HTTP with
 * JSON responses: every request gets a fresh McpServer({name: "groundnote", version},
 * {instructions}) and a fresh transport, bound to the authenticated person on channel mcp.
 *
 * Before the transport, in this order: a foreign Origin → 403 csrf-failed; a body over 256 KiB →
 * 413; the credential → identity → active grant (401 with WWW-Authenticate: Bearer
 * resource_metadata=…); a service (Access service token or service bearer) → 403
 * channel-not-allowed; reading the body: over 256 KiB (chunked) → 413; the request limit of the
 * grant, one request per JSON-RPC message (a batch of 100 counts 100; 429, nothing of it runs);
 * nested more than 64 levels → 400 validation-failed (an ErrorBody, before it is parsed), not
 * JSON → a JSON-RPC parse error. Each tool call then runs steps 2–6
 * of the scope-check pipeline (runCall) for that person and grant. Any other method → 405.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect } from "effect"
import { checkCaller, takeLimit } from "../auth/caller.js"
import { logDenied } from "../auth/scope-check.js"
import { AppConfig } from "../config/config.js"
import type { RateLimited } from "../contracts/errors.js"
import type { Services } from "../services.js"
import { contentLengthTooLarge, DEFAULT_BODY_LIMIT, isTooDeep, readBody } from "../transport/body.js"
import { errorResponse, internal } from "../transport/responses.js"
import { VERSION } from "../version.js"
import { INSTRUCTIONS } from "./instructions.js"
import { registerPrompts } from "./prompts.js"
import { registerTool, type ToolContext } from "./tool.js"
import { entityCreate } from "./tools/entity-create.js"
import { entityMove } from "./tools/entity-move.js"
import { entityPath } from "./tools/entity-path.js"
import { entityResolve } from "./tools/entity-resolve.js"
import { entityTree } from "./tools/entity-tree.js"
import { entityUpdate } from "./tools/entity-update.js"
import { linkList } from "./tools/link-list.js"
import { linkPropose } from "./tools/link-propose.js"
import { listScopes } from "./tools/list-scopes.js"
import { proposeRule } from "./tools/propose-rule.js"
import { readRule } from "./tools/read-rule.js"
import { ruleProvenance } from "./tools/rule-provenance.js"
import { ruleRetract } from "./tools/rule-retract.js"
import { structureRetract } from "./tools/structure-retract.js"
import { searchFeedback } from "./tools/search-feedback.js"
import { searchRules } from "./tools/search-rules.js"

/** The tools of this build (gaps.md §5). */
export const CORE_TOOLS = [
  "search_rules", "read_rule", "rule_provenance", "propose_rule", "search_feedback", "list_scopes", "rule_retract"
] as const
/** The graph tools (graph.md §9.2). */
export const GRAPH_TOOLS = [
  "entity_resolve", "entity_create", "entity_move", "entity_update", "entity_tree", "entity_path", "link_propose", "link_list"
] as const
/** Every tool tools/list answers. */
export const MCP_TOOLS: ReadonlyArray<string> = [...CORE_TOOLS, ...GRAPH_TOOLS]

/** A fresh server for one request, bound to its caller; input schemas built from the configuration. */
export const createMcpServer = (ctx: ToolContext): McpServer => {
  const server = new McpServer({ name: "groundnote", version: VERSION }, { instructions: INSTRUCTIONS })
  registerTool(server, ctx, searchRules)
  registerTool(server, ctx, readRule)
  registerTool(server, ctx, ruleProvenance)
  registerTool(server, ctx, proposeRule)
  registerTool(server, ctx, searchFeedback)
  registerTool(server, ctx, listScopes)
  registerTool(server, ctx, ruleRetract)
  registerTool(server, ctx, structureRetract)
  registerTool(server, ctx, entityResolve(ctx.config))
  registerTool(server, ctx, entityCreate(ctx.config))
  registerTool(server, ctx, entityMove)
  registerTool(server, ctx, entityUpdate)
  registerTool(server, ctx, entityTree)
  registerTool(server, ctx, entityPath)
  registerTool(server, ctx, linkPropose)
  registerTool(server, ctx, linkList)
  registerPrompts(server, ctx.config.file.graph.entity_types)
  return server
}

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers })

/** GET, PUT, PATCH, DELETE /mcp: the stateless server has no stream and no session (405). */
export const mcpMethodNotAllowed = Effect.succeed(jsonRpcError(405, -32000, "Method not allowed.", { allow: "POST" }))

export const mcpPost = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig

  // A browser page of another origin must not drive the agents' door (DNS rebinding, CSRF).
  const origin = request.headers.origin
  if (origin !== undefined && origin !== new URL(config.file.public_url).origin) {
    yield* Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel: "mcp", operation: "mcp", code: "csrf-failed", grant: null, reason: "foreign origin" }))
    return errorResponse("csrf-failed", { message: "requests to /mcp from another origin are refused" })
  }
  // 1. credential → identity → active grant; a person only (the request limit below, per message)
  const caller = yield* Effect.either(checkCaller(request, { channel: "mcp", limit: null }))
  const unauthorizedHeaders = { "www-authenticate": `Bearer resource_metadata="${config.file.public_url}/.well-known/oauth-protected-resource"` }
  if (caller._tag === "Left") {
    const e = caller.left
    if (e._tag === "JwksUnavailable") return yield* internal("jwks", e)
    yield* logDenied("mcp", "mcp", e, e.grantId ?? null)
    return errorResponse(e.code, { message: e.message }, e.code === "unauthorized" ? unauthorizedHeaders : {})
  }
  const grantId = caller.right.grant.id
  /** The request limit: every JSON-RPC message of the POST counts, a body that is not one counts once. */
  const limited = (count: number) =>
    Effect.map(Effect.either(takeLimit("requests", grantId, count)), (taken) => taken._tag === "Right" ? null : taken.left)
  const refusedByLimit = (e: RateLimited) =>
    Effect.as(logDenied("mcp", "mcp", e, grantId), errorResponse(e.code, { message: e.message }, { "retry-after": String(e.retryAfter ?? 1) }))
  // the declared size after step 1: without a credential the answer is 401 whatever is sent
  if (contentLengthTooLarge(request, DEFAULT_BODY_LIMIT)) {
    const over = yield* limited(1)
    if (over !== null) return yield* refusedByLimit(over)
    return errorResponse("payload-too-large", { message: `the body is larger than ${DEFAULT_BODY_LIMIT} bytes` })
  }

  // the JSON-RPC body (the transport gets it parsed)
  const body = yield* Effect.either(readBody(request, DEFAULT_BODY_LIMIT))
  const messages = body._tag === "Right" && Array.isArray(body.right.value) ? Math.max(1, body.right.value.length) : 1
  const over = yield* limited(messages)
  if (over !== null) return yield* refusedByLimit(over)
  if (body._tag === "Left") {
    if (body.left._tag === "PayloadTooLarge") return errorResponse("payload-too-large", { message: body.left.message })
    // nested deeper than any message of the protocol: refused before parsing, like on /v1
    if (isTooDeep(body.left)) return errorResponse("validation-failed", { message: body.left.message, issues: [...(body.left.issues ?? [])] })
    return jsonRpcError(400, -32700, "Parse error: send one JSON-RPC message or batch as application/json")
  }
  if (body.right.value === undefined || body.right.form) return jsonRpcError(400, -32700, "Parse error: send one JSON-RPC message or batch as application/json")

  const runtime = yield* Effect.runtime<Services>()
  const ctx: ToolContext = { caller: caller.right, config, runtime }
  const headers = new Headers()
  for (const [k, v] of Object.entries(request.headers)) if (typeof v === "string") headers.set(k, v)
  const webRequest = new Request(new URL("/mcp", config.file.public_url), { method: "POST", headers })
  const response = yield* Effect.promise(async () => {
    const server = createMcpServer(ctx)
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(webRequest, { parsedBody: body.right.value })
    } finally {
      await server.close()
    }
  })
  return HttpServerResponse.fromWeb(yield* Effect.promise(() => withoutErrorPrefix(response)))
}).pipe(Effect.catchAllDefect((defect) => internal("mcp", defect)))

const ERROR_PREFIX = /^MCP error -?\d+: /

/**
 * The SDK's server writes a JSON-RPC error's message with its "MCP error <code>: " prefix, and its
 * client adds the prefix again ("MCP error -32602: MCP error -32602: …"): the prefix is cut here,
 * so a client shows the code once.
 */
const withoutErrorPrefix = async (response: Response): Promise<Response> => {
  if (!(response.headers.get("content-type") ?? "").includes("application/json")) return response
  const text = await response.text()
  const rebuilt = (body: string) => new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
  let changed = false
  const strip = (m: unknown): unknown => {
    if (typeof m !== "object" || m === null || !("error" in m)) return m
    const error = (m as { error: { message?: unknown } }).error
    if (typeof error?.message !== "string" || !ERROR_PREFIX.test(error.message)) return m
    changed = true
    return { ...m, error: { ...error, message: error.message.replace(ERROR_PREFIX, "") } }
  }
  try {
    const parsed: unknown = JSON.parse(text)
    const out = Array.isArray(parsed) ? parsed.map(strip) : strip(parsed)
    return rebuilt(changed ? JSON.stringify(out) : text)
  } catch {
    return rebuilt(text)
  }
}
