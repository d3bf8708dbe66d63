/**
 * Output and failures of the CLI (architecture.md §11 "CLI groundnote", D98).
 *
 * The answer of an api command goes to stdout: with --json the JSON answer (also an error body);
 * else plain text for a person (cli-plain.ts), or with --for-model the form an AI model reads
 * (renderResultForModel: the preamble, foreign text in ⟪gn:…⟫ blocks). The ops commands print
 * their human lines on stderr (stdout: --json, a new service token once, the bare value of
 * version, config path and approvals open). Every line goes through terminalSafe, so no stored
 * text can steer the terminal. Progress of long work goes to stderr only when stderr is a TTY.
 *
 * Exit codes: 0 ok, 1 error (one line `groundnote: <code>: <message>` on stderr), 2 usage,
 * 3 a check failed.
 */
import { Console, Data, Effect } from "effect"
import { renderResultForModel } from "../security/model-output.js"
import { renderPlain } from "./cli-plain.js"
import { jsonText, terminalSafe } from "./cli-text.js"
import { CliError } from "./ops-client.js"

export { CliError } from "./ops-client.js"
export { jsonText, terminalSafe } from "./cli-text.js"

/** The --json answer on stdout. */
export const printJson = (value: unknown): Effect.Effect<void> => Console.log(jsonText(value))

/** Human output on stderr, line breaks kept, everything else that could steer the terminal escaped. */
export const say = (text: string): Effect.Effect<void> => Console.error(terminalSafe(text, { lines: true }))

/** An answer framed for a model by renderResultForModel (--for-model): the preamble, foreign text in ⟪gn:…⟫ blocks. */
export const foreignText = (value: unknown, heading?: string): string =>
  terminalSafe(renderResultForModel(value, heading === undefined ? {} : { heading }), { lines: true })

/** An answer on stdout: plain text for a person, or with --for-model framed for a model as MCP frames it. */
export const showAnswer = (forModel: boolean, value: unknown, heading?: string): Effect.Effect<void> =>
  Console.log(forModel ? foreignText(value, heading) : renderPlain(value, heading))

/** A one-line answer on stdout (line breaks kept, nothing else that could steer the terminal). */
export const sayAnswer = (text: string): Effect.Effect<void> => Console.log(terminalSafe(text, { lines: true }))

/** The JSON form of a failure: the server's ErrorBody, else {error, message}. */
export const errorBodyOf = (e: CliError): unknown => e.body ?? { error: e.code, message: e.message }

/** With --json a CliError also prints its error body on stdout (a CheckFailed follows an answer already printed). */
export const withJsonError = (json: boolean) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  effect.pipe(Effect.tapError((e) => (json && e instanceof CliError ? printJson(errorBodyOf(e)) : Effect.void)))

// ---------------------------------------------------------------------------------------------
// Failures with their exit codes

/** A wrong or missing option or argument that the parser cannot see (exit 2). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {
  get code(): "usage" {
    return "usage"
  }
}

/** A check failed (exit 3): the answer is printed already; the message says which. */
export class CheckFailed extends Data.TaggedError("CheckFailed")<{ readonly message: string }> {
  get code(): "check-failed" {
    return "check-failed"
  }
}

export const usage = (message: string): UsageError => new UsageError({ message })

/** A plain failure with a code (exit 1). */
export const cliError = (code: string, message: string): CliError => new CliError({ code, message })

// ---------------------------------------------------------------------------------------------
// Progress (stderr, TTY only)

export const stderrIsTty = (): boolean => process.stderr.isTTY === true

/** One progress line per step, when stderr is a TTY; nothing otherwise. */
export const progressLines = (): ((line: string) => void) | undefined =>
  stderrIsTty() ? (line) => process.stderr.write(`${terminalSafe(line)}…\n`) : undefined

/**
 * Runs `effect` with a ticking "<label>… 12 s" line on stderr when it is a TTY (the ops calls
 * answer only at the end); the line is cleared afterwards.
 */
export const withTicker = (label: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (!stderrIsTty()) return effect
  return Effect.acquireUseRelease(
    Effect.sync(() => {
      const started = Date.now()
      const draw = () => process.stderr.write(`\r\u001b[K${terminalSafe(label)}… ${Math.round((Date.now() - started) / 1000)} s`)
      draw()
      return setInterval(draw, 1000)
    }),
    () => effect,
    (timer) => Effect.sync(() => {
      clearInterval(timer)
      process.stderr.write("\r\u001b[K")
    })
  )
}
