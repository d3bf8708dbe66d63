/**
 * The operator's backup commands (gaps.md §9, architecture.md §11): backup run|probe|verify|nightly
 * over the ops socket, backup litestream-config, restore and doctor. Long work shows progress on stderr when it is a TTY.
 * A check that failed exits 3 after the answer is shown (with --json: the answer on stdout).
 *
 * restore, litestream-config, doctor's config and stage findings and nightly's deadman_url come from the CLI host
 * (cli-host.ts), loaded through the one dynamic import of ../main.js in cli.ts (AT6).
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { NightlyReport } from "../backup/nightly.js"
import { nightly } from "../backup/nightly.js"
import type { Check, ProbeAnswer, RunAnswer, VerifyAnswer } from "../backup/schemas.js"
import { dayBefore, dayIn } from "../contracts/time.js"
import { plural } from "../contracts/words.js"
import { VERSION } from "../version.js"
import { callOps, jsonOption } from "./cli-commands.js"
import type { CliHost, HostFailure } from "./cli-host.js"
import {
  CheckFailed,
  type CliError,
  cliError,
  printJson,
  progressLines,
  say,
  stderrIsTty,
  usage,
  withJsonError,
  withTicker
} from "./cli-output.js"
import { accessClock, gatherDoctorInput } from "./doctor/facts.js"
import { doctorExitCode, runDoctor } from "./doctor/index.js"
import { renderFindings } from "./doctor/render.js"
import { BACKUP_TIMEOUT_MS, opsRequest, resolveOps } from "./ops-client.js"

const bytes = (n: number | null): string =>
  n === null ? "-" : n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(1)} MB`

const verdict = (ok: boolean): string => (ok ? "ok" : "FAILED")

const failedChecks = (checks: ReadonlyArray<Check>): string =>
  checks.filter((c) => !c.ok).map((c) => `${c.check}${c.detail === undefined ? "" : `: ${c.detail}`}`).join("; ")

// ---------------------------------------------------------------------------------------------
// Human output of the answers (paths, counts, check names and rule ids only)

export const renderRun = (a: RunAnswer): string => {
  if (!a.ran) return `backup run (${a.kind}): ${a.message ?? "nothing to copy"}`
  const lines = [`backup run (${a.kind}), ${a.started_at} to ${a.finished_at}: ${verdict(a.ok)}`]
  if (a.ops !== null) lines.push(`  ops.sqlite: ${a.ops.ok ? `ok, ${bytes(a.ops.bytes)} to ${a.ops.file}` : `FAILED: ${a.ops.detail ?? "?"}`}`)
  for (const s of a.scopes) {
    const ok = s.bytes === null ? `ok, ${s.detail ?? "nothing written"} (${s.file})` : `ok, ${bytes(s.bytes)} to ${s.file}`
    lines.push(`  ${s.scope}: ${s.ok ? ok : `FAILED: ${s.detail ?? "?"}`}`)
  }
  return lines.join("\n")
}

export const renderProbe = (a: ProbeAnswer): string => {
  const lines = [`backup probe (${a.kind}), ${a.checked_at}: ${verdict(a.ok)}`]
  lines.push(`  ops.sqlite: ${a.ops.ok ? "ok" : `FAILED: ${failedChecks(a.ops.checks)}`}`)
  for (const s of a.scopes) {
    const parts = [s.ok ? `ok (${plural(s.checks.length, "check")})` : `FAILED: ${failedChecks(s.checks)}`]
    if (s.exceptions.length > 0) parts.push(`changed in live since the backup: ${s.exceptions.join(", ")}`)
    if (s.export !== null) parts.push(`export ${s.export.file} (${bytes(s.export.bytes)}, sha256 ${s.export.sha256.slice(0, 12)}…)`)
    lines.push(`  ${s.scope}: ${parts.join("; ")}`)
  }
  if (a.scopes.length === 0) lines.push("  no scope has a file yet")
  return lines.join("\n")
}

export const renderVerify = (a: VerifyAnswer): string => {
  const lines = [`backup verify (${a.kind}), ${a.checked_at}: ${verdict(a.ok)}`]
  for (const s of a.scopes) {
    const parts = [s.ok ? `ok (${plural(s.checks.length, "check")})` : `FAILED: ${failedChecks(s.checks)}`]
    if (s.exceptions.length > 0) parts.push(`changed in live since the backup: ${s.exceptions.join(", ")}`)
    lines.push(`  ${s.scope}: ${parts.join("; ")}`)
  }
  if (a.scopes.length === 0) lines.push("  no scope has a file yet")
  return lines.join("\n")
}

const isError = (x: unknown): x is { readonly error: string; readonly message: string } =>
  typeof x === "object" && x !== null && typeof (x as { error?: unknown }).error === "string"

export const renderNightly = (r: NightlyReport): string => {
  const lines = [`backup nightly: ${verdict(r.ok)}`]
  lines.push(isError(r.run) ? `run: FAILED: ${r.run.error}: ${r.run.message}` : renderRun(r.run))
  if (r.probe !== null) lines.push(isError(r.probe) ? `probe: FAILED: ${r.probe.error}: ${r.probe.message}` : renderProbe(r.probe))
  const p = r.ping
  lines.push(p.skipped === true
    ? "dead-man ping: skipped (backup.deadman_url is null: nothing alerts you when a night fails)"
    : !p.sent
    ? "dead-man ping: not sent (run and probe must both pass)"
    : p.ok
    ? `dead-man ping: ok (${p.status ?? "?"}, attempt ${p.attempts})`
    : `dead-man ping: FAILED after ${plural(p.attempts, "attempt")} (${p.error ?? `status ${p.status ?? "?"}`})`)
  const d = r.digest
  if (d !== null) {
    lines.push(d.ok
      ? `digest since ${d.since}: posted (${d.status ?? "?"}, attempt ${d.attempts})`
      : !d.sent
      ? `digest since ${d.since}: FAILED, not posted (${d.error ?? "?"})`
      : `digest since ${d.since}: FAILED after ${plural(d.attempts, "attempt")} (${d.error ?? `status ${d.status ?? "?"}`}); the backup's result stands`)
  }
  return lines.join("\n")
}

/** The names of what failed, for the exit-3 line. */
const failedNames = (a: { readonly ops?: { readonly ok: boolean } | null; readonly scopes: ReadonlyArray<{ readonly scope: string; readonly ok: boolean }> }): string =>
  [...(a.ops !== undefined && a.ops !== null && !a.ops.ok ? ["ops.sqlite"] : []), ...a.scopes.filter((s) => !s.ok).map((s) => s.scope)].join(", ")

