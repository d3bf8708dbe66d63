/**
 * The ops commands of the CLI (gaps.md §9): status, scope create, grants list|create|disable|rename.
 * Each is a thin client of the ops socket (ops-client.ts) with `--json`: stdout carries only the
 * JSON answer (an error body too); without --json human output goes to stderr, except the new
 * token of a bearer grant, which goes alone to stdout, once. Exit codes: 0 ok, 1 error (one
 * line `groundnote: <code>: <message>` on stderr), 2 usage, 3 a check failed.
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import { Cause, Console, Effect, Exit, Option } from "effect"
import { type GrantOut, type Right, RIGHTS_ORDER } from "../contracts/grants.js"
import { type CliError, printJson, terminalSafe, usage, type UsageError, withJsonError } from "./cli-output.js"
import { failureText } from "./cli-text.js"
import type { CliRouteName } from "./cli-routes.js"
import { renderGrant, renderGrants, renderStatus, type StatusView } from "./cli-ops-render.js"
import { opsRequest, resolveOps } from "./ops-client.js"

export { terminalSafe } from "./cli-output.js"

export const jsonOption = Options.boolean("json").pipe(Options.withDescription("Print only the JSON answer (or error body) on stdout."))

/**
 * Calls one ops route and returns its answer. With --json the answer (or error body) goes to
 * stdout; without it `human` renders the answer to stderr (and may print a new token to stdout).
 */
export const callOps = <A = void>(
  json: boolean,
  route: CliRouteName,
  options: { readonly params?: Readonly<Record<string, string>>; readonly query?: Readonly<Record<string, string | undefined>>; readonly body?: unknown; readonly timeoutMs?: number },
  human: (answer: unknown) => Effect.Effect<A>,
  wrap: <X>(effect: Effect.Effect<X, CliError>) => Effect.Effect<X, CliError> = (e) => e
): Effect.Effect<unknown, CliError> =>
  Effect.gen(function*() {
    const ops = yield* resolveOps(process.env, process.cwd())
    const answer = yield* wrap(opsRequest(ops, route, options))
    yield* json ? printJson(answer) : human(answer)
    return answer
  }).pipe(withJsonError(json))

// ---------------------------------------------------------------------------------------------
// Commands

export const status = Command.make("status", { json: jsonOption }, ({ json }) =>
  callOps(json, "opsStatus", {}, (a) => Console.error(renderStatus(a as StatusView)))
).pipe(Command.withDescription("Show the service, its backup and every configured scope (ops socket)."))

const scopeCreate = Command.make("create", {
  json: jsonOption,
  name: Args.text({ name: "name" }).pipe(Args.withDescription("A scope configured in groundnote.json."))
}, ({ json, name }) =>
  callOps(json, "scopesCreate", { body: { name } }, () => Console.error(terminalSafe(`created the file of scope ${name}`)))
).pipe(Command.withDescription("Create the file of a configured scope."))

export const scope = Command.make("scope").pipe(
  Command.withDescription("Scope files."),
  Command.withSubcommands([scopeCreate])
)

const grantsList = Command.make("list", { json: jsonOption }, ({ json }) =>
  callOps(json, "grantsList", {}, (a) => Console.error(renderGrants(a as ReadonlyArray<GrantOut>)))
).pipe(Command.withDescription("List every grant (active and disabled)."))

/**
 * The rights of `grants create`: every --right and the names of --rights (a comma list), checked
 * here against the rights there are before anything is sent; none at all is a usage error.
 */
export const grantRights = (right: ReadonlyArray<Right>, list: Option.Option<string>): Effect.Effect<Array<Right>, UsageError> =>
  Effect.gen(function*() {
    const named = Option.isSome(list) ? list.value.split(",").map((r) => r.trim()) : []
    for (const r of named) {
      if (!(RIGHTS_ORDER as ReadonlyArray<string>).includes(r)) {
        return yield* usage(`--rights: ${r === "" ? "an empty name" : r} is not one of ${RIGHTS_ORDER.join(", ")}`)
      }
    }
    const all = [...right, ...(named as Array<Right>)]
    if (all.length === 0) return yield* usage("missing option --right (or --rights read,decide,…)")
    return RIGHTS_ORDER.filter((r) => all.includes(r))
  })

