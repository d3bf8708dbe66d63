/** GET /openapi.json over real HTTP: a valid OpenAPI document (a real validator) that says how to authenticate and what every error is. */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VERSION } from "../../src/version.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
/** The document, read loosely: the assertions name the parts they need. */
interface Spec {
  info: { version: string }
  paths: Record<string, Record<string, unknown>>
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> }
}
let spec: Spec

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  const r = await fetch(`${server.url}/openapi.json`)
  expect(r.status).toBe(200)
  spec = await r.json() as Spec
})
afterAll(async () => {
  await server.close()
  cleanup()
})

type Op = { security: Array<Record<string, unknown>>; responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }>; headers?: unknown; description?: string }>; parameters?: Array<{ name: string; in: string; required: boolean }>; requestBody?: unknown }
const operations = (): Array<[string, string, Op]> =>
  Object.entries(spec.paths as Record<string, Record<string, Op>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [method, path, op] as [string, string, Op]))

describe("/openapi.json", () => {
  it("is a valid OpenAPI document", async () => {
    const validator = new Validator()
    const result = await validator.validate(spec as unknown as Record<string, unknown>)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })
  it("says what the routes really answer: the source's 201/200/409/422, the export's gzip body", () => {
    const op = (method: string, path: string) => (spec.paths[path] as Record<string, Op>)[method] as Op
    expect(Object.keys(op("post", "/v1/sources").responses)).toEqual(expect.arrayContaining(["200", "201", "409", "413", "422"]))
    const exported = op("get", "/v1/export/{scope}").responses
    expect(exported["204"]).toBeUndefined()
    expect(Object.keys(exported["200"]?.content ?? {})).toEqual(["application/gzip"])
  })
  it("names this build's version", () => {
    expect(spec.info.version).toBe(VERSION)
  })
  it("describes the bearer, Access JWT and session schemes; api routes take a bearer or a JWT, approval routes a JWT or the session", () => {
    expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(["accessJwt", "bearer", "session"])
    expect(spec.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
    expect(spec.components.securitySchemes.accessJwt).toMatchObject({ type: "apiKey", in: "header", name: "cf-access-jwt-assertion" })
    for (const [method, path, op] of operations()) {
      const approval = (method === "post" && /\/(decision|decisions|archive)$|\/v1\/reviews$|\/v1\/redactions(\/preview)?$/.test(path)) || path === "/v1/export/{scope}" || path === "/v1/rejected"
      expect(op.security, `${method} ${path}`).toEqual(approval ? [{ accessJwt: [] }, { session: [] }] : [{ bearer: [] }, { accessJwt: [] }])
    }
  })
  it("every operation lists 400, 401, 403, 429, 500 and 503 as ErrorBody (graph routes GraphErrorBody), 429 and 503 (overloaded) with Retry-After", () => {
    expect(Object.keys(spec.components.schemas)).toEqual(expect.arrayContaining(["ErrorBody", "GraphErrorBody"]))
    expect(Object.keys(spec.components.schemas)).not.toContain("HttpApiDecodeError")
    for (const [method, path, op] of operations()) {
      for (const status of ["400", "401", "403", "429", "500", "503"]) {
        const ref = op.responses[status]?.content?.["application/json"]?.schema.$ref
        expect(ref, `${method} ${path} ${status}`).toBe(/^\/v1\/(entities|links|structure|reviews)/.test(path) ? "#/components/schemas/GraphErrorBody" : "#/components/schemas/ErrorBody")
      }
      expect(op.responses["429"]?.headers, `${method} ${path}`).toHaveProperty("Retry-After")
      expect(op.responses["503"]?.headers, `${method} ${path}`).toHaveProperty("Retry-After")
      expect(op.responses["503"]?.description).toContain("overloaded")
      if (method === "post") expect(op.responses["413"], `${method} ${path}`).toBeDefined()
    }
  })
  it("GET routes list their query parameters from the operation's input; POST routes their request body", () => {
    const byPath = new Map(operations().map(([m, p, op]) => [`${m} ${p}`, op]))
    const params = (k: string) => (byPath.get(k)?.parameters ?? []).filter((p) => p.in === "query").map((p) => `${p.name}${p.required ? "!" : ""}`)
    expect(params("get /v1/rules")).toEqual(["scope!", "status", "relation", "limit", "after"])
    expect(params("get /v1/rules/{id}")).toEqual(["as_of", "include_proposals"])
    expect(params("get /v1/sources/{id}")).toEqual(["scope!", "include"])
    expect(params("get /v1/links")).toEqual(["scope!", "ref!", "grouped", "page"])
    expect(byPath.get("post /v1/proposals")?.requestBody).toBeDefined()
    expect(byPath.get("post /v1/sources")?.requestBody).toBeDefined()
  })
})
