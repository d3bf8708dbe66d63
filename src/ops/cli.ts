#!/usr/bin/env node
/**
 * The operator's CLI `groundnote` (gaps.md §9). Exit codes: 0 ok, 1 error, 2 usage, 3 a check
 * failed. It never confirms, rejects, revokes, reviews, archives, reverts or redacts (AT6); the
 * service itself is reached only through the dynamic import of ../main.js.
 */
import { Command, Options, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Option } from "effect"
import { VERSION } from "../version.js"

const version = Command.make("version", {}, () => Console.log(VERSION)).pipe(
  Command.withDescription("Print the version of this build.")
)

const serve = Command.make("serve", {
  demo: Options.boolean("demo").pipe(Options.withDescription("Seed and use a demo data dir (./demo-data) for a first look."))
}, ({ demo }) => Effect.flatMap(Effect.promise(() => import("../main.js")), (main) => main.serve({ demo }))).pipe(
  Command.withDescription("Run the service.")
)

const root = Command.make("groundnote").pipe(Command.withSubcommands([version, serve]))

const cli = Command.run(root, { name: "groundnote", version: VERSION })

/** A failure that carries its own exit code (3: a check failed). */
export interface ExitCode {
  readonly _tag: "ExitCode"
  readonly code: number
}

export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    if (ValidationError.isValidationError(e)) return 2
    if (typeof e === "object" && e !== null && (e as ExitCode)._tag === "ExitCode") return (e as ExitCode).code
  }
  return 1
}

cli(process.argv).pipe(
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause) || Option.exists(Cause.failureOption(cause), ValidationError.isValidationError)
      ? Effect.void
      : Console.error(`groundnote: ${Option.match(Cause.failureOption(cause), {
        onNone: () => Cause.pretty(cause),
        onSome: (e) => typeof e === "object" && e !== null && "message" in e ? `${String((e as { code?: unknown }).code ?? "error")}: ${String(e.message)}` : String(e)
      })}`)
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => onExit(exitCodeOf(exit))
  })
)