// ---------------------------------------------------------------------------------------------
// backup run | probe | verify | nightly

const scopeOption = Options.text("scope").pipe(Options.withDescription("only this scope"), Options.optional)
const scopeBody = (scope: Option.Option<string>) => (Option.isSome(scope) ? { scope: scope.value } : undefined)

const backupRun = Command.make("run", { json: jsonOption }, ({ json }) =>
  Effect.gen(function*() {
    const answer = (yield* callOps(json, "backupRun", { timeoutMs: BACKUP_TIMEOUT_MS }, (a) => say(renderRun(a as RunAnswer)), withTicker("backup run"))) as RunAnswer
    if (!answer.ok) return yield* new CheckFailed({ message: `backup run failed for ${failedNames(answer)}` })
  }))

const backupProbe = Command.make("probe", { json: jsonOption, scope: scopeOption }, ({ json, scope }) =>
  Effect.gen(function*() {
    const body = scopeBody(scope)
    const answer = (yield* callOps(json, "backupProbe", { timeoutMs: BACKUP_TIMEOUT_MS, ...(body === undefined ? {} : { body }) },
      (a) => say(renderProbe(a as ProbeAnswer)), withTicker("backup probe"))) as ProbeAnswer
    if (!answer.ok) return yield* new CheckFailed({ message: `backup probe failed for ${failedNames(answer)}` })
  }))

const backupVerify = Command.make("verify", { json: jsonOption, scope: scopeOption }, ({ json, scope }) =>
  Effect.gen(function*() {
    const body = scopeBody(scope)
    const answer = (yield* callOps(json, "backupVerify", { timeoutMs: BACKUP_TIMEOUT_MS, ...(body === undefined ? {} : { body }) },
      (a) => say(renderVerify(a as VerifyAnswer)), withTicker("backup verify"))) as VerifyAnswer
    if (!answer.ok) return yield* new CheckFailed({ message: `backup verify failed for ${failedNames(answer)}` })
  }))

const backupNightly = (host: Effect.Effect<CliHost>) =>
  Command.make("nightly", { json: jsonOption }, ({ json }) =>
    Effect.gen(function*() {
      const env = process.env
      const config = yield* Effect.flatMap(host, (h) => h.loadConfig(env, process.cwd()))
      if (!config.ok) {
        return yield* cliError(config.code, `backup nightly reads backup.deadman_url from ${config.path}: ${config.message}`)
      }
      const ops = yield* resolveOps(env, process.cwd())
      const call = <A>(route: "backupRun" | "backupProbe", label: string) =>
        withTicker(label)(opsRequest(ops, route, { timeoutMs: BACKUP_TIMEOUT_MS })) as Effect.Effect<A, CliError>
      const progress = progressLines()
      const digestUrl = config.config.approval?.digest_url
      // the digest since yesterday (config.zone): every night's post covers the whole day before
      const since = dayBefore(dayIn(config.config.zone, Date.now()))
      const report = yield* nightly({
        run: call<RunAnswer>("backupRun", "backup run"),
        probe: call<ProbeAnswer>("backupProbe", "backup probe"),
        deadmanUrl: config.config.backup.deadman_url,
        digest: digestUrl === undefined ? null : { url: digestUrl, since, read: opsRequest(ops, "opsDigest", { query: { since } }) },
        ...(progress === undefined ? {} : { progress })
      })
      yield* json ? printJson(report) : say(renderNightly(report))
      if (!report.ok) {
        const what = isError(report.run) || !report.run.ok ? "the backup run" : report.probe === null || isError(report.probe) || !report.probe.ok ? "the restore probe" : "the dead-man ping"
        return yield* new CheckFailed({ message: `backup nightly failed: ${what} did not pass` })
      }
    }).pipe(withJsonError(json)))

