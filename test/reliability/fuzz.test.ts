/**
 * The fuzz suite (docs/reliability.md): inputs generated from the service's own request schemas — every
 * route of /openapi.json (body, path and query parameters) over raw HTTP on 127.0.0.1, every MCP
 * tool of tools/list through the official SDK client, and raw JSON-RPC junk to /mcp — plus the
 * fixed cases of the defects. Per run at least 5,000 generated inputs (GROUNDNOTE_FUZZ_RUNS to
 * change; GROUNDNOTE_FUZZ_SEED to replay a run: the seed is printed). Proven: no 500 (no
 * `internal` anywhere, no "internal error" log line), no dropped connection, every refusal a
 * JSON ErrorBody of a few KB, every success JSON (the export a tar.gz), the process alive and
 * answering afterwards.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { bodyOf, type Body, type Hints, type JsonSchema, pathParam, queryValue } from "./generate.js"
import { approvalLogin, Dropped, type Fixture, isErrorBody, jsonOf, MCP_TOKEN, nested, ORIGIN, raw, type RawAnswer, type RawRequest, SESSION_SECRET, startFixture } from "./support.js"

const RUNS = Number(process.env.GROUNDNOTE_FUZZ_RUNS ?? "5000")
const SEED = Number(process.env.GROUNDNOTE_FUZZ_SEED ?? String(Date.now() % 2 ** 31))
/** The share of the generated inputs that go to MCP (tools and raw JSON-RPC). */
const MCP_SHARE = 0.3
/** An error body must stay below this (the largest legitimate one carries a quote's closest passage). */
const MAX_ERROR_BYTES = 8 * 1024
const CONCURRENCY = 4

const logs = captureLogs()
let f: Fixture
let cookie = ""
let searchId = ""
const CSRF = csrfToken(SESSION_SECRET, "dev@example.com")

interface Failure {
  readonly what: string
  readonly why: string
}
const failures: Array<Failure> = []
const statuses = new Map<string, number>()
let maxErrorBytes = 0
let generated = 0
let answered = 0

const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1)
const fail = (what: string, why: string) => { if (failures.length < 200) failures.push({ what: what.slice(0, 300), why: why.slice(0, 300) }) }