const grantsCreate = Command.make("create", {
  json: jsonOption,
  kind: Options.choice("kind", ["person", "service"]).pipe(Options.withDescription("person (auth email) or service")),
  auth: Options.choice("auth", ["email", "access-service", "bearer"]).pipe(
    Options.withDescription("email (person), access-service or bearer (service; the token is shown once)")
  ),
  identity: Options.text("identity").pipe(
    Options.withDescription("e-mail or Access common name; none for bearer"),
    Options.optional
  ),
  scopes: Options.text("scope").pipe(Options.withDescription("a configured scope (repeat for more)"), Options.atLeast(1)),
  right: Options.choice("right", RIGHTS_ORDER).pipe(
    Options.withDescription("read, propose, decide or redact (repeat for more; decide and redact for persons only)"),
    Options.repeated
  ),
  rightsList: Options.text("rights").pipe(
    Options.withDescription("the rights as one comma list, e.g. read,decide,redact (instead of repeating --right)"),
    Options.optional
  ),
  label: Options.text("label").pipe(Options.withDescription("a name for people"), Options.optional)
}, ({ auth, identity, json, kind, label, right, rightsList, scopes }) =>
  Effect.flatMap(grantRights(right, rightsList), (rights) => callOps(json, "grantsCreate", {
    body: {
      kind, auth, scopes, rights,
      ...(Option.isSome(identity) ? { identity: identity.value } : {}),
      ...(Option.isSome(label) ? { label: label.value } : {})
    }
  }, (a) => {
    const g = a as GrantOut & { readonly token?: string }
    const token = g.token
    return token === undefined
      ? Console.error(`created ${renderGrant(g)}`)
      : Effect.zipRight(
          Console.log(token),
          Console.error(`created ${renderGrant(g)}\nthe token above is shown this once: store it now (the service keeps only its hash)`)
        )
  }))
).pipe(Command.withDescription("Create a grant; a bearer grant's token is printed once on stdout."))

const grantId = Args.text({ name: "id" }).pipe(Args.withDescription("The grant id, e.g. service:3."))

const grantsDisable = Command.make("disable", { json: jsonOption, id: grantId }, ({ id, json }) =>
  callOps(json, "grantsDisable", { params: { id } }, (a) => Console.error(`disabled ${renderGrant(a as GrantOut)}`))
).pipe(Command.withDescription("Disable a grant (for good)."))

const grantsRename = Command.make("rename", {
  json: jsonOption,
  id: grantId,
  label: Options.text("label").pipe(Options.withDescription("the new label"))
}, ({ id, json, label }) =>
  callOps(json, "grantsRename", { params: { id }, body: { label } }, (a) =>
    Console.error(`${terminalSafe(id)} disabled; its copy with the new label is\n${renderGrant(a as GrantOut)}`))
).pipe(Command.withDescription("Give a grant a new label: the row is disabled and copied with the label."))

export const grants = Command.make("grants").pipe(
  Command.withDescription("Grants: who may read, propose, decide or redact in which scopes."),
  Command.withSubcommands([grantsList, grantsCreate, grantsDisable, grantsRename])
)

/** The ops commands, for the root command of cli.ts. */
export const opsCommands = [status, scope, grants] as const

// ---------------------------------------------------------------------------------------------
// Exit codes

const tagOf = (e: unknown): string | null =>
  typeof e === "object" && e !== null && typeof (e as { _tag?: unknown })._tag === "string" ? (e as { _tag: string })._tag : null

/** 0 ok, 1 error, 2 usage (the parser's and UsageError), 3 a check failed (CheckFailed). */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    if (ValidationError.isValidationError(e) || tagOf(e) === "UsageError") return 2
    if (tagOf(e) === "CheckFailed") return 3
  }
  return 1
}

/**
 * The stderr line of a failure, `groundnote: <code>: <message>`, or null when there is none to
 * print (the parser printed a usage error itself; an interrupt). A message of several lines
 * (config-invalid names every key) keeps its line breaks; nothing else can steer the terminal.
 */
export const failureLine = (cause: Cause.Cause<unknown>): string | null => {
  if (Cause.isInterruptedOnly(cause)) return null
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return null
  const text = Option.match(failure, {
    onNone: () => {
      const defect = Option.getOrUndefined(Cause.dieOption(cause))
      return `internal: ${defect instanceof Error ? defect.message : String(defect ?? Cause.pretty(cause))}`
    },
    onSome: (e) => {
      if (typeof e !== "object" || e === null) return `error: ${String(e)}`
      const code = String((e as { code?: unknown }).code ?? tagOf(e) ?? "error")
      const message = "message" in e ? String(e.message) : ""
      return `${code}: ${message === "" ? (tagOf(e) ?? "failed") : message}`
    }
  })
  return failureText(text)
}
