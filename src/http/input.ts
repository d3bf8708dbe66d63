/**
 * Reading a request: the body (with the route's size limit, JSON or form-encoded), the query
 * and the path parameters, and strict decoding into the contract's schemas (400
 * validation-failed naming every path).
 */
import { createHash } from "node:crypto"
import { HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Effect, Option, type ParseResult, Schema } from "effect"
import { ValidationFailed, validationFailed } from "../contracts/errors.js"
import { STRICT } from "../contracts/schemas.js"

export const KIB = 1024
export const MIB = 1024 * 1024
/** Body limits (architecture.md §6): 10 MiB on /v1/sources, 256 KiB elsewhere. */
export const SOURCES_BODY_LIMIT = 10 * MIB
export const DEFAULT_BODY_LIMIT = 256 * KIB

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", { message: Schema.String }) {
  get code(): "payload-too-large" {
    return "payload-too-large"
  }
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

/** Reads and parses the body within `limit` bytes. */
export const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Body, PayloadTooLarge | ValidationFailed> =>
  Effect.gen(function*() {
    const tooLarge = new PayloadTooLarge({ message: `the body is larger than ${limit} bytes` })
    if (contentLengthTooLarge(request, limit)) return yield* tooLarge
    const bytes = yield* request.arrayBuffer.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
      Effect.mapError((e) => (String((e as { cause?: unknown }).cause).includes("maxBytes") ? tooLarge : invalid("(body)", "could not be read")))
    )
    if (bytes.byteLength > limit) return yield* tooLarge
    const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes)
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
    try {
      return { value: JSON.parse(text) as unknown, text, form: false }
    } catch {
      return yield* invalid("(body)", "is not valid JSON")
    }
  })

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

export const decodeStrict = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string): Effect.Effect<A, ValidationFailed> =>
  Schema.decodeUnknown(schema, STRICT)(value).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, what)))

export const sha256Text = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")
