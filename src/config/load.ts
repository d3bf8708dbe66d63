/**
 * Builds the Config service from the environment (env.ts) and groundnote.json (file.ts), then the
 * checks that need both (cross-checks.ts). Every failure is a StartRefusal whose message names the
 * variable, key or path and says the fix. No message ever contains the value of a secret.
 */
import { readFile } from "node:fs/promises"
import { Effect, Layer } from "effect"
import { AppConfig, type AppConfigShape } from "./config.js"
import { checkConfigAgainstEnv } from "./cross-checks.js"
import { configPathOf, readEnv } from "./env.js"
import { parseConfigFile } from "./file.js"
import { StartRefusal } from "./refusal.js"
import type { ConfigFile } from "./schema.js"

const describeReadError = (e: unknown): string => {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""
  switch (code) {
    case "ENOENT":
      return "does not exist"
    case "EACCES":
    case "EPERM":
      return "cannot be read (permission denied)"
    case "EISDIR":
      return "is a directory"
    default:
      return code === "" ? "cannot be read" : `cannot be read (${code})`
  }
}

/** groundnote.json at `path`, read and decoded strictly (config-unreadable, config-invalid). */
const readConfigFile = (path: string): Effect.Effect<ConfigFile, StartRefusal> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (e) =>
        new StartRefusal({
          code: "config-unreadable",
          message: `the config file ${path} ${describeReadError(e)}: set GROUNDNOTE_CONFIG to the path of your groundnote.json, or copy config/groundnote.example.json to ${path} and edit it`
        })
    })
    return yield* parseConfigFile(text, path)
  })

/**
 * groundnote.json alone (GROUNDNOTE_CONFIG, default ./groundnote.json), without the environment's
 * secrets: what the CLI reads for doctor, backup nightly and restore.
 */
export const loadConfigFile = (
  env: Record<string, string | undefined>,
  cwd: string
): Effect.Effect<{ readonly path: string; readonly file: ConfigFile }, StartRefusal> => {
  const path = configPathOf(env, cwd)
  return Effect.map(readConfigFile(path), (file) => ({ path, file }))
}

/** Environment + groundnote.json → the Config service, or the first reason to refuse start. */
export const loadConfig = (
  env: Record<string, string | undefined>,
  cwd: string
): Effect.Effect<AppConfigShape, StartRefusal> =>
  Effect.gen(function* () {
    const checked = yield* readEnv(env, cwd)
    const file = yield* readConfigFile(checked.configPath)
    yield* checkConfigAgainstEnv(file, checked)
    const config: AppConfigShape = { file, env: checked }
    return config
  })

/** The Config service from process.env and the working directory. */
export const AppConfigLive: Layer.Layer<AppConfig, StartRefusal> = Layer.effect(
  AppConfig,
  Effect.suspend(() => loadConfig(process.env, process.cwd()))
)
