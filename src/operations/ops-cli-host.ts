/**
 * The CLI's host (src/ops/cli-host.ts CliHost): what the `groundnote` CLI runs beyond a thin
 * client, reached only through the dynamic import of ../main.js (architecture.md §2 AT6).
 *
 *   loadConfig(env, cwd)      groundnote.json without secrets (doctor's config-valid, backup
 *                             nightly's deadman_url)
 *   restore(req)              restoreScope / restoreOps (architecture.md §11 "Restore") with the
 *                             data dir and groundnote.json; no service, no secret needed
 *   litestreamConfig(env)     backup litestream-config (litestream-config-host.ts)
 *   stageFindings(input)      semantic-model, reranker-key, reranker-budget from the stage modules
 *   ledgerFacts(env, cwd)     every scope file against the redaction ledger (doctor's redaction-ledger)
 *
 * Every failure comes back as a HostFailure (code, message, exit code), so the CLI needs no type
 * of this layer.
 */
import { Effect } from "effect"
import { restoreExitCode } from "../backup/errors.js"
import { type RestoreConfig, restoreOps, restoreScope } from "../backup/restore.js"
import { configPathOf, dataDirOf } from "../config/env.js"
import { litestreamConfig } from "./litestream-config-host.js"
import { loadConfigFile } from "../config/load.js"
import type { ConfigFile } from "../config/schema.js"
import type { ConfigResult, Finding, LedgerFacts } from "../ops/doctor/types.js"
import type { CliHost, HostFailure, HostRestoreRequest, StageFindingsInput } from "../ops/cli-host.js"
import { readLedgerFacts } from "../redaction/ledger-facts.js"
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
      backup: loaded.file.backup,
      search: loaded.file.search
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

/** The configured scopes' files against the redaction ledger (doctor's redaction-ledger). */
const ledgerFacts = (env: Record<string, string | undefined>, cwd: string): Effect.Effect<LedgerFacts> =>
  Effect.gen(function*() {
    const loaded = yield* Effect.either(loadConfigFile(env, cwd))
    if (loaded._tag === "Left") return { read: false as const, why: "groundnote.json did not load (see config-valid)" }
    return yield* readLedgerFacts(dataDirOf(env, cwd), loaded.right.file.scopes.map((s) => s.name))
  })

export const cliHost: CliHost = { loadConfig, restore, stageFindings, ledgerFacts, litestreamConfig }
