/**
 * The CLI's host (src/ops/cli-host.ts CliHost): what the `groundnote` CLI runs beyond a thin
 * client, reached only through the dynamic import of ../main.js (architecture.md §2 AT6).
 *
 *   loadConfig(env, cwd)      groundnote.json without secrets (doctor's config-valid, backup
 *                             nightly's deadman_url)
 *   restore(req)              restoreScope / restoreOps (architecture.md §11 "Restore") with the
 *                             data dir and groundnote.json; no service, no secret needed
 *   stageFindings(input)      semantic-model, reranker-key, reranker-budget from the stage modules
 *   litestreamConfig(env)     the Litestream config of the data dir (backup kind litestream):
 *                             groundnote.json and the recipients in ops.sqlite, read directly
 *
 * Every failure comes back as a HostFailure (code, message, exit code), so the CLI needs no type
 * of this layer.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { restoreExitCode } from "../backup/errors.js"
import { type RestoreConfig, restoreOps, restoreScope } from "../backup/restore.js"
import { LitestreamConfigInvalid, litestreamConfigText, litestreamDbs, litestreamTargetOf } from "../backup/litestream-config.js"
import { readKeyRecipients } from "../backup/litestream-keys.js"
import { configPathOf, dataDirOf } from "../config/env.js"
import { loadConfigFile } from "../config/load.js"
import type { ConfigFile } from "../config/schema.js"
import type { ConfigResult, Finding } from "../ops/doctor/types.js"
import type { CliHost, HostFailure, HostRestoreRequest, LitestreamConfigAnswer, StageFindingsInput } from "../ops/cli-host.js"
import { rerankerBudgetFinding, rerankerKeyFinding } from "../search/reranker/findings.js"

const loadConfig = (env: Record<string, string | undefined>, cwd: string): Effect.Effect<ConfigResult> =>
  loadConfigFile(env, cwd).pipe(
    Effect.map(({ file, path }): ConfigResult => ({ ok: true, path, config: file })),
    Effect.catchTag("StartRefusal", (e) =>
      Effect.succeed<ConfigResult>({ ok: false, path: configPathOf(env, cwd), code: e.code, message: e.message }))
  )

const refusal = (code: string, message: string): HostFailure => ({ code, message, exitCode: 1 })

const restore = (req: HostRestoreRequest) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfigFile(req.env, req.cwd).pipe(Effect.mapError((e) => refusal(e.code, e.message)))
    const config: RestoreConfig = {
      dataDir: dataDirOf(req.env, req.cwd),
      scopes: loaded.file.scopes.map((s) => s.name),
      backup: loaded.file.backup
    }
    const base = {
      to: req.to,
      env: req.env,
      ...(req.from === undefined ? {} : { from: req.from }),
      ...(req.progress === undefined ? {} : { progress: req.progress })
    }
    const run = req.ops === true ? restoreOps(base, config) : restoreScope({ ...base, scope: req.scope ?? "" }, config)
    return yield* run.pipe(Effect.mapError((e): HostFailure => {
      switch (e._tag) {
        case "RestoreCheckFailed":
          return { code: e.code, message: e.message, exitCode: restoreExitCode(e), checks: e.checks }
        case "ValidationFailed":
          return refusal("validation-failed", e.message)
        default:
          return refusal(e.code, e.message)
      }
    }))
  })

const skipAll = (why: string): ReadonlyArray<Finding> =>
  (["semantic-model", "reranker-key", "reranker-budget"] as const).map((id) => ({ id, status: "skip", message: why, remedy: null }))

const stageFindings = (input: StageFindingsInput): Effect.Effect<ReadonlyArray<Finding>> =>
  Effect.gen(function*() {
    const loaded = yield* Effect.either(loadConfigFile(input.env, input.cwd))
    if (loaded._tag === "Left") return skipAll("groundnote.json did not load (see config-valid)")
    const file: ConfigFile = loaded.right.file
    const semantic = file.search.semantic
    // the model check loads onnxruntime: only when stage b is on
    const model: Finding = semantic.enabled
      ? yield* Effect.flatMap(Effect.promise(() => import("../search/semantic/check.js")), (m) =>
        m.semanticModelFinding(semantic, dataDirOf(input.env, input.cwd)))
      : { id: "semantic-model", status: "skip", message: "stage b is off (search.semantic.enabled: false)", remedy: null }
    const key = input.env.TYPESAFE_API_KEY
    const budget: Finding = !file.search.reranker.enabled || input.spentUsd !== null
      ? rerankerBudgetFinding(file, input.spentUsd ?? 0)
      : { id: "reranker-budget", status: "skip", message: `the service is not reachable (ops-socket: ${input.serviceDown ?? "unknown"})`, remedy: null }
    return [model, rerankerKeyFinding(file, key !== undefined && key !== "", input.env), budget]
  })

/**
 * The Litestream config of the data dir, offline: groundnote.json (backup.target, backup.prefix,
 * the scopes) and key_recipient of ops.sqlite, read-only, so it works with the service up or down.
 * Without ops.sqlite nothing says which files are keyed: refused, never a plaintext guess.
 */
const litestreamConfig = (env: Record<string, string | undefined>, cwd: string) =>
  Effect.gen(function*() {
    const loaded = yield* loadConfigFile(env, cwd).pipe(Effect.mapError((e) => refusal(e.code, e.message)))
    const target = litestreamTargetOf(loaded.file.backup)
    if (target === null) {
      return yield* Effect.fail(refusal("validation-failed", `backup.kind is ${loaded.file.backup.kind} in ${loaded.path}: the Litestream config needs backup kind litestream with target and prefix (config/README.md)`))
    }
    const dataDir = dataDirOf(env, cwd)
    const opsFile = join(dataDir, "ops.sqlite")
    if (!existsSync(opsFile)) {
      return yield* Effect.fail(refusal("not-found", `${opsFile} does not exist: start the service once (it creates ops.sqlite and the recipients live there), then print the config again`))
    }
    const recipients = yield* readKeyRecipients(opsFile).pipe(Effect.mapError((e) => refusal("internal", e.message)))
    const input = { dataDir, scopes: loaded.file.scopes.map((s) => s.name), target, recipients }
    const config = yield* Effect.try({
      try: () => litestreamConfigText(input),
      catch: (e) => refusal("validation-failed", e instanceof LitestreamConfigInvalid ? e.message : String(e))
    })
    const answer: LitestreamConfigAnswer = {
      config,
      files: litestreamDbs(input).map((d) => ({ file: d.file.kind === "ops" ? "ops.sqlite" : d.file.scope, path: d.path, url: d.url, recipients: d.recipients }))
    }
    return answer
  })

export const cliHost: CliHost = { loadConfig, restore, stageFindings, litestreamConfig }
