/**
 * What every tool of one POST /mcp shares: the authenticated caller (channel mcp), the HTTP
 * request, the configuration and the runtime the domain effects run in. callTool runs one tool
 * call through steps 2–6 of the scope-check pipeline (runCall) and turns the outcome or refusal
 * into a tool result.
 */
import type { HttpServerRequest } from "@effect/platform"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, type Runtime } from "effect"
import { Runtime as Rt } from "effect"
import { type Caller, type CallSpec, type Outcome, runCall } from "../../auth/scope-check.js"
import type { AppConfig, AppConfigShape } from "../../config/config.js"
import type { OpsStore } from "../../db/ops-store.js"
import type { ScopeStore } from "../../db/scope-store.js"
import type { LexicalIndex } from "../../search/lexical/index.js"
import { errorResult, type ToolKind } from "../result.js"

export type McpServices = AppConfig | ScopeStore | OpsStore | LexicalIndex

export interface ToolContext {
  readonly caller: Caller
  readonly request: HttpServerRequest.HttpServerRequest
  readonly config: AppConfigShape
  readonly runtime: Runtime.Runtime<McpServices>
}

export interface ToolInput {
  /** path parameters of the same /v1 call (e.g. the rule id) */
  readonly params?: Readonly<Record<string, string>>
  /** query parameters of the same /v1 call */
  readonly query?: Readonly<Record<string, string>>
  /** the body of the same /v1 call */
  readonly value?: unknown
}

/**
 * Runs `spec` for the caller with the tool's arguments mapped to the /v1 call's input; `present`
 * turns the outcome into the result. The arguments' JSON is the request text (input_sha256).
 */
export const callTool = <P, RP, R extends McpServices>(
  ctx: ToolContext,
  kind: ToolKind,
  spec: CallSpec<P, RP, R>,
  args: unknown,
  input: ToolInput,
  present: (outcome: Outcome) => CallToolResult
): Promise<CallToolResult> =>
  Rt.runPromise(ctx.runtime)(
    Effect.flatMap(
      runCall(spec as CallSpec<P, never, R>, ctx.caller, {
        request: ctx.request,
        params: input.params ?? {},
        query: input.query ?? {},
        body: { value: input.value, text: JSON.stringify(args ?? {}), form: false }
      }),
      (result) => {
        if (result._tag === "Done") return Effect.sync(() => present(result.outcome))
        if (result._tag === "Refused") return Effect.succeed(errorResult(result, kind))
        return Effect.as(internalLog(spec.operation, result.cause), errorResult(result, kind))
      }
    ).pipe(
      Effect.catchAllDefect((defect) => Effect.as(internalLog(spec.operation, defect), errorResult({ _tag: "Internal", cause: defect }, kind)))
    ) as Effect.Effect<CallToolResult, never, McpServices>
  )

/** The cause goes to the process log (name and message only), never to the client. */
const internalLog = (operation: string, cause: unknown) =>
  Effect.logError("internal error").pipe(Effect.annotateLogs({
    where: `mcp ${operation}`,
    cause: cause instanceof Error ? `${cause.name}: ${cause.message}`.slice(0, 300) : "unknown"
  }))

/** The rule id of a rule ref (rule/<id>[@<n>]). */
export const ruleIdOfRef = (ref: string): string => ref.slice("rule/".length).replace(/@\d+$/, "")
