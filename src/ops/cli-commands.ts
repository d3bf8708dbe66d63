/**
 * The ops commands of the CLI (gaps.md §9): status, scope create, grants list|create|disable|rename.
 * Each is a thin client of the ops socket (ops-client.ts) with `--json`: stdout carries only the
 * JSON answer (an error body too); without --json human output goes to stderr, except the new
 * token of a bearer grant, which goes alone to stdout, once. Exit codes: 0 ok, 1 error (one
 * line `groundnote: <code>: <message>` on stderr), 2 usage, 3 a check failed.
 */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import { Cause, Console, Effect, Exit, Option } from "effect"
import type { GrantOut } from "../contracts/grants.js"
import { usdAmount } from "../contracts/ops.js"
import { plural } from "../contracts/words.js"
import { type CliError, printJson, terminalSafe, withJsonError } from "./cli-output.js"
import type { CliRouteName } from "./cli-routes.js"
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
  options: { readonly params?: Readonly<Record<string, string>>; readonly body?: unknown; readonly timeoutMs?: number },
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
// Human output (stderr)

interface RunView { readonly seq: number; readonly kind: string; readonly finished_at: string; readonly ok: boolean }
interface ScopeView {
  readonly scope: string; readonly created: boolean; readonly locked: boolean; readonly lock_reason: string | null
  readonly version_count: number | null; readonly last_backup_at: string | null; readonly verified_at: string | null
  readonly verify_ok: boolean | null; readonly probed_at: string | null; readonly probe_ok: boolean | null
  readonly exported_at: string | null
}
interface StatusView {
  readonly instance: string; readonly version: string; readonly started_at: string; readonly now: string; readonly data_dir: string
  readonly backup: {
    readonly kind: string; readonly directory: string | null; readonly export_directory: string | null
    readonly running: string | null; readonly ops_backup_at: string | null
    readonly last_run: RunView | null; readonly last_probe: RunView | null
  }
  readonly scopes: ReadonlyArray<ScopeView>
  /** stage b: the model's state and the vectors' catch-up per scope (null when stage b is off) */
  readonly semantic?: {
    readonly model: string; readonly state: string; readonly reason: string | null
    readonly scopes: ReadonlyArray<{ readonly scope: string; readonly state: string; readonly total: number | null; readonly embedded: number | null; readonly pending: number | null }>
  } | null
  readonly usage?: { readonly reranker_month_usd: number }
}

const when = (at: string | null): string => at ?? "never"
const run = (r: RunView | null): string => (r === null ? "never" : `${r.finished_at} (${r.ok ? "ok" : "FAILED"}, #${r.seq})`)
const check = (at: string | null, ok: boolean | null): string => (at === null ? "never" : `${at} (${ok === true ? "ok" : "FAILED"})`)

export const renderStatus = (s: StatusView): string => {
  const lines = [
    `groundnote ${s.version}, instance ${s.instance}, running since ${s.started_at} (now ${s.now})`,
    `data dir: ${s.data_dir}`,
    `backup: ${s.backup.kind}${s.backup.directory === null ? "" : ` to ${s.backup.directory}`}` +
      `${s.backup.export_directory === null ? ", no nightly export" : `, exports to ${s.backup.export_directory}`}` +
      `${s.backup.running === null ? "" : `, ${s.backup.running} running now`}`,
    `  ops.sqlite copied: ${when(s.backup.ops_backup_at)}; last run: ${run(s.backup.last_run)}; last probe: ${run(s.backup.last_probe)}`,
    "scopes:"
  ]
  for (const sc of s.scopes) {
    if (!sc.created && !sc.locked) {
      lines.push(`  ${sc.scope}: no file yet (groundnote scope create ${sc.scope})`)
      continue
    }
    const state = sc.locked ? `LOCKED (${sc.lock_reason ?? "see the process log"})` : "ok"
    lines.push(`  ${sc.scope}: ${state}, ${sc.version_count === null ? "? rule versions" : plural(sc.version_count, "rule version")} remembered; backup ${when(sc.last_backup_at)}; ` +
      `verify ${check(sc.verified_at, sc.verify_ok)}; probe ${check(sc.probed_at, sc.probe_ok)}; export ${when(sc.exported_at)}`)
  }
  const sem = s.semantic
  if (sem !== undefined && sem !== null) {
    lines.push(`stage b: model ${sem.model} ${sem.state}${sem.reason === null ? "" : ` (${sem.reason})`}`)
    for (const v of sem.scopes) {
      // the catch-up has not counted this scope yet (waiting for the model): no figures to show
      const counted = v.total === null || v.embedded === null ? "rule versions not counted yet"
        : `${v.embedded} of ${plural(v.total, "rule version")} embedded${v.pending !== null && v.pending > 0 ? `, ${v.pending} pending` : ""}`
      lines.push(`  ${v.scope}: ${counted} (${v.state})`)
    }
  }
  if (s.usage !== undefined && s.usage.reranker_month_usd > 0) lines.push(`stage c: ${usdAmount(s.usage.reranker_month_usd)} USD spent this month`)
  return lines.map((l) => terminalSafe(l)).join("\n")
}

export const renderGrant = (g: GrantOut): string =>
  terminalSafe([
    g.id,
    g.active ? "active" : `disabled ${g.disabled_at ?? ""}`.trim(),
    `${g.kind}/${g.auth}`,
    g.identity ?? g.fingerprint ?? "",
    `scopes=${g.scopes.join(",")}`,
    `rights=${g.rights.join(",")}`,
    g.label === null ? "" : `label=${JSON.stringify(g.label)}`,
    `created ${g.created_at}`
  ].filter((p) => p !== "").join("  "))

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
  callOps(json, "grantsList", {}, (a) => {
    const grants = a as ReadonlyArray<GrantOut>
    return Console.error(grants.length === 0 ? "no grants" : grants.map(renderGrant).join("\n"))
  })
).pipe(Command.withDescription("List every grant (active and disabled)."))

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
  rights: Options.choice("right", ["read", "propose", "decide"]).pipe(
    Options.withDescription("read, propose or decide (repeat for more; decide for persons only)"),
    Options.atLeast(1)
  ),
  label: Options.text("label").pipe(Options.withDescription("a name for people"), Options.optional)
}, ({ auth, identity, json, kind, label, rights, scopes }) =>
  callOps(json, "grantsCreate", {
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
  })
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
  Command.withDescription("Grants: who may read, propose or decide in which scopes."),
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
  return `groundnote: ${terminalSafe(text, { lines: true })}`
}
