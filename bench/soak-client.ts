/**
 * The client side of `npm run soak` (bench/soak.ts), in a process of its own: C clients of mixed
 * load for `minutes` — POST /v1/search, POST /v1/proposals, confirmations through
 * POST /v1/rules/:id/decision, search_rules over MCP (the official SDK client), the approval
 * pages — and one report per minute to the parent (process.send): per kind the answers, their
 * latency percentiles, 503 overloaded and other failures. A 503 is waited out for its Retry-After.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"

export interface SoakJob {
  readonly url: string
  readonly token: string
  readonly mcpToken: string
  readonly cookie: string
  readonly csrf: string
  readonly origin: string
  readonly scope: string
  readonly clients: number
  readonly minutes: number
  readonly queries: ReadonlyArray<string>
  readonly quotes: ReadonlyArray<string>
  readonly sourceId: string
}

export interface KindFigures {
  readonly n: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly overloaded: number
  readonly failed: number
}

export interface MinuteReport {
  readonly minute: number
  readonly kinds: Readonly<Record<string, KindFigures>>
}

const KINDS = ["search", "propose", "decide", "mcp", "page"] as const
type Kind = typeof KINDS[number]
/** of every 20 actions: 10 searches, 3 proposals, 2 decisions, 3 MCP searches, 2 approval pages */
const MIX: ReadonlyArray<Kind> = [
  ..."s".repeat(10).split("").map(() => "search" as const),
  "propose", "propose", "propose", "decide", "decide", "mcp", "mcp", "mcp", "page", "page"
]

const pct = (xs: Array<number>, q: number) => {
  if (xs.length === 0) return 0
  xs.sort((a, b) => a - b)
  return xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const runSoak = async (job: SoakJob, report: (m: MinuteReport) => void): Promise<void> => {
  const latencies = new Map<Kind, Array<number>>(KINDS.map((k) => [k, []]))
  const overloaded = new Map<Kind, number>(KINDS.map((k) => [k, 0]))
  const failed = new Map<Kind, number>(KINDS.map((k) => [k, 0]))
  const proposed: Array<string> = []
  const confirmed: Array<string> = []
  let seq = 0
  const end = Date.now() + job.minutes * 60_000
  const flush = (minute: number) => {
    const kinds: Record<string, KindFigures> = {}
    for (const k of KINDS) {
      const xs = latencies.get(k) ?? []
      kinds[k] = { n: xs.length, p50: pct(xs, 0.5), p95: pct(xs, 0.95), p99: pct(xs, 0.99), overloaded: overloaded.get(k) ?? 0, failed: failed.get(k) ?? 0 }
      latencies.set(k, [])
      overloaded.set(k, 0)
      failed.set(k, 0)
    }
    report({ minute, kinds })
  }
  let minute = 1
  const timer = setInterval(() => flush(minute++), 60_000)

  const json = { "content-type": "application/json" }
  const auth = { authorization: `Bearer ${job.token}` }
  /** one HTTP call; a 503 is waited out; true when answered as expected */
  const http = async (kind: Kind, path: string, init: RequestInit, ok: (status: number) => boolean): Promise<string | null> => {
    const t = performance.now()
    try {
      const res = await fetch(`${job.url}${path}`, { ...init, redirect: "manual" })
      const text = await res.text()
      if (res.status === 503) {
        overloaded.set(kind, (overloaded.get(kind) ?? 0) + 1)
        await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000)
        return null
      }
      latencies.get(kind)?.push(performance.now() - t)
      if (!ok(res.status)) {
        failed.set(kind, (failed.get(kind) ?? 0) + 1)
        return null
      }
      return text
    } catch {
      failed.set(kind, (failed.get(kind) ?? 0) + 1)
      return null
    }
  }

  const client = async (c: number) => {
    const mcp = new Client({ name: "groundnote-soak", version: "1.0.0" })
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${job.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${job.mcpToken}` } } }))
    let i = c
    while (Date.now() < end) {
      const kind = MIX[i++ % MIX.length] ?? "search"
      const query = job.queries[(i * 7 + c) % job.queries.length] ?? "Lieferzeit"
      switch (kind) {
        case "search":
          await http(kind, "/v1/search", { method: "POST", headers: { ...auth, ...json }, body: JSON.stringify({ scopes: [job.scope], text: query }) }, (s) => s === 200)
          break
        case "propose": {
          const n = seq++
          const body = {
            scope: job.scope, kind: "rule", statement: `Soak rule ${n} ${c}: ${query} is checked before the order ${n} leaves`,
            source: { kind: "mail", id: job.sourceId, quote: job.quotes[n % job.quotes.length] ?? "", link: null },
            said_at: "2026-03-12T09:15:00Z", speaker: null, relations: [], keywords: [`soak${n}`], valid_from: "2026-03-12", supersedes: null
          }
          const text = await http(kind, "/v1/proposals", { method: "POST", headers: { ...auth, ...json }, body: JSON.stringify(body) }, (s) => s === 201)
          const id = text === null ? undefined : /^rule\/(.+)@1$/.exec((JSON.parse(text) as { ref: string }).ref)?.[1]
          if (id !== undefined) proposed.push(id)
          break
        }
        case "decide": {
          const id = proposed.shift()
          if (id === undefined) break
          const text = await http(kind, `/v1/rules/${id}/decision`, {
            method: "POST", headers: { cookie: job.cookie, csrf: job.csrf, origin: job.origin, ...json }, body: JSON.stringify({ decision: "confirm", version: 1 })
          }, (s) => s === 200)
          if (text !== null) confirmed.push(id)
          break
        }
        case "mcp": {
          const t = performance.now()
          try {
            const r = await mcp.callTool({ name: "search_rules", arguments: { scopes: [job.scope], text: query } })
            latencies.get(kind)?.push(performance.now() - t)
            if (r.isError === true) {
              const text = JSON.stringify(r.content)
              if (text.includes("overloaded")) overloaded.set(kind, (overloaded.get(kind) ?? 0) + 1)
              else failed.set(kind, (failed.get(kind) ?? 0) + 1)
            }
          } catch (e) {
            // the SDK reports an HTTP 503 as an error of the call
            if (String(e).includes("503")) {
              overloaded.set(kind, (overloaded.get(kind) ?? 0) + 1)
              await sleep(1000)
            } else failed.set(kind, (failed.get(kind) ?? 0) + 1)
          }
          break
        }
        case "page": {
          const id = confirmed[(i * 13) % Math.max(1, confirmed.length)]
          const path = id === undefined || i % 2 === 0 ? "/approval" : `/approval/rules/${id}`
          await http(kind, path, { method: "GET", headers: { cookie: job.cookie } }, (s) => s === 200)
          break
        }
      }
    }
    await mcp.close()
  }

  await Promise.all(Array.from({ length: job.clients }, (_, c) => client(c)))
  clearInterval(timer)
  flush(minute)
}

const arg = process.argv[2]
if (arg !== undefined && process.send !== undefined) {
  runSoak(JSON.parse(arg) as SoakJob, (m) => process.send?.(m)).then(
    () => process.send?.({ done: true }, () => process.exit(0)),
    (e: unknown) => {
      console.error(e)
      process.exit(1)
    }
  )
}
