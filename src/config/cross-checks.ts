/** The start checks that need both groundnote.json and the environment (architecture.md §3). */
import { Effect } from "effect"
import type { Env } from "./config.js"
import { refuse, type StartRefusal } from "./refusal.js"
import type { ConfigFile } from "./schema.js"

const isHttps = (url: string): boolean => {
  try {
    return new URL(url).protocol === "https:"
  } catch {
    return false
  }
}

/** The checks that need both the file and the environment (architecture.md §3). */
export const checkConfigAgainstEnv = (file: ConfigFile, env: Env): Effect.Effect<void, StartRefusal> =>
  Effect.gen(function* () {
    if (env.authMode !== "cloudflare-access") return
    if (file.access === undefined) {
      return yield* refuse(
        "access-missing",
        `GROUNDNOTE_AUTH_MODE is cloudflare-access, but ${env.configPath} has no "access" key: add access with team_domain, aud_mcp, aud_approval and aud_api (see config/README.md)`
      )
    }
    if (!isHttps(file.public_url)) {
      return yield* refuse(
        "public-url-not-https",
        `public_url in ${env.configPath} is ${JSON.stringify(file.public_url)}, but cloudflare-access mode needs an https:// URL: set public_url to the https address behind Cloudflare Access`
      )
    }
    if (!isHttps(file.access.team_domain)) {
      return yield* refuse(
        "team-domain-not-https",
        `access.team_domain in ${env.configPath} is ${JSON.stringify(file.access.team_domain)}: set it to https://<team>.cloudflareaccess.com`
      )
    }
  })
