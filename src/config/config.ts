/**
 * The Config service: groundnote.json plus the environment (gaps.md §2). Secrets are Redacted
 * and never logged. Built by config/load.ts; tests build it with config/load.ts too, from a
 * temp data dir and an environment record.
 */
import { Context, type Redacted } from "effect"
import type { ConfigFile } from "./schema.js"

export type AuthMode = "cloudflare-access" | "dev-token"

export interface Env {
  readonly authMode: AuthMode
  readonly sessionSecret: Redacted.Redacted<string>
  readonly opsToken: Redacted.Redacted<string>
  /** dev-token mode only */
  readonly devMcpToken: Redacted.Redacted<string> | null
  readonly devApprovalToken: Redacted.Redacted<string> | null
  readonly devApiToken: Redacted.Redacted<string> | null
  readonly devEmail: string | null
  readonly host: string
  readonly port: number
  readonly allowNonLoopback: boolean
  /** absolute path of GROUNDNOTE_DATA_DIR (default ./data) */
  readonly dataDir: string
  /** absolute path of GROUNDNOTE_CONFIG (default ./groundnote.json) */
  readonly configPath: string
  readonly typesafeApiKey: Redacted.Redacted<string> | null
  /** TYPESAFE_BASE_URL as set (checked where it is used: stage c and doctor); absent = the default */
  readonly typesafeBaseUrl?: string
}

export interface AppConfigShape {
  readonly file: ConfigFile
  readonly env: Env
}

export class AppConfig extends Context.Tag("Groundnote/Config")<AppConfig, AppConfigShape>() {}

export const scopeNames = (config: AppConfigShape): ReadonlyArray<string> => config.file.scopes.map((s) => s.name)
