/**
 * ErrorBody responses (architecture.md §6.6, gaps.md §4). A failure of our own storage or code
 * is 500 `internal` with nothing else in the body: never SQL text, paths, causes or stacks.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ERROR_STATUS, type ErrorBodyOut, type ErrorCode } from "../contracts/errors.js"

export const errorResponse = (
  code: ErrorCode,
  body: Omit<ErrorBodyOut, "error"> = {},
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson({ error: code, ...body }, { status: ERROR_STATUS[code], headers })

export const internalResponse = (): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson({ error: "internal" }, { status: 500 })

/** Logs an unexpected failure (the cause goes to the log, never to the client) and answers 500. */
export const internal = (what: string, cause: unknown) =>
  Effect.as(
    Effect.logError("internal error").pipe(Effect.annotateLogs({ where: what, cause: describeCause(cause) })),
    internalResponse()
  )

const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`.slice(0, 300)
  if (typeof cause === "object" && cause !== null && "_tag" in cause) return String((cause as { _tag: unknown })._tag)
  return "unknown"
}

/** A JSON answer with a status. */
export const jsonResponse = (status: number) => (body: unknown): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body, { status })
