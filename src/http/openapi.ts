/**
 * What /openapi.json says beyond the routes' payloads and answers (the HttpApi of api.ts): the
 * version of this build, how a caller authenticates (a service bearer or Access JWT on the api
 * channel; an Access JWT or the approval session cookie on the approval channel), the query
 * parameters of every GET from the operation's own input schema, and the error answers every
 * route can give with their codes (architecture.md §6.6, gaps.md §4).
 */
import { JSONSchema, Schema } from "effect"
import { ErrorBody, GraphErrorBody } from "../contracts/errors.js"
import { ReadSourceInput } from "../domain/source-schemas.js"
import { ListProposalsInput } from "../domain/proposal-schemas.js"
import { ListRulesInput, ReadRuleInput, ScopeInput } from "../domain/rule-schemas.js"
import { ListLinksInput } from "../graph/link-types.js"
import { ReadEntityInput, ResolveQuery, TreeQuery } from "../graph/schemas.js"

type Json = Record<string, unknown>

/** The query of each GET route: the operation's input without its path parameter. */
const QUERIES: ReadonlyArray<readonly [path: string, input: Schema.Schema.AnyNoContext, path_params: ReadonlyArray<string>]> = [
  ["/v1/sources/{id}", ReadSourceInput, ["id"]],
  ["/v1/proposals", ListProposalsInput, []],
  ["/v1/rules", ListRulesInput, []],
  ["/v1/rules/{id}", ReadRuleInput, ["id"]],
  ["/v1/rejected", ScopeInput, []],
  ["/v1/entities/resolve", ResolveQuery, []],
  ["/v1/entities", TreeQuery, []],
  ["/v1/entities/{id}", ReadEntityInput, ["id"]],
  ["/v1/links", ListLinksInput, []],
  ["/v1/structure", ScopeInput, []]
]

/** Routes of the approval channel (gaps.md §2): a person's Access JWT (aud_approval) or the session cookie. */
const APPROVAL: ReadonlyArray<readonly [method: string, path: string]> = [
  ["post", "/v1/rules/{id}/decision"], ["post", "/v1/decisions"], ["post", "/v1/reviews"], ["post", "/v1/entities/{id}/archive"],
  ["get", "/v1/export/{scope}"], ["get", "/v1/rejected"], ["post", "/v1/redactions/preview"], ["post", "/v1/redactions"]
]
const GRAPH_PATHS = /^\/v1\/(entities|links|structure|reviews)\b/

const SECURITY_SCHEMES: Json = {
  bearer: {
    type: "http", scheme: "bearer",
    description: "api channel: a service bearer gn_… (an operator creates it: groundnote grants create), or in dev-token mode GROUNDNOTE_DEV_API_TOKEN for the dev person"
  },
  accessJwt: {
    type: "apiKey", in: "header", name: "cf-access-jwt-assertion",
    description: "cloudflare-access mode: the Access JWT of the channel's audience (aud_api on the api channel, aud_approval on the approval channel)"
  },
  session: {
    type: "apiKey", in: "cookie", name: "gn_session",
    description: "approval channel in dev-token mode: the session cookie of POST /approval/login (__Host-gn_session over https); state-changing requests also need the same origin and the csrf token"
  }
}

const ERRORS: ReadonlyArray<readonly [status: string, description: string]> = [
  ["400", "validation-failed, multiple-scopes-without-flag, source-immutable or reason-missing; issues names every path"],
  ["401", "unauthorized: no valid credential or no active grant (WWW-Authenticate names the protected-resource document)"],
  ["403", "channel-not-allowed (identity kind or right), scope-not-allowed (the same answer whether the scope exists or not) or csrf-failed"],
  ["413", "payload-too-large: 10 MiB on /v1/sources, 256 KiB elsewhere"],
  ["415", "unsupported-media-type: a route that reads a JSON body got another Content-Type (a form, text)"],
  ["429", "rate-limited: wait the seconds of Retry-After"],
  ["500", "internal: nothing but the code"],
  ["503", "scope-locked: the scope file cannot be opened (or is missing); overloaded: the listener's queue is full, nothing was done — retry after the seconds of Retry-After"]
]

