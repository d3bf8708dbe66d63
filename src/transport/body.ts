/**
 * Reading a request: the body (with the route's size limit, JSON or form-encoded) and the query,
 * for every listener and channel (the public listener, /mcp, the approval pages, the ops socket).
 */
import { createHash } from "node:crypto"
import type { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import { PayloadTooLarge, ValidationFailed } from "../contracts/errors.js"

export const KIB = 1024
export const MIB = 1024 * 1024
/** Body limits (architecture.md §6): 10 MiB on /v1/sources, 256 KiB elsewhere. */
export const SOURCES_BODY_LIMIT = 10 * MIB
export const DEFAULT_BODY_LIMIT = 256 * KIB
/**
 * How deeply a JSON body may nest arrays and objects. No request schema nests deeper than a
 * handful of levels; a deeper body is refused before it is parsed or decoded (a body of thousands
 * of nested arrays would otherwise exhaust the stack of the recursive decoders).
 */
export const JSON_DEPTH_LIMIT = 64
export const NESTING_MESSAGE = `is nested more than ${JSON_DEPTH_LIMIT} levels deep`

/**
 * The deepest nesting of arrays and objects in a JSON text, counted without parsing (strings
 * skipped, escapes honoured); stops counting once `limit` is passed.
 */
export const jsonDepth = (text: string, limit = JSON_DEPTH_LIMIT): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      depth++
      if (depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return max
}

export interface Body {
  /** parsed JSON, a form record, or undefined without a body */
  readonly value: unknown
  /** the raw text, for input_sha256; never stored or logged */
  readonly text: string | null
  readonly form: boolean
}

export const contentLengthTooLarge = (request: HttpServerRequest.HttpServerRequest, limit: number): boolean => {
  const len = Number(request.headers["content-length"] ?? "0")
  return Number.isFinite(len) && len > limit
}

const invalid = (path: string, message: string) =>
  new ValidationFailed({ message: `request is invalid: ${path}: ${message}`, issues: [{ path, message }] })

/**
 * Reads at most `limit` bytes of a request body, declared or chunked; a larger body is refused
 * with PayloadTooLarge and the rest is drained, so the client can finish sending and read the
 * answer (never a dropped connection).
 */
export const readBytes = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<Buffer, PayloadTooLarge | ValidationFailed> =>
  Effect.async<Buffer, PayloadTooLarge | ValidationFailed>((resume) => {
    const req = NodeHttpServerRequest.toIncomingMessage(request)
    const tooLarge = () => new PayloadTooLarge({ message: `the body is larger than ${limit} bytes` })
    if (contentLengthTooLarge(request, limit)) {
      req.resume()
      resume(Effect.fail(tooLarge()))
      return
    }
    const chunks: Array<Buffer> = []
    let bytes = 0
    let done = false
    const finish = (result: Effect.Effect<Buffer, PayloadTooLarge | ValidationFailed>) => {
      if (done) return
      done = true
      resume(result)
    }
    req.on("data", (chunk: Buffer) => {
      if (done) return // over the limit: keep discarding
      bytes += chunk.length
      if (bytes > limit) {
        chunks.length = 0
        finish(Effect.fail(tooLarge()))
        return
      }
      chunks.push(chunk)
    })
    req.once("end", () => finish(Effect.succeed(Buffer.concat(chunks))))
    req.once("error", () => finish(Effect.fail(invalid("(body)", "could not be read"))))
    if (req.readableEnded) finish(Effect.succeed(Buffer.concat(chunks)))
  })

/** Reads and parses the body within `limit` bytes: JSON, or a form (application/x-www-form-urlencoded). */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Body, PayloadTooLarge | ValidationFailed> =>
  Effect.gen(function*() {
    const bytes = yield* readBytes(request, limit)
    let text: string
    try {
      // ill-formed UTF-8 is refused, never replaced: what is stored is what was sent
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      return yield* invalid("(body)", "is not valid UTF-8")
    }
    if (text.length === 0) return { value: undefined, text: null, form: false }
    const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""
    if (type === "application/x-www-form-urlencoded") {
      const form: Record<string, string> = {}
      for (const [k, v] of new URLSearchParams(text)) {
        if (k in form) return yield* invalid(k, "given more than once")
        form[k] = v
      }
      return { value: form, text, form: true }
    }
    if (type !== "application/json" && type !== "") return yield* invalid("(body)", "send application/json")
    if (jsonDepth(text) > JSON_DEPTH_LIMIT) return yield* invalid("(body)", NESTING_MESSAGE)
    try {
      return { value: JSON.parse(text) as unknown, text, form: false }
    } catch {
      return yield* invalid("(body)", "is not valid JSON")
    }
  })

/** Is this refusal of readBody the one of a body nested too deeply? */
export const isTooDeep = (e: ValidationFailed): boolean => e.issues?.[0]?.message === NESTING_MESSAGE

/** The query as a record; a parameter given twice is refused. */
export const readQuery = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Record<string, string>, ValidationFailed> =>
  Effect.suspend(() => {
    const params = new URL(request.url, "http://localhost").searchParams
    const out: Record<string, string> = {}
    for (const [k, v] of params) {
      if (k in out) return Effect.fail(invalid(k, "given more than once"))
      out[k] = v
    }
    return Effect.succeed(out)
  })


export const sha256Text = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")
