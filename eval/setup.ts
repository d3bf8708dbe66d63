/**
 * What every eval run shares: the fixed clock (EVAL_NOW for writers and searches) and the config
 * of the throw-away data dir, with the lexical switches and stages of a configuration.
 */
import { join } from "node:path"
import { Clock, Effect, Redacted, Schema } from "effect"
import type { Duration } from "effect"
import type { AppConfigShape } from "../src/config/config.js"
import { ConfigFile } from "../src/config/schema.js"

export type Feature = "stem" | "decompound" | "normalize" | "trigram" | "fuzzy" | "synonyms" | "bilingual" | "validity" | "keyterms" | "prf"

export const EVAL_MODEL = process.env.EVAL_MODEL === "qwen3-embedding-0.6b" ? "qwen3-embedding-0.6b" as const : "bge-m3" as const
export const EVAL_MODEL_DIR = process.env.EVAL_MODEL_DIR !== undefined && process.env.EVAL_MODEL_DIR !== "" ? process.env.EVAL_MODEL_DIR : null

export const fixedClock = (ms: number): Clock.Clock => {
  const real = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => ms,
    currentTimeMillis: Effect.sync(() => ms),
    unsafeCurrentTimeNanos: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(ms) * 1_000_000n),
    sleep: (d: Duration.Duration) => real.sleep(d)
  }
}

export const evalConfig = (dataDir: string, scopes: ReadonlyArray<string>, features: Partial<Record<Feature, boolean>>, stages?: "b" | "bc"): AppConfigShape => ({
  file: Schema.decodeUnknownSync(ConfigFile)({
    instance: "eval", zone: "Europe/Berlin", public_url: "http://127.0.0.1:8787",
    scopes: scopes.map((name) => stages === undefined ? { name, providers_allowed: [] }
      : { name, providers_allowed: stages === "bc" ? ["local", "typesafe"] : ["local"], reranker: stages === "bc" }),
    search: {
      lexical: { features },
      ...(stages === undefined || EVAL_MODEL_DIR === null ? {} : { semantic: { enabled: true, model: EVAL_MODEL, model_dir: EVAL_MODEL_DIR } }),
      ...(stages === "bc" ? { reranker: { enabled: true } } : {})
    },
    backup: { kind: "copy", directory: "/var/backups/groundnote-eval", deadman_url: "http://127.0.0.1:9/deadman" }
  }, { onExcessProperty: "error" }),
  env: {
    authMode: "dev-token", sessionSecret: Redacted.make("e".repeat(40)), opsToken: Redacted.make("f".repeat(40)),
    devMcpToken: null, devApprovalToken: null, devApiToken: null, devEmail: "eval@example.com", host: "127.0.0.1",
    port: 8787, allowNonLoopback: false, dataDir, configPath: join(dataDir, "groundnote.json"),
    typesafeApiKey: stages === "bc" && process.env.TYPESAFE_API_KEY !== undefined ? Redacted.make(process.env.TYPESAFE_API_KEY) : null,
    ...(stages === "bc" && process.env.TYPESAFE_BASE_URL !== undefined ? { typesafeBaseUrl: process.env.TYPESAFE_BASE_URL } : {})
  }
})
