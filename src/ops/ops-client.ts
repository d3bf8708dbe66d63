/**
 * The ops socket's client for the parsed commands (ops-socket.ts does the work): its failures as
 * CliError, the request interruptible.
 */
import { Data, Effect } from "effect"
import type { CliRouteName } from "./cli-routes.js"
import { type OpsCallOptions, opsCall, type OpsEnv, OpsFailure, resolveOpsTarget } from "./ops-socket.js"

export { BACKUP_TIMEOUT_MS, OPS_SOCKET_FILE, type OpsEnv } from "./ops-socket.js"

/**
 * A failure of a CLI command: its code and a one-line message; `body` is the server's ErrorBody
 * when the service answered with an error.
 */
export class CliError extends Data.TaggedError("CliError")<{
  readonly code: string
  readonly message: string
  readonly status?: number
  readonly body?: unknown
}> {}

const fromFailure = (e: unknown): CliError =>
  e instanceof OpsFailure
    ? new CliError({ code: e.code, message: e.message, ...(e.status === undefined ? {} : { status: e.status }), ...(e.body === undefined ? {} : { body: e.body }) })
    : new CliError({ code: "ops-unreachable", message: String(e) })

/** Reads the environment and checks the data dir; nothing is sent yet. */
export const resolveOps = (
  env: Record<string, string | undefined>,
  cwd: string,
  uid: number | undefined = process.getuid?.()
): Effect.Effect<OpsEnv, CliError> => Effect.try({ try: () => resolveOpsTarget(env, cwd, uid), catch: fromFailure })

/** One request over the checked socket; the JSON answer on 2xx, else a CliError with the server's code. */
export const opsRequest = (ops: OpsEnv, route: CliRouteName, options: OpsCallOptions = {}): Effect.Effect<unknown, CliError> =>
  Effect.async<unknown, CliError>((resume) => {
    let abandon = () => {}
    opsCall(ops, route, options, (a) => {
      abandon = a
    }).then((answer) => resume(Effect.succeed(answer)), (e: unknown) => resume(Effect.fail(fromFailure(e))))
    return Effect.sync(() => abandon())
  })
