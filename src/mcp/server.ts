/**
 * POST /mcp: the agents' door (architecture.md §9, gaps.md §2). Stateless Streamable HTTP with
 * JSON responses: every request gets a fresh McpServer({name: "groundnote", version},
 * {instructions}) and a fresh transport, bound to the authenticated person on channel mcp.
 *
 * Before the transport, in this order: a foreign Origin → 403 csrf-failed; a body over 256 KiB →
 * 413; the credential → identity → active grant (401 with WWW-Authenticate: Bearer
 * resource_metadata=…); a service (Access service token or service bearer) → 403
 * channel-not-allowed; the request limit of the grant (429). Each tool call then runs steps 2–6
 * of the scope-check pipeline (runCall) for that person and grant. Any other method → 405.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { Effect, Option } from "effect"
import { authenticate } from "../auth/credentials.js"
import { CHANNEL_KINDS } from "../auth/scope-check.js"
import { AppConfig } from "../config/config.js"
import { BEARER_RE, hashBearer, OpsStore } from "../db/ops-store.js"
import type { ErrorCode } from "../contracts/errors.js"
import { errorResponse, internal } from "../http/errors.js"
import { contentLengthTooLarge, DEFAULT_BODY_LIMIT, PayloadTooLarge, readBody } from "../http/input.js"
import { RateLimiter } from "../http/rate-limit.js"
import { VERSION } from "../version.js"
import { INSTRUCTIONS } from "./instructions.js"
import { registerPrompts } from "./prompts.js"
import type { McpServices, ToolContext } from "./tools/context.js"
import { registerEntityCreate } from "./tools/entity-create.js"
import { registerEntityMove } from "./tools/entity-move.js"
import { registerEntityPath } from "./tools/entity-path.js"
import { registerEntityResolve } from "./tools/entity-resolve.js"
import { registerEntityTree } from "./tools/entity-tree.js"
import { registerEntityUpdate } from "./tools/entity-update.js"
import { registerLinkList } from "./tools/link-list.js"
import { registerLinkPropose } from "./tools/link-propose.js"
import { registerListScopes } from "./tools/list-scopes.js"
import { registerProposeRule } from "./tools/propose-rule.js"
import { registerReadRule } from "./tools/read-rule.js"
import { registerRuleProvenance } from "./tools/rule-provenance.js"
import { registerSearchFeedback } from "./tools/search-feedback.js"
import { registerSearchRules } from "./tools/search-rules.js"

/** The tools of this build (gaps.md §5; rule_retract arrives with the approval modes). */
export const CORE_TOOLS = ["search_rules", "read_rule", "rule_provenance", "propose_rule", "search_feedback", "list_scopes"] as const
/** The graph tools (graph.md §9.2). */
export const GRAPH_TOOLS = [
  "entity_resolve", "entity_create", "entity_move", "entity_update", "entity_tree", "entity_path", "link_propose", "link_list"
] as const
/** Every tool tools/list answers. */
export const MCP_TOOLS: ReadonlyArray<string> = [...CORE_TOOLS, ...GRAPH_TOOLS]

/** A fresh server for one request, bound to its caller; input schemas built from the configuration. */
export const createMcpServer = (ctx: ToolContext): McpServer => {
  const server = new McpServer({ name: "groundnote", version: VERSION }, { instructions: INSTRUCTIONS })
  registerSearchRules(server, ctx)
  registerReadRule(server, ctx)
  registerRuleProvenance(server, ctx)
  registerProposeRule(server, ctx)
  registerSearchFeedback(server, ctx)
  registerListScopes(server, ctx)
  registerEntityResolve(server, ctx)
  registerEntityCreate(server, ctx)
  registerEntityMove(server, ctx)
  registerEntityUpdate(server, ctx)
  registerEntityTree(server, ctx)
  registerEntityPath(server, ctx)
  registerLinkPropose(server, ctx)
  registerLinkList(server, ctx)
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
  const ops = yield* OpsStore
  const limiter = yield* RateLimiter
  const deny = (code: ErrorCode, grantId: string | null, reason: string, message: string, headers: Record<string, string> = {}) =>
    Effect.as(
      Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel: "mcp", operation: "mcp", code, grant: grantId, reason })),
      errorResponse(code, { message }, headers)
    )

  // A browser page of another origin must not drive the agents' door (DNS rebinding, CSRF).
  const origin = request.headers.origin
  if (origin !== undefined && origin !== new URL(config.file.public_url).origin) {
    return yield* deny("csrf-failed", null, "foreign origin", "requests to /mcp from another origin are refused")
  }
  if (contentLengthTooLarge(request, DEFAULT_BODY_LIMIT)) {
    return errorResponse("payload-too-large", { message: `the body is larger than ${DEFAULT_BODY_LIMIT} bytes` })
  }

  // 1. credential → identity → active grant; a person only; the request limit
  const wwwAuthenticate = { "www-authenticate": `Bearer resource_metadata="${config.file.public_url}/.well-known/oauth-protected-resource"` }
  const identity = yield* Effect.either(authenticate(request, "mcp", config))
  if (identity._tag === "Left") {
    if (identity.left._tag === "JwksUnavailable") return yield* internal("jwks", identity.left)
    // a service bearer is a service credential: 403 when it names an active grant, like any service
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
    if (bearer !== undefined && BEARER_RE.test(bearer) && request.headers["cf-access-jwt-assertion"] === undefined) {
      const service = yield* ops.findActiveGrant("bearer", hashBearer(bearer)).pipe(Effect.orDie)
      if (Option.isSome(service)) {
        return yield* deny("channel-not-allowed", service.value.id, "service on mcp", "a service cannot use the mcp channel")
      }
    }
    return yield* deny("unauthorized", null, identity.left.reason, identity.left.message, wwwAuthenticate)
  }
  const found = yield* ops.findActiveGrant(identity.right.auth, identity.right.identity).pipe(Effect.orDie)
  if (Option.isNone(found)) return yield* deny("unauthorized", null, "no active grant", "a valid credential is required", wwwAuthenticate)
  const grant = found.value
  if (!CHANNEL_KINDS.mcp.includes(identity.right.kind)) {
    return yield* deny("channel-not-allowed", grant.id, `${identity.right.kind} on mcp`, `a ${identity.right.kind} cannot use the mcp channel`)
  }
  const limited = yield* Effect.either(limiter.take("requests", grant.id))
  if (limited._tag === "Left") {
    return yield* deny("rate-limited", grant.id, "requests", limited.left.message, { "retry-after": String(limited.left.retryAfter) })
  }

  // the JSON-RPC body (the transport gets it parsed)
  const body = yield* Effect.either(readBody(request, DEFAULT_BODY_LIMIT))
  if (body._tag === "Left") {
    if (body.left instanceof PayloadTooLarge) return errorResponse("payload-too-large", { message: body.left.message })
    return jsonRpcError(400, -32700, "Parse error: send one JSON-RPC message or batch as application/json")
  }
  if (body.right.value === undefined || body.right.form) return jsonRpcError(400, -32700, "Parse error: send one JSON-RPC message or batch as application/json")

  const runtime = yield* Effect.runtime<McpServices>()
  const ctx: ToolContext = { caller: { identity: identity.right, grant, channel: "mcp" }, request, config, runtime }
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
  return HttpServerResponse.fromWeb(response)
}).pipe(Effect.catchAllDefect((defect) => internal("mcp", defect)))
