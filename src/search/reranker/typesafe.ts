/**
 * The `typesafe` reranker provider over the common rerank wire format:
 *
 *   POST <base>/rerank   Authorization: Bearer $TYPESAFE_API_KEY
 *   { "model": "jev-1.14.0", "query": "…", "documents": ["…", …], "top_n": n }
 *   → 200 { "results": [{ "index": 0, "relevance_score": 0.93 }, …] }   (other fields ignored)
 *
 * The base URL comes from TYPESAFE_BASE_URL (default https://api.typesafe.ai/v1; docs/decisions.md,
 * gaps.md §11 Stages b and c): https, or http only to a loopback host, so the key never crosses a network in
 * clear. The key is Redacted until the header is built and never logged; nothing here logs.
 * timeout_ms aborts the request (AbortController) including the body read. An answer over
 * MAX_ANSWER_BYTES is malformed.
 */
import { Effect, Redacted } from "effect"
import type { RerankerProvider, RerankOutcome, RerankRequest } from "./provider.js"

export const TYPESAFE_BASE_URL_ENV = "TYPESAFE_BASE_URL"
export const TYPESAFE_DEFAULT_BASE_URL = "https://api.typesafe.ai/v1"
export const MAX_ANSWER_BYTES = 1_000_000

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"])

/** The base URL from the environment (no trailing slash), or why it cannot be used. */
export const typesafeBaseUrl = (env: Readonly<Record<string, string | undefined>>): { readonly url: string } | { readonly error: string } => {
  const raw = env[TYPESAFE_BASE_URL_ENV]?.trim() || TYPESAFE_DEFAULT_BASE_URL
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return { error: `${TYPESAFE_BASE_URL_ENV} is not a URL` }
  }
  if (u.username !== "" || u.password !== "") return { error: `${TYPESAFE_BASE_URL_ENV} must not carry credentials` }
  if (u.search !== "" || u.hash !== "") return { error: `${TYPESAFE_BASE_URL_ENV} must not carry a query or fragment` }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && LOOPBACK.has(u.hostname))) {
    return { error: `${TYPESAFE_BASE_URL_ENV} must be https (http only to 127.0.0.1, ::1 or localhost)` }
  }
  return { url: u.toString().replace(/\/+$/, "") }
}

export interface TypesafeOptions {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly model: string
  readonly timeoutMs: number
}

/** The results of a 2xx body, or why it is not the wire format. */
export const parseRerankAnswer = (text: string, documents: number): RerankOutcome => {
  const malformed = (detail: string): RerankOutcome => ({ _tag: "malformed", detail })
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return malformed("the answer is not JSON")
  }
  const results = (body as { results?: unknown } | null)?.results
  if (!Array.isArray(results)) return malformed("the answer has no results array")
  const seen = new Set<number>()
  const out: Array<{ index: number; score: number }> = []
  for (const r of results) {
    const { index, relevance_score: score } = (r ?? {}) as { index?: unknown; relevance_score?: unknown }
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= documents) return malformed("a result's index is not one of the documents")
    if (seen.has(index)) return malformed("a document is in the results twice")
    if (typeof score !== "number" || !Number.isFinite(score) || score < 0 || score > 1) return malformed("a relevance_score is not a number in [0, 1]")
    seen.add(index)
    out.push({ index, score })
  }
  return { _tag: "ok", results: out }
}

const readCapped = async (res: Response): Promise<string | null> => {
  const reader = res.body?.getReader()
  if (reader === undefined) return ""
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel()
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString("utf8")
}

export const makeTypesafeProvider = (o: TypesafeOptions): RerankerProvider => ({
  name: "typesafe",
  model: o.model,
  rerank: (request: RerankRequest) =>
    Effect.async<RerankOutcome>((resume) => {
      const controller = new AbortController()
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, o.timeoutMs)
      const call = async (): Promise<RerankOutcome> => {
        try {
          const res = await fetch(`${o.baseUrl}/rerank`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${Redacted.value(o.apiKey)}`,
              "content-type": "application/json",
              accept: "application/json"
            },
            body: JSON.stringify({ model: o.model, query: request.query, documents: request.documents, top_n: request.topN }),
            signal: controller.signal,
            redirect: "error"
          })
          if (res.status < 200 || res.status > 299) {
            await res.body?.cancel().catch(() => undefined)
            return { _tag: "http-error", status: res.status }
          }
          const text = await readCapped(res)
          if (text === null) return { _tag: "malformed", detail: `the answer is larger than ${MAX_ANSWER_BYTES} bytes` }
          return parseRerankAnswer(text, request.documents.length)
        } catch (e) {
          if (timedOut) return { _tag: "timeout", ms: o.timeoutMs }
          const cause = (e as { cause?: { code?: unknown } } | null)?.cause?.code
          return { _tag: "unreachable", detail: typeof cause === "string" ? cause : e instanceof Error ? e.name : "fetch failed" }
        } finally {
          clearTimeout(timer)
        }
      }
      void call().then((outcome) => resume(Effect.succeed(outcome)))
      return Effect.sync(() => {
        clearTimeout(timer)
        controller.abort()
      })
    })
})
