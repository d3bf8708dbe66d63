/**
 * A search as the read pool hands it back: the SearchResponse already rendered as the
 * UTF-8 bytes of its JSON text where the search ran, the head of every bundle with its scope, and
 * each scope's search_log fields. A worker sends this (the bytes, moved to the main thread with
 * their buffer, and a few small arrays) instead of a structured clone of the whole answer — cloning
 * ~20 KB of bundles cost ~1.3 ms of the worker and the main thread per search, JSON.stringify
 * ~0.2 ms — and the main thread writes the bytes as the body unchanged: it neither copies the text
 * nor encodes it (a text with one character past Latin-1, such as the citation line's dash, is
 * two bytes a character on the heap: ~63 KB copied and ~0.07 ms encoding per answer at 10k rules).
 * A bundle's UTF-8 is kept with the bundle object (a held answer's bundles are the same objects in
 * every answer that shows them: src/search/search.ts), so a held answer is not rendered again, and
 * the body is written into one buffer piece by piece, never built as one text first (that text,
 * its join and its encoding were ~80 KB of garbage per answer on the main thread); the bytes are
 * exactly the UTF-8 of JSON.stringify's text of the whole response.
 */
import type { Bundle, SearchResponse } from "../domain/search-schemas.js"
import type { SearchOutcome } from "../search/search.js"

export interface RenderedSearch {
  /** JSON.stringify of the SearchResponse in UTF-8: the body of POST /v1/search as it is sent */
  readonly body: Uint8Array
  /** the byte where the fields after stages begin (query, bundles, abstained): what an answer held by the pool keeps (held.ts) */
  readonly tailAt: number
  /** the response's stages */
  readonly stages: SearchResponse["stages"]
  /** the head of each bundle of the answer, in its order */
  readonly heads: ReadonlyArray<{ readonly scope: string; readonly ref: string }>
  /** per scope: what its search_log row records */
  readonly perScope: SearchOutcome["perScope"]
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Each bundle's JSON as UTF-8, kept with the bundle object: a held answer's bundles are copied as
 * bytes, never stringified or encoded again (the bytes take less room than the text too).
 */
const bundleBytes = new WeakMap<Bundle, Uint8Array>()
const bytesOfBundle = (b: Bundle): Uint8Array => {
  const known = bundleBytes.get(b)
  if (known !== undefined) return known
  const bytes = encoder.encode(JSON.stringify(b))
  bundleBytes.set(b, bytes)
  return bytes
}
const bundleText = (b: Bundle): string => decoder.decode(bytesOfBundle(b))

const fieldJson = (k: string, v: unknown): string =>
  `${JSON.stringify(k)}:${k === "bundles" ? `[${(v as ReadonlyArray<Bundle>).map(bundleText).join(",")}]` : JSON.stringify(v)}`

/** The fields a response's text begins with, up to the tail (held.ts composes them anew). */
export const HEAD_FIELDS = ["search_id", "scopes", "stages"] as const
export type ResponseHead = Pick<SearchResponse, (typeof HEAD_FIELDS)[number]>

/** The text of a response up to its tail: "{" and HEAD_FIELDS, in the order search() makes them. */
export const headJson = (head: ResponseHead): string => `{${HEAD_FIELDS.map((k) => fieldJson(k, head[k])).join(",")}`

const isHead = (k: string): boolean => (HEAD_FIELDS as ReadonlyArray<string>).includes(k)

/**
 * JSON.stringify(response) with each bundle's text as kept (response's fields are never
 * undefined), and where its tail (the fields after HEAD_FIELDS) begins.
 */
export const responseParts = (response: SearchResponse): { readonly json: string; readonly tailAt: number } => {
  const headText = headJson(response)
  const tail = Object.entries(response).filter(([k]) => !isHead(k))
  return { json: `${headText}${tail.map(([k, v]) => `,${fieldJson(k, v)}`).join("")}}`, tailAt: headText.length }
}

/** The UTF-8 of `text` (its own buffer, whole: a worker can move it to another thread). */
export const utf8 = (text: string): Uint8Array => encoder.encode(text)

/**
 * The body of a response (the bytes of responseParts' text) and the byte where its tail begins,
 * written piece by piece into one buffer of its own: the head and the small fields encoded, each
 * bundle's kept bytes copied; the whole text is never built.
 */
const bodyParts = (response: SearchResponse): { readonly body: Uint8Array; readonly tailAt: number } => {
  const parts: Array<Uint8Array> = [encoder.encode(headJson(response))]
  const tailAt = parts[0]?.length ?? 0
  let text = ""
  for (const [k, v] of Object.entries(response)) {
    if (isHead(k)) continue
    if (k !== "bundles") {
      text += `,${JSON.stringify(k)}:${JSON.stringify(v)}`
      continue
    }
    text += `,${JSON.stringify(k)}:[`
    ;(v as ReadonlyArray<Bundle>).forEach((b, i) => {
      parts.push(encoder.encode(i === 0 ? text : `${text},`))
      text = ""
      parts.push(bytesOfBundle(b))
    })
    text += "]"
  }
  parts.push(encoder.encode(`${text}}`))
  let size = 0
  for (const p of parts) size += p.length
  const body = new Uint8Array(size)
  let at = 0
  for (const p of parts) {
    body.set(p, at)
    at += p.length
  }
  return { body, tailAt }
}

export const renderSearch = (out: SearchOutcome): RenderedSearch => ({
  ...bodyParts(out.response),
  stages: out.response.stages,
  heads: out.response.bundles.map((b) => ({ scope: b.head.scope, ref: b.head.ref })),
  perScope: out.perScope
})
