/**
 * The MCP door of an operation: a tool is the operation it runs, its arguments (the operation's
 * input schema, or one derived from it where the tool names a field differently), how the
 * arguments become the operation's input, and how the outcome is presented. Every call runs
 * steps 2–6 of the scope-check pipeline for the request's caller (provided as CurrentCaller) and
 * answers through ModelOutput: foreign text only inside untrusted blocks.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Runtime, type Schema } from "effect"
import { type Caller, CurrentCaller } from "../auth/caller.js"
import { bodyValue, type Operation, type Outcome } from "../auth/operation.js"
import { runOperation } from "../auth/scope-check.js"
import type { AppConfigShape } from "../config/config.js"
import { ModelOutput, type ModelOutputShape } from "../security/model-output.js"
import type { Services } from "../services.js"
import { errorResult, toolResult, type ToolKind } from "./result.js"
import { toolInput } from "./tool-input.js"

/** What every tool of one POST /mcp shares: the authenticated caller (channel mcp), the configuration, the runtime. */
export interface ToolContext {
  readonly caller: Caller
  readonly config: AppConfigShape
  readonly runtime: Runtime.Runtime<Services>
}

export interface ToolSpec<A, I, R> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly kind: ToolKind
  readonly annotations: ToolAnnotations
  readonly op: Operation<I, R>
  /** the tool's arguments: the operation's input schema or one derived from it; A is what a client sends */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema's decoded side is invariant
  readonly args: Schema.Schema<any, A, never>
  /** the operation's raw input from the (checked) arguments; default: the arguments themselves */
  readonly toInput?: (args: A) => unknown
  /** the result of a successful outcome; default: its body, rendered for a model */
  readonly present?: (outcome: Outcome, output: ModelOutputShape, args: A) => CallToolResult
}

/** The cause goes to the process log (name and message only), never to the client. */
const internalLog = (operation: string, cause: unknown) =>
  Effect.logError("internal error").pipe(Effect.annotateLogs({
    where: `mcp ${operation}`,
    cause: cause instanceof Error ? `${cause.name}: ${cause.message}`.slice(0, 300) : "unknown"
  }))

/** Runs one tool call through the pipeline; the arguments' JSON is the request text (input_sha256). */
export const runTool = <A, I, R extends Services>(ctx: ToolContext, spec: ToolSpec<A, I, R>, args: A): Promise<CallToolResult> =>
  Runtime.runPromise(ctx.runtime)(
    Effect.gen(function*() {
      const output = yield* ModelOutput
      return yield* Effect.gen(function*() {
        const raw = spec.toInput === undefined ? args : spec.toInput(args)
        const result = yield* runOperation(spec.op, raw, JSON.stringify(args ?? {})).pipe(Effect.provideService(CurrentCaller, ctx.caller))
        if (result._tag === "Done") {
          return spec.present === undefined ? toolResult(output, bodyValue(result.outcome.body) as object) : spec.present(result.outcome, output, args)
        }
        if (result._tag === "Internal") yield* internalLog(spec.op.name, result.cause)
        return errorResult(output, result, spec.kind)
      }).pipe(
        Effect.catchAllDefect((defect) => Effect.as(internalLog(spec.op.name, defect), errorResult(output, { _tag: "Internal", cause: defect }, spec.kind)))
      )
    }) as Effect.Effect<CallToolResult, never, Services>
  )

/** Registers a tool on a server of one request. */
export const registerTool = <A, I, R extends Services>(server: McpServer, ctx: ToolContext, spec: ToolSpec<A, I, R>): void => {
  server.registerTool(spec.name, {
    title: spec.title,
    description: spec.description,
    inputSchema: toolInput(spec.args),
    annotations: spec.annotations
  }, (args: unknown) => runTool(ctx, spec, args as A))
}