beforeAll(async () => {
  f = await startFixture({ logs })
  cookie = await approvalLogin(f.url)
  const s = await raw(f.url, { method: "POST", path: "/v1/search", headers: { authorization: `Bearer ${f.feeder}`, "content-type": "application/json" }, body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" }) })
  searchId = String((jsonOf(s) as { search_id?: unknown }).search_id ?? "")
}, 60_000)
afterAll(async () => {
  await f.close()
})

/** Runs `tasks` with at most CONCURRENCY in flight. */
const pool = async (tasks: ReadonlyArray<() => Promise<void>>) => {
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++]
      if (task !== undefined) await task()
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
}

const APPROVAL_PATHS = [
  /\/decision$/, /^\/v1\/decisions$/, /^\/v1\/reviews$/, /\/(un)?archive$/, /^\/v1\/export\//, /^\/v1\/rejected$/, /^\/v1\/redactions/,
  /^\/v1\/structure\/(entities|links)$/, /^\/v1\/links\/[^/]+\/close$/
]
const isApproval = (template: string) => APPROVAL_PATHS.some((re) => re.test(template))

/** Checks one answer of /v1 (or of a fixed case anywhere but the pages). */
const check = (what: string, a: RawAnswer, route: string, formPost: boolean) => {
  answered++
  count(String(a.status))
  const type = String(a.headers["content-type"] ?? "")
  if (a.status >= 500 && a.status !== 503) return fail(what, `status ${String(a.status)}: ${a.text.slice(0, 120)}`)
  // a form post on the approval channel is answered as a page (architecture.md §5.3 pages)
  if (formPost && type.startsWith("text/html") && a.status >= 300) {
    count(`${String(a.status)} page`)
    return
  }
  if (a.status >= 400) {
    if (!isErrorBody(a)) return fail(what, `${String(a.status)} is not a JSON ErrorBody: ${type} ${a.text.slice(0, 120)}`)
    maxErrorBytes = Math.max(maxErrorBytes, a.bytes)
    if (a.bytes > MAX_ERROR_BYTES) return fail(what, `${String(a.status)} error body of ${String(a.bytes)} bytes`)
    return
  }
  if (route.startsWith("/v1/export/") && a.status === 200) {
    if (!/gzip|tar/.test(type)) fail(what, `export answered ${type}`)
    return
  }
  if (a.status >= 300) return fail(what, `status ${String(a.status)} on /v1`)
  if (!type.startsWith("application/json") || jsonOf(a) === null) fail(what, `${String(a.status)} without a JSON body: ${type}`)
}

const send = async (what: string, route: string, r: RawRequest) => {
  try {
    const form = String(r.headers?.["content-type"] ?? "").startsWith("application/x-www-form-urlencoded") && isApproval(route)
    check(what, await raw(f.url, { timeoutMs: 60_000, ...r }), route, form)
  } catch (e) {
    if (e instanceof Dropped) {
      count("dropped")
      fail(what, e.message)
    } else throw e
  }
}

/** The requests of one route of /openapi.json. */
const routeRequests = (template: string, method: string, op: Record<string, unknown>, root: JsonSchema, n: number): Array<() => Promise<void>> => {
  const params = (op.parameters ?? []) as ReadonlyArray<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>
  const bodySchema = ((op.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined)?.content?.["application/json"]?.schema) ?? null
  const idHint = template.startsWith("/v1/entities") ? fc.constantFrom("sales-e0001", "sales-e0002", "ops-e0001")
    : template.startsWith("/v1/search") ? fc.constant(searchId)
    : template.startsWith("/v1/export") ? fc.constantFrom("sales", "ops", "hr")
    : template.startsWith("/v1/sources") ? fc.constant(mailSource().source.id)
    : fc.constantFrom(f.rule, "sales-0002", "ops-0001")
  const hints: Hints = {
    scope: fc.constantFrom("sales", "ops"),
    scopes: fc.constantFrom(["sales"], ["sales", "ops"], ["ops"]),
    ref: fc.constantFrom(`rule/${f.rule}`, `rule/${f.rule}@1`, "entity/sales-e0001"),
    version: fc.constantFrom(1, 2),
    decision: fc.constantFrom("confirm", "reject", "revoke", "review"),
    text: fc.constantFrom("Lieferzeit", "Hakenleisten bestellen"),
    include: fc.constantFrom("text", "attachments", "text,attachments")
  }
  const pathNames = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "")
  const pathArb = fc.tuple(...pathNames.map((name) => pathParam(idHint, params.find((p) => p.name === name)?.schema ?? { type: "string" }))).map((values) => {
    let path = template
    pathNames.forEach((name, i) => { path = path.replace(`{${name}}`, values[i] ?? "") })
    return path
  })
  const queryParams = params.filter((p) => p.in === "query")
  const queryArb = fc.tuple(
    ...queryParams.map((p) => fc.option(queryValue(p.schema ?? { type: "string" }, hints[p.name]), { freq: p.required === true ? 8 : 2 }).map((v) => [p.name, v] as const)),
    fc.option(fc.constantFrom("&scope=ops", "&limit=1&limit=2", "&unknown=1", "&%ZZ=1", "&scope=%ED%A0%80"), { freq: 4 })
  ).map((pairs) => {
    const extra = pairs.pop() as string | null
    const q = new URLSearchParams()
    for (const pair of pairs as Array<readonly [string, string | null]>) if (pair[1] !== null) q.append(pair[0], pair[1])
    const text = q.toString() + (extra ?? "")
    return text.length === 0 ? "" : `?${text.replace(/^&/, "")}`
  })
  const body: fc.Arbitrary<Body | null> = bodySchema === null ? fc.constant(null) : bodyOf(bodySchema, root, hints)
  const credential = fc.constantFrom("ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "none", "form")
  const samples = fc.sample(fc.tuple(pathArb, queryArb, body, credential), { numRuns: n, seed: SEED + template.length * 31 + method.length })
  return samples.map(([path, query, b, cred]) => async () => {
    generated++
    const headers: Record<string, string> = {}
    if (cred !== "none") {
      if (isApproval(template)) Object.assign(headers, { cookie, origin: ORIGIN, csrf: CSRF })
      else headers.authorization = `Bearer ${f.feeder}`
    }
    let payload: string | undefined
    if (b !== null) {
      payload = "json" in b ? JSON.stringify(b.json) ?? "null" : b.text
      headers["content-type"] = cred === "form" ? "application/x-www-form-urlencoded" : "application/json"
    }
    const what = `${method.toUpperCase()} ${path}${query} ${payload === undefined ? "" : payload.slice(0, 200)}`
    await send(what, template, { method: method.toUpperCase(), path: `${path}${query}`, headers, ...(payload === undefined ? {} : { body: payload }) })
  })
}

/** The fixed cases of the defects, on every route with a body and every route with an id. */
const fixedRequests = (routes: ReadonlyArray<{ template: string; method: string }>): Array<() => Promise<void>> => {
  const out: Array<() => Promise<void>> = []
  const bigTitle = JSON.stringify({ ...mailSource(), source: { ...mailSource().source, title: "t".repeat(1024 * 1024), sender: "s".repeat(1024 * 1024) } })
  const over = { chunked: [...Array.from({ length: 16 }, () => Buffer.alloc(16 * 1024, 0x20)), Buffer.from(" ")] }
  for (const { template, method } of routes) {
    const path = template.replace(/\{\w+\}/g, f.rule)
    const headers = isApproval(template) ? { cookie, origin: ORIGIN, csrf: CSRF } : { authorization: `Bearer ${f.feeder}` }
    if (method === "post") {
      for (const body of [nested(2200), nested(2200, "object"), "{\"text\":\"\\ud800\",\"scopes\":[\"sales\"]}"]) {
        out.push(() => send(`fixed POST ${path} ${body.slice(0, 40)}`, template, { method: "POST", path, headers: { ...headers, "content-type": "application/json" }, body }))
      }
      if (template !== "/v1/sources") out.push(() => send(`fixed chunked POST ${path}`, template, { method: "POST", path, headers: { ...headers, "content-type": "application/json" }, body: over }))
    }
    if (template.includes("{")) {
      for (const bad of ["%ZZ", "%", "%FF%FE", "%ED%A0%80", "%C0%AE", "a".repeat(101)]) {
        const p = template.replace(/\{\w+\}/g, bad)
        out.push(() => send(`fixed ${method.toUpperCase()} ${p.slice(0, 60)}`, template, { method: method.toUpperCase(), path: p, headers, ...(method === "post" ? { body: "{}" } : {}) }))
      }
    }
  }
  out.push(() => send("fixed 1 MB title and sender", "/v1/sources", { method: "POST", path: "/v1/sources", headers: { authorization: `Bearer ${f.feeder}`, "content-type": "application/json" }, body: bigTitle }))
  out.push(() => send("fixed chunked 10 MiB + 1 on /v1/sources", "/v1/sources", { method: "POST", path: "/v1/sources", headers: { authorization: `Bearer ${f.feeder}`, "content-type": "application/json" }, body: { chunked: [...Array.from({ length: 10 }, () => Buffer.alloc(1024 * 1024, 0x20)), Buffer.from(" ")] } }))
  return out
}

// ------------------------------------------------------------------------------------------
// MCP

const MCP_HEADERS = { authorization: `Bearer ${MCP_TOKEN}` }

/** Checks one tool answer of the SDK client. */
const checkTool = (what: string, r: CallToolResult) => {
  answered++
  const first = r.content[0]
  const text = first !== undefined && first.type === "text" ? first.text : ""
  if (r.isError !== true) {
    count("mcp ok")
    return
  }
  count("mcp isError")
  // the SDK's own input check answers text (deviation D45)
  if (/^(MCP error -?\d+: )?Input validation error/.test(text)) return
  // the code is in structuredContent (a plain ErrorBody, or a graph refusal framed like a result)
  const structured = r.structuredContent as { error?: unknown } | undefined
  let body: unknown = structured ?? null
  if (body === null) {
    try {
      body = JSON.parse(text) as unknown
    } catch {
      return fail(what, `isError text that is neither an ErrorBody nor the SDK's input check: ${text.slice(0, 160)}`)
    }
  }
  const code = (body as { error?: unknown } | null)?.error
  if (typeof code !== "string") return fail(what, `isError JSON without a code: ${text.slice(0, 120)}`)
  if (code === "internal") return fail(what, `internal: ${text.slice(0, 120)}`)
  maxErrorBytes = Math.max(maxErrorBytes, Buffer.byteLength(text))
  if (Buffer.byteLength(text) > MAX_ERROR_BYTES) fail(what, `tool error of ${String(Buffer.byteLength(text))} bytes`)
}

const mcpRequests = async (n: number): Promise<{ tasks: Array<() => Promise<void>>; client: Client; tools: number }> => {
  const client = new Client({ name: "groundnote-fuzz", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${f.url}/mcp`), { requestInit: { headers: MCP_HEADERS } }))
  const { tools } = await client.listTools()
  const hints: Hints = {
    scope: fc.constantFrom("sales", "ops"),
    scopes: fc.constantFrom(["sales"], ["sales", "ops"]),
    ref: fc.constantFrom(`rule/${f.rule}`, `rule/${f.rule}@1`, "rule/sales-9999", "entity/sales-e0001"),
    search_id: fc.constant(searchId),
    text: fc.constantFrom("Lieferzeit", "Hakenleisten"),
    id: fc.constantFrom("sales-e0001", "ops-e0001")
  }
  const rawShare = Math.floor(n * 0.15)
  const perTool = Math.ceil((n - rawShare) / tools.length)
  const tasks: Array<() => Promise<void>> = []
  for (const tool of tools) {
    const schema = tool.inputSchema as JsonSchema
    const samples = fc.sample(bodyOf(schema, schema, hints), { numRuns: perTool, seed: SEED + tool.name.length * 7919 })
    for (const b of samples) {
      tasks.push(async () => {
        generated++
        const value = "json" in b ? b.json : b.text
        const args = typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { value }
        const what = `tool ${tool.name} ${JSON.stringify(args)?.slice(0, 200) ?? ""}`
        try {
          checkTool(what, (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult)
        } catch (e) {
          answered++
          if (e instanceof McpError && e.code !== -32603) {
            count(`mcp error ${String(e.code)}`)
            return
          }
          // the door refused the HTTP request itself (413, a body nested too deeply): its ErrorBody
          const door = e instanceof Error ? /Error POSTing to endpoint: (\{.*\})$/s.exec(e.message) : null
          if (door !== null) {
            const code = (JSON.parse(door[1] ?? "{}") as { error?: unknown }).error
            if (typeof code === "string" && code !== "internal") {
              count(`mcp door ${code}`)
              return
            }
          }
          count("mcp thrown")
          fail(what, `thrown: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`)
        }
      })
    }
  }
  // raw JSON-RPC to the door: junk, batches, unknown methods, broken params
  const rpc = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.record({ jsonrpc: fc.constantFrom("2.0", "1.0", 2), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.constantFrom("tools/call", "tools/list", "initialize", "prompts/get", "resources/list", "x"), params: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] }),
    fc.array(fc.record({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: fc.constant("tools/call"), params: fc.record({ name: fc.constantFrom(...tools.map((t) => t.name)), arguments: fc.jsonValue({ maxDepth: 3 }) }) }), { maxLength: 5 })
  )
  for (const body of fc.sample(rpc, { numRuns: rawShare, seed: SEED + 1 })) {
    tasks.push(async () => {
      generated++
      const payload = JSON.stringify(body) ?? "null"
      const what = `raw /mcp ${payload.slice(0, 200)}`
      try {
        const a = await raw(f.url, { method: "POST", path: "/mcp", headers: { ...MCP_HEADERS, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: payload, timeoutMs: 60_000 })
        answered++
        count(`mcp raw ${String(a.status)}`)
        if (a.status >= 500) fail(what, `status ${String(a.status)}: ${a.text.slice(0, 120)}`)
        else if (a.status !== 202 && jsonOf(a) === null) fail(what, `${String(a.status)} without JSON: ${a.text.slice(0, 120)}`)
      } catch (e) {
        if (e instanceof Dropped) {
          count("dropped")
          fail(what, e.message)
        } else throw e
      }
    })
  }
  return { tasks, client, tools: tools.length }
}

describe("fuzz: inputs from the request schemas", () => {
  it(`≥ ${String(RUNS)} generated inputs over every /v1 route and MCP tool: no 500, no dropped connection, every refusal an ErrorBody`, async () => {
    const started = Date.now()
    const spec = jsonOf(await raw(f.url, { method: "GET", path: "/openapi.json" })) as { paths: Record<string, Record<string, Record<string, unknown>>> }
    const routes: Array<{ template: string; method: string; op: Record<string, unknown> }> = []
    for (const [template, methods] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(methods)) routes.push({ template, method, op })
    }
    expect(routes.length).toBeGreaterThanOrEqual(26)
    const v1Runs = Math.ceil((RUNS * (1 - MCP_SHARE)) / routes.length)
    const v1 = routes.flatMap((r) => routeRequests(r.template, r.method, r.op, spec as unknown as JsonSchema, v1Runs))
    const fixed = fixedRequests(routes)
    const mcp = await mcpRequests(Math.ceil(RUNS * MCP_SHARE))
    // interleave, so writes of one route meet reads of another
    const all = [...v1, ...mcp.tasks]
    const shuffled = fc.sample(fc.shuffledSubarray(all.map((_, i) => i), { minLength: all.length, maxLength: all.length }), { numRuns: 1, seed: SEED })[0] ?? []
    await pool([...fixed, ...shuffled.map((i) => all[i] as () => Promise<void>)])
    await mcp.client.close()

    // the process is alive and answers
    const health = await raw(f.url, { method: "GET", path: "/healthz" })
    expect(health.status).toBe(200)
    const status = await raw(f.url, { method: "GET", path: "/v1/status", headers: { authorization: `Bearer ${f.feeder}` } })
    expect(status.status).toBe(200)

    const seconds = (Date.now() - started) / 1000
    const internals = logs.lines.filter((l) => l.message === "internal error" || l.level === "ERROR" || l.level === "FATAL")
    console.log(`fuzz: seed ${String(SEED)}, ${String(generated)} generated inputs (${String(v1.length)} over ${String(routes.length)} routes of /v1, ${String(mcp.tasks.length)} over ${String(mcp.tools)} MCP tools and raw JSON-RPC) + ${String(fixed.length)} fixed cases, ${String(answered)} answered in ${seconds.toFixed(1)} s; largest error body ${String(maxErrorBytes)} bytes; error log lines ${String(internals.length)}; answers ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
    if (failures.length > 0) console.log(`fuzz failures (seed ${String(SEED)}):\n${failures.slice(0, 20).map((x) => `${x.what}\n  → ${x.why}`).join("\n")}`)
    expect(generated).toBeGreaterThanOrEqual(RUNS)
    expect(statuses.get("dropped") ?? 0).toBe(0)
    expect(statuses.get("500") ?? 0).toBe(0)
    expect(failures).toEqual([])
    expect(internals.map((l) => `${l.message} ${JSON.stringify(l.annotations).slice(0, 200)}`)).toEqual([])
  }, 600_000)
})
