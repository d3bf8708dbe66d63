/**
 * Reliability support: a real service on a free loopback port (the public listener over
 * ServicesLive on a temp data dir) with the grants a hostile client would hold — a service bearer
 * that reads and proposes in sales, the dev MCP person, the dev approval person with decide — a
 * stored source and a proposed rule; and a raw HTTP client (node:http) that sees everything the
 * server does: the status, the headers, the body, and whether the connection was dropped.
 */
import { request as httpRequest } from "node:http"
import { Effect, Redacted } from "effect"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import type { captureLogs } from "../support/logs.js"
import { startServer, type TestServer } from "../support/server.js"

export const APPROVAL_TOKEN = "a".repeat(40)
export const SESSION_SECRET = "s".repeat(40)
export const MCP_TOKEN = "m".repeat(40)
export const ORIGIN = "http://127.0.0.1:8787"

export interface Fixture {
  readonly server: TestServer
  readonly url: string
  /** a service bearer with read and propose on sales */
  readonly feeder: string
  /** a rule id of sales (proposed) */
  readonly rule: string
  readonly dataDir: string
  readonly close: () => Promise<void>
}

export const startFixture = async (options: { readonly logs?: ReturnType<typeof captureLogs> } = {}): Promise<Fixture> => {
  const t = tempDir("gn-rel-")
  const base = testConfig(t.dir, {
    scopes: [{ name: "sales", providers_allowed: [] }, { name: "ops", providers_allowed: [] }],
    // a hostile client sends thousands of requests a minute: the limits must not be what answers
    limits: { requests_per_minute: 100_000, decisions_per_minute: 100_000, login_attempts_per_minute: 100_000, exports_per_hour: 10_000 }
  })
  const config = { ...base, env: { ...base.env, devApprovalToken: Redacted.make(APPROVAL_TOKEN), sessionSecret: Redacted.make(SESSION_SECRET) } }
  const server = await startServer(config, options.logs === undefined ? {} : { logs: options.logs })
  const seeded = await server.run(Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    const ops = yield* OpsStore
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops"], rights: ["read", "propose", "decide"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    yield* storeSource(mailSource(), feeder.id)
    const created = yield* propose(mailProposal(), { grantId: feeder.id, channel: "api" as const })
    return { feeder: "token" in feeder ? feeder.token : "", rule: created.ref.replace(/^rule\/|@\d+$/g, "") }
  }))
  return {
    server, url: server.url, dataDir: t.dir, ...seeded,
    close: async () => {
      await server.close()
      t.cleanup()
    }
  }
}

export interface RawAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
  readonly bytes: number
}

export class Dropped extends Error {}

export interface RawRequest {
  readonly method: string
  /** sent as written: no encoding or normalisation on the way */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** a body, or chunks written one by one with Transfer-Encoding: chunked */
  readonly body?: string | Buffer | { readonly chunked: ReadonlyArray<Buffer | string> }
  readonly timeoutMs?: number
}

/**
 * One request over a fresh connection; rejects with Dropped when the connection ends without an
 * answer (a reset, a close, or no answer within the timeout).
 */
export const raw = (base: string, r: RawRequest): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const url = new URL(base)
    const chunked = typeof r.body === "object" && !Buffer.isBuffer(r.body) ? r.body.chunked : null
    const headers: Record<string, string> = { connection: "close", ...(r.headers ?? {}) }
    if (chunked !== null) headers["transfer-encoding"] = "chunked"
    else if (r.body !== undefined) headers["content-length"] = String(Buffer.byteLength(r.body as string | Buffer))
    const req = httpRequest({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent: false })
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Dropped(`${r.method} ${r.path.slice(0, 80)}: no answer within ${String(r.timeoutMs ?? 30_000)} ms`))
    }, r.timeoutMs ?? 30_000)
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        clearTimeout(timer)
        const buf = Buffer.concat(chunks)
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: buf.toString("utf8"), bytes: buf.length })
      })
      res.on("error", (e) => {
        clearTimeout(timer)
        reject(new Dropped(`${r.method} ${r.path.slice(0, 80)}: answer cut: ${e.message}`))
      })
    })
    req.on("error", (e) => {
      clearTimeout(timer)
      reject(new Dropped(`${r.method} ${r.path.slice(0, 80)}: ${e.message}`))
    })
    // a server that answers early and closes may make writing fail: the answer still counts
    const write = (c: Buffer | string) => { if (!req.destroyed) req.write(c) }
    if (chunked !== null) for (const c of chunked) write(c)
    else if (r.body !== undefined) write(r.body as string | Buffer)
    req.end()
  })

/** The answer parsed as JSON, or null when it is not JSON. */
export const jsonOf = (a: RawAnswer): unknown => {
  try {
    return JSON.parse(a.text) as unknown
  } catch {
    return null
  }
}

const ERROR_CODE = /^[a-z][a-z-]*$/

/** Is this answer an ErrorBody: JSON content type and {error: <code>, message?: string, …}? */
export const isErrorBody = (a: RawAnswer): boolean => {
  const type = String(a.headers["content-type"] ?? "")
  if (!type.startsWith("application/json")) return false
  const body = jsonOf(a)
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false
  const b = body as { error?: unknown; message?: unknown; issues?: unknown }
  return typeof b.error === "string" && ERROR_CODE.test(b.error) &&
    (b.message === undefined || typeof b.message === "string") && (b.issues === undefined || Array.isArray(b.issues))
}

/** A JSON value nested `depth` arrays deep (or objects, {"a": …}). */
export const nested = (depth: number, kind: "array" | "object" = "array"): string =>
  kind === "array" ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`

/** The session cookie of the dev approval person (a real login). */
export const approvalLogin = async (base: string): Promise<string> => {
  const a = await raw(base, {
    method: "POST", path: "/approval/login", body: new URLSearchParams({ token: APPROVAL_TOKEN }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN }
  })
  if (a.status !== 303) throw new Error(`login: ${String(a.status)}`)
  const cookie = a.headers["set-cookie"]
  return (Array.isArray(cookie) ? cookie[0] ?? "" : String(cookie ?? "")).split(";")[0] ?? ""
}
