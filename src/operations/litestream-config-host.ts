/**
 * `groundnote backup litestream-config` for the CLI host (src/ops/cli-host.ts CliHost): the
 * Litestream config of the data dir, offline — groundnote.json (backup.target, backup.prefix, the
 * scopes) and key_recipient of ops.sqlite read-only, so it works with the service up or down.
 * Without ops.sqlite nothing says which files are keyed: refused, never a plaintext guess.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { LitestreamConfigInvalid, litestreamConfigText, litestreamDbs, litestreamTargetOf } from "../backup/litestream-config.js"
import { readKeyRecipients } from "../backup/litestream-keys.js"
import { dataDirOf } from "../config/env.js"
import { loadConfigFile } from "../config/load.js"
import type { HostFailure, LitestreamConfigAnswer } from "../ops/cli-host.js"

const refusal = (code: string, message: string): HostFailure => ({ code, message, exitCode: 1 })

export const litestreamConfig = (env: Record<string, string | undefined>, cwd: string): Effect.Effect<LitestreamConfigAnswer, HostFailure> =>
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
    return {
      config,
      files: litestreamDbs(input).map((d) => ({ file: d.file.kind === "ops" ? "ops.sqlite" : d.file.scope, path: d.path, url: d.url, recipients: d.recipients }))
    }
  })