const errorContent = (graph: boolean): Json => ({
  "application/json": { schema: { $ref: `#/components/schemas/${graph ? "GraphErrorBody" : "ErrorBody"}` } }
})

/** The JSON Schema of a schema; what it names goes into `definitions` (the document's components). */
const schemaOf = (s: Schema.Schema.AnyNoContext, definitions: Record<string, JSONSchema.JsonSchema7>): Json =>
  JSONSchema.fromAST(s.ast, { definitions, definitionPath: "#/components/schemas/", target: "openApi3.1", topLevelReferenceStrategy: "skip" }) as unknown as Json

/** The query parameters of an input schema (its encoded side), without the path parameters. */
const queryParameters = (input: Schema.Schema.AnyNoContext, pathParams: ReadonlyArray<string>, definitions: Record<string, JSONSchema.JsonSchema7>): Array<Json> => {
  const json = schemaOf(Schema.encodedSchema(input), definitions) as { properties?: Record<string, Json>; required?: Array<string> }
  return Object.entries(json.properties ?? {})
    .filter(([name]) => !pathParams.includes(name))
    .map(([name, schema]) => ({ name, in: "query", required: json.required?.includes(name) === true, schema }))
}

/** A JSON value without `$id` keys (Effect marks Schema.Unknown with one `$id` per use, which a validator refuses as duplicates). */
const withoutIds = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(withoutIds)
  if (typeof v !== "object" || v === null) return v
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "$id").map(([k, x]) => [k, withoutIds(x)]))
}

/** The spec HttpApi made, with the version, security, query parameters and error answers. */
export const completeSpec = (version: string) => (spec: Json): Json => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const paths = spec.paths as Record<string, Record<string, Json>>
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== "object" || op === null || !("responses" in op)) continue
      const approval = APPROVAL.some(([m, p]) => m === method && p === path)
      op.security = approval ? [{ accessJwt: [] }, { session: [] }] : [{ bearer: [] }, { accessJwt: [] }]
      const responses = op.responses as Record<string, Json>
      const graph = GRAPH_PATHS.test(path)
      for (const [status, description] of ERRORS) {
        if ((status === "413" || status === "415") && method === "get") continue
        responses[status] = { description, content: errorContent(graph) }
      }
      if (path.includes("{") && responses["404"] === undefined) responses["404"] = { description: "not-found: the same answer for an unknown, malformed or foreign id", content: errorContent(graph) }
      // the routes answer every error as ErrorBody (GraphErrorBody on the graph routes), never HttpApi's own decode error
      for (const [status, r] of Object.entries(responses)) if (Number(status) >= 400) responses[status] = { ...r, content: errorContent(graph) }
      for (const status of ["429", "503"]) {
        const r = responses[status]
        if (r !== undefined) responses[status] = { ...r, headers: { "Retry-After": { description: status === "429" ? "whole seconds" : "whole seconds (overloaded only)", schema: { type: "integer", minimum: 1 } } } }
      }
      const query = QUERIES.find(([p]) => p === path)
      if (method === "get" && query !== undefined) {
        const [, input, pathParams] = query
        const existing = (op.parameters as Array<Json> | undefined) ?? []
        op.parameters = [...existing.filter((p) => p.in !== "query"), ...queryParameters(input, pathParams, definitions)]
      }
    }
  }
  const bodies = { ErrorBody: schemaOf(ErrorBody, definitions), GraphErrorBody: schemaOf(GraphErrorBody, definitions) }
  const components = (spec.components ?? {}) as Json
  const { HttpApiDecodeError: _decode, Issue: _issue, ...schemas } = (components.schemas ?? {}) as Json
  return withoutIds({
    ...spec,
    info: { ...(spec.info as Json), version },
    components: { ...components, schemas: { ...schemas, ...definitions, ...bodies }, securitySchemes: SECURITY_SCHEMES },
    security: [{ bearer: [] }, { accessJwt: [] }]
  }) as Json
}
