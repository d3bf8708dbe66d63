/**
 * A rerank provider stand-in on 127.0.0.1 speaking the common wire format
 * (POST /rerank {model, query, documents, top_n} → {results: [{index, relevance_score}]}).
 * It knows nothing about any eval: in `ok` mode a document's score is the share of the query's
 * words it contains. Other modes answer slowly, with a status, or with a given body. Every
 * request is recorded (path, headers, parsed body) so tests can prove that none was sent.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export type ProviderMode =
  | { readonly kind: "ok" }
  | { readonly kind: "slow"; readonly ms: number }
  | { readonly kind: "status"; readonly status: number }
  | { readonly kind: "body"; readonly body: string }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: { model?: unknown; query?: unknown; documents?: unknown; top_n?: unknown }
}

export interface RerankServer {
  readonly url: string
  readonly requests: Array<RecordedRequest>
  mode: ProviderMode
  /** runs when a request arrives, before the answer (e.g. to look at ops.sqlite at that moment) */
  onRequest: (() => Promise<void>) | null
  readonly close: () => Promise<void>
}

const words = (s: string) => new Set(s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0))

export const overlapScores = (query: string, documents: ReadonlyArray<string>) => {
  const q = words(query)
  return documents
    .map((d, index) => {
      const w = words(d)
      const hits = [...q].filter((x) => w.has(x)).length
      return { index, relevance_score: q.size === 0 ? 0 : hits / q.size }
    })
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
}

export const startRerankServer = async (): Promise<RerankServer> => {
  const requests: Array<RecordedRequest> = []
  const state: { mode: ProviderMode; onRequest: (() => Promise<void>) | null } = { mode: { kind: "ok" }, onRequest: null }
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      void (async () => {
        let body: RecordedRequest["body"]
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest["body"]
        } catch {
          body = {}
        }
        requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body })
        if (state.onRequest !== null) await state.onRequest()
        const mode = state.mode
        if (mode.kind === "slow") await new Promise((r) => setTimeout(r, mode.ms))
        if (mode.kind === "status") {
          res.writeHead(mode.status, { "content-type": "application/json" }).end(JSON.stringify({ error: "stand-in failure" }))
          return
        }
        if (mode.kind === "body") {
          res.writeHead(200, { "content-type": "application/json" }).end(mode.body)
          return
        }
        const docs = Array.isArray(body.documents) ? body.documents.map(String) : []
        const results = overlapScores(String(body.query ?? ""), docs).slice(0, Number(body.top_n ?? docs.length))
        if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ model: body.model, results }))
      })()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const handle: RerankServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    get mode() { return state.mode },
    set mode(m) { state.mode = m },
    get onRequest() { return state.onRequest },
    set onRequest(f) { state.onRequest = f },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
  return handle
}
