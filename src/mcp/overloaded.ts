/**
 * POST /mcp past the admission gate's capacity (src/transport/admission.ts): the answer in the
 * protocol instead of an HTTP 503 that an MCP client can only throw. Each tools/call of the POST
 * gets an isError tool result {error: "overloaded", message, retry_after} like every other
 * refusal; each other request a JSON-RPC error carrying the same object as its data; a POST of
 * notifications only is 202 (a stateless server does nothing with them). Nothing of the POST
 * runs: no credential is checked, no grant read, no tool called. A body that is not JSON-RPC gets
 * the plain 503 `overloaded`.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { DEFAULT_BODY_LIMIT, readBody } from "../transport/body.js"
import { overloadedResult, type OverloadedBody } from "./result.js"

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

/** A JSON-RPC request (a method and an id); notifications and responses get no answer. */
const isRequest = (m: unknown): m is { id: string | number; method: string } =>
  isObject(m) && typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")

/** The answer to one request of an overloaded POST. */
const answerOf = (m: { id: string | number; method: string }, body: OverloadedBody) =>
  m.method === "tools/call"
    ? { jsonrpc: "2.0", id: m.id, result: overloadedResult(body) }
    : { jsonrpc: "2.0", id: m.id, error: { code: -32000, message: body.message, data: body } }

export const mcpOverloaded = (
  retryAfterSeconds: number,
  message: string,
  plain: HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const read = yield* Effect.either(readBody(request, DEFAULT_BODY_LIMIT))
    if (read._tag === "Left" || read.right.form || read.right.value === undefined) return plain
    const value = read.right.value
    const messages: ReadonlyArray<unknown> = Array.isArray(value) ? value : [value]
    if (messages.length === 0 || !messages.every((m) => isObject(m) && m.jsonrpc === "2.0")) return plain
    const body: OverloadedBody = { error: "overloaded", message, retry_after: retryAfterSeconds }
    const answers = messages.filter(isRequest).map((m) => answerOf(m, body))
    const headers = { "retry-after": String(retryAfterSeconds) }
    if (answers.length === 0) return HttpServerResponse.empty({ status: 202, headers })
    return HttpServerResponse.unsafeJson(Array.isArray(value) ? answers : answers[0], { status: 200, headers })
  }).pipe(Effect.catchAllDefect(() => Effect.succeed(plain)))