/** The Litestream config of the data dir on stdout (with --json: {config, files}); offline, like restore. */
const backupLitestreamConfig = (host: Effect.Effect<CliHost>) =>
  Command.make("litestream-config", { json: jsonOption }, ({ json }) =>
    Effect.gen(function*() {
      const h = yield* host
      const answer = yield* h.litestreamConfig(process.env, process.cwd()).pipe(Effect.catchAll(hostFailure(json)))
      yield* json ? printJson(answer) : Effect.sync(() => process.stdout.write(answer.config))
    }))

export const backup = (host: Effect.Effect<CliHost>) =>
  Command.make("backup").pipe(Command.withSubcommands([backupRun, backupProbe, backupVerify, backupNightly(host), backupLitestreamConfig(host)]))

// ---------------------------------------------------------------------------------------------
// restore

const checkLines = (checks: ReadonlyArray<Check>): Array<string> =>
  checks.map((c) => `  ${c.ok ? "ok  " : "FAIL"}  ${c.check}${c.detail === undefined ? "" : `: ${c.detail}`}`)

const hostFailure = (json: boolean) => (f: HostFailure): Effect.Effect<never, CliError | CheckFailed> =>
  Effect.gen(function*() {
    if (json) yield* printJson({ error: f.code, message: f.message, ...(f.checks === undefined ? {} : { checks: f.checks }) })
    else if (f.checks !== undefined) yield* say(["checks of the fetched backup:", ...checkLines(f.checks)].join("\n"))
    return yield* (f.exitCode === 3 ? new CheckFailed({ message: f.message }) : cliError(f.code, f.message))
  })

export const restore = (host: Effect.Effect<CliHost>) =>
  Command.make("restore", {
    json: jsonOption,
    to: Options.text("to").pipe(Options.withDescription("the new file; its directory must exist")),
    scope: Options.text("scope").pipe(Options.withDescription("the scope to restore"), Options.optional),
    ops: Options.boolean("ops").pipe(Options.withDescription("restore ops.sqlite instead")),
    from: Options.choice("from", ["copy", "litestream"]).pipe(Options.withDescription("where the backup comes from (default backup.kind)"), Options.optional)
  }, ({ from, json, ops, scope, to }) =>
    Effect.gen(function*() {
      if (Option.isSome(scope) === ops) {
        return yield* usage("give exactly one of --scope <s> (a scope) and --ops (ops.sqlite): groundnote restore --help")
      }
      const h = yield* host
      const progress = progressLines()
      const answer = yield* h.restore({
        env: process.env,
        cwd: process.cwd(),
        to,
        ...(Option.isSome(scope) ? { scope: scope.value } : { ops: true }),
        ...(Option.isSome(from) ? { from: from.value } : {}),
        ...(progress === undefined ? {} : { progress })
      }).pipe(Effect.catchAll(hostFailure(json)))
      if (json) return yield* printJson(answer)
      yield* say([
        `restored ${answer.scope} from ${answer.from} to ${answer.target} (${bytes(answer.bytes)})`,
        ...checkLines(answer.checks),
        ...answer.warnings.map((w) => `warning: ${w}`),
        answer.scope === "ops.sqlite"
          ? "next: stop the service, move the file to <data dir>/ops.sqlite, restore every scope of the same run, start it (docs/backup.md)"
          : `next: stop the service, move the broken scopes/${answer.scope}.sqlite (and -wal, -shm) aside, move this file in, start it, run groundnote doctor (docs/backup.md)`
      ].join("\n"))
    }))

// ---------------------------------------------------------------------------------------------
// doctor

export const doctor = (host: Effect.Effect<CliHost>) =>
  Command.make("doctor", { json: jsonOption }, ({ json }) =>
    Effect.gen(function*() {
      const env = process.env
      const cwd = process.cwd()
      const h = yield* host
      const config = yield* h.loadConfig(env, cwd)
      const clock = yield* accessClock(env, config)
      const gathered = yield* withTicker("doctor: asking the service")(gatherDoctorInput({ env, cwd, cliVersion: VERSION, config, clock }))
      const service = gathered.service
      const stages = yield* withTicker("doctor: the stage checks")(h.stageFindings({
        env,
        cwd,
        spentUsd: service.reachable ? (service.status.usage?.reranker_month_usd ?? null) : null,
        serviceDown: service.reachable ? null : service.code
      }))
      const ledger = yield* withTicker("doctor: the redaction ledger")(h.ledgerFacts(env, cwd))
      const storage = yield* withTicker("doctor: the scope files")(h.storageFacts(env, cwd))
      const findings = runDoctor({ ...gathered, stages, ledger, storage })
      yield* json ? printJson(findings) : Console.error(renderFindings(findings, { color: stderrIsTty() }))
      if (doctorExitCode(findings) === 3) {
        return yield* new CheckFailed({ message: `doctor found ${findings.filter((f) => f.status === "fail").map((f) => f.id).join(", ")} failing` })
      }
    }))
