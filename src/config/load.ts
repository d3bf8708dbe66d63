/**
 * Builds the Config service from the environment (gaps.md §2) and groundnote.json
 * (architecture.md §3). Every failure is a StartRefusal whose message names the variable, key
 * or path and says the fix. No message ever contains the value of a secret.
 */
import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import { Effect, Either, Layer, Redacted, Schema } from "effect"
import { issuesOf, type Issue } from "../contracts/errors.js"
import { AppConfig, type AppConfigShape, type AuthMode, type Env } from "./config.js"
import { ConfigFile } from "./schema.js"

export class StartRefusal extends Schema.TaggedError<StartRefusal>()("StartRefusal", {
  code: Schema.String,
  message: Schema.String,
  /** config-invalid only: every problem of groundnote.json with its path */
  issues: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
}) {}

const refuse = (code: string, message: string): Effect.Effect<never, StartRefusal> =>
  Effect.fail(new StartRefusal({ code, message }))

export const AUTH_MODES: ReadonlyArray<AuthMode> = ["cloudflare-access", "dev-token"]
export const SECRET_MIN_LENGTH = 32
export const DEFAULT_HOST = "127.0.0.1"
export const DEFAULT_PORT = 8787
export const LOOPBACK_HOSTS: ReadonlyArray<string> = ["127.0.0.1", "::1", "localhost"]
export const DEFAULT_DATA_DIR = "./data"
export const DEFAULT_CONFIG_PATH = "./groundnote.json"
export const ALLOW_NON_LOOPBACK_VAR = "GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK"

/** An empty variable counts as unset (an `X=` line in an env file). */
const get = (env: Record<string, string | undefined>, name: string): string | undefined => {
  const value = env[name]
  return value === undefined || value === "" ? undefined : value
}

/** Length in characters (code points), not UTF-16 units. */
const charLength = (s: string): number => [...s].length

interface SecretSpec {
  readonly name: string
  readonly required: boolean
}

const ALWAYS_SECRETS: ReadonlyArray<SecretSpec> = [
  { name: "GROUNDNOTE_SESSION_SECRET", required: true },
  { name: "GROUNDNOTE_OPS_TOKEN", required: true }
]
const DEV_SECRETS: ReadonlyArray<SecretSpec> = [
  { name: "GROUNDNOTE_DEV_MCP_TOKEN", required: true },
  { name: "GROUNDNOTE_DEV_APPROVAL_TOKEN", required: true },
  { name: "GROUNDNOTE_DEV_API_TOKEN", required: false }
]

/** Printable ASCII without spaces, one `@`, a domain of dot-separated labels. */
const EMAIL_RE = /^[\x21-\x3f\x41-\x7e]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/

/** Reads and checks the environment (gaps.md §2, architecture.md §3 "Refuse start when"). */
export const readEnv = (
  env: Record<string, string | undefined>,
  cwd: string
): Effect.Effect<Env, StartRefusal> =>
  Effect.gen(function* () {
    const modeText = get(env, "GROUNDNOTE_AUTH_MODE")
    if (modeText === undefined) {
      return yield* refuse(
        "auth-mode-invalid",
        "GROUNDNOTE_AUTH_MODE is not set: set it to cloudflare-access (production) or dev-token (local development)"
      )
    }
    const authMode = AUTH_MODES.find((m) => m === modeText)
    if (authMode === undefined) {
      return yield* refuse(
        "auth-mode-invalid",
        `GROUNDNOTE_AUTH_MODE has the unknown value ${JSON.stringify(modeText.slice(0, 40))}: set it to cloudflare-access or dev-token`
      )
    }
    const dev = authMode === "dev-token"

    if (get(env, "GROUNDNOTE_OPS_PORT") !== undefined) {
      return yield* refuse(
        "ops-port-set",
        "GROUNDNOTE_OPS_PORT is set, but the ops listener is now the Unix socket <GROUNDNOTE_DATA_DIR>/ops.sock: unset GROUNDNOTE_OPS_PORT"
      )
    }

    if (!dev) {
      const devVars = Object.keys(env)
        .filter((k) => k.startsWith("GROUNDNOTE_DEV_") && get(env, k) !== undefined)
        .sort()
      if (devVars.length > 0) {
        return yield* refuse(
          "dev-variables-in-access-mode",
          `GROUNDNOTE_AUTH_MODE is cloudflare-access, but ${devVars.join(", ")} ${devVars.length === 1 ? "is" : "are"} set: unset ${devVars.length === 1 ? "it" : "them"} (dev variables are for dev-token mode only)`
        )
      }
    }

    const specs = dev ? [...ALWAYS_SECRETS, ...DEV_SECRETS] : ALWAYS_SECRETS
    const secrets = new Map<string, string>()
    for (const spec of specs) {
      const value = get(env, spec.name)
      if (value === undefined) {
        if (!spec.required) continue
        return yield* refuse(
          "secret-missing",
          `${spec.name} is not set: set it to a random value of at least ${SECRET_MIN_LENGTH} characters (e.g. openssl rand -hex 32)`
        )
      }
      const length = charLength(value)
      if (length < SECRET_MIN_LENGTH) {
        return yield* refuse(
          "secret-too-short",
          `${spec.name} has ${length} characters, at least ${SECRET_MIN_LENGTH} are required: set it to a longer random value (e.g. openssl rand -hex 32)`
        )
      }
      secrets.set(spec.name, value)
    }
    const entries = [...secrets.entries()]
    for (const [i, [a, va]] of entries.entries()) {
      for (const [b, vb] of entries.slice(i + 1)) {
        if (va === vb) {
          return yield* refuse(
            "secrets-equal",
            `${a} and ${b} have the same value: give each secret its own random value (e.g. openssl rand -hex 32)`
          )
        }
      }
    }

    let devEmail: string | null = null
    if (dev) {
      const raw = get(env, "GROUNDNOTE_DEV_EMAIL")
      if (raw === undefined) {
        return yield* refuse(
          "dev-email-missing",
          "GROUNDNOTE_DEV_EMAIL is not set: in dev-token mode set it to the e-mail address of the dev person (it needs an active person grant)"
        )
      }
      const email = raw.toLowerCase()
      if (!EMAIL_RE.test(email)) {
        return yield* refuse(
          "dev-email-invalid",
          "GROUNDNOTE_DEV_EMAIL is not an e-mail address of printable ASCII (local@domain, no spaces): set it to the dev person's e-mail address"
        )
      }
      devEmail = email
    }

    const host = get(env, "GROUNDNOTE_HOST") ?? DEFAULT_HOST
    const portText = get(env, "GROUNDNOTE_PORT")
    let port = DEFAULT_PORT
    if (portText !== undefined) {
      const n = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN
      if (!Number.isInteger(n) || n < 1 || n > 65535) {
        return yield* refuse(
          "port-invalid",
          `GROUNDNOTE_PORT is ${JSON.stringify(portText.slice(0, 20))}: set it to an integer from 1 to 65535 or unset it (default ${DEFAULT_PORT})`
        )
      }
      port = n
    }
    const allowNonLoopback = get(env, ALLOW_NON_LOOPBACK_VAR) === "true"
    if (dev && !allowNonLoopback && !LOOPBACK_HOSTS.includes(host.toLowerCase())) {
      return yield* refuse(
        "non-loopback-host",
        `GROUNDNOTE_HOST is ${JSON.stringify(host)}, which is not a loopback address, and GROUNDNOTE_AUTH_MODE is dev-token: set GROUNDNOTE_HOST to 127.0.0.1, ::1 or localhost, or set ${ALLOW_NON_LOOPBACK_VAR}=true if you really mean to expose dev tokens`
      )
    }

    const secret = (name: string): Redacted.Redacted<string> | null => {
      const value = secrets.get(name)
      return value === undefined ? null : Redacted.make(value)
    }
    const required = (name: string): Redacted.Redacted<string> => {
      const value = secrets.get(name)
      if (value === undefined) throw new Error(`unreachable: ${name} checked above`)
      return Redacted.make(value)
    }
    const typesafe = get(env, "TYPESAFE_API_KEY")

    const result: Env = {
      authMode,
      sessionSecret: required("GROUNDNOTE_SESSION_SECRET"),
      opsToken: required("GROUNDNOTE_OPS_TOKEN"),
      devMcpToken: secret("GROUNDNOTE_DEV_MCP_TOKEN"),
      devApprovalToken: secret("GROUNDNOTE_DEV_APPROVAL_TOKEN"),
      devApiToken: secret("GROUNDNOTE_DEV_API_TOKEN"),
      devEmail,
      host,
      port,
      allowNonLoopback,
      dataDir: resolve(cwd, get(env, "GROUNDNOTE_DATA_DIR") ?? DEFAULT_DATA_DIR),
      configPath: resolve(cwd, get(env, "GROUNDNOTE_CONFIG") ?? DEFAULT_CONFIG_PATH),
      typesafeApiKey: typesafe === undefined ? null : Redacted.make(typesafe)
    }
    return result
  })

// ---------------------------------------------------------------------------------------------
// groundnote.json

/** Offset of the first JSON syntax error in `text` (JSON.parse does not always say where). */
export const jsonErrorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++
  }
  const fail = (): never => {
    throw i
  }
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail()
      i++
    }
  }
  const string = () => {
    i++ // opening quote
    for (;;) {
      if (i >= text.length) fail()
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return
      }
      if (c < 0x20) fail()
      if (c === 0x5c) {
        i++
        const e = text[i]
        if (e === "u") {
          i++
          for (let k = 0; k < 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? "")) fail()
            i++
          }
        } else if (e !== undefined && "\"\\/bfnrt".includes(e)) {
          i++
        } else {
          fail()
        }
      } else {
        i++
      }
    }
  }
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i))
    if (m === null) fail()
    else i += m[0].length
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") {
        i++
        return
      }
      for (;;) {
        ws()
        if (text[i] !== "\"") fail()
        string()
        ws()
        if (text[i] !== ":") fail()
        i++
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") {
          i++
          return
        }
        fail()
      }
    } else if (c === "[") {
      i++
      ws()
      if (text[i] === "]") {
        i++
        return
      }
      for (;;) {
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") {
          i++
          return
        }
        fail()
      }
    } else if (c === "\"") {
      string()
    } else if (c === "t") {
      literal("true")
    } else if (c === "f") {
      literal("false")
    } else if (c === "n") {
      literal("null")
    } else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
      number()
    } else {
      fail()
    }
  }
  try {
    value()
    ws()
    if (i < text.length) fail()
    return -1
  } catch (at) {
    if (typeof at === "number") return Math.min(at, text.length)
    throw at
  }
}

const lineColumn = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset)
  const lines = before.split("\n")
  return { line: lines.length, column: (lines[lines.length - 1] ?? "").length + 1 }
}

const EXPECTED_RE = /^Expected (.+), actual ([\s\S]+)$/

/**
 * Makes the schema's issues readable: drops the "Expected undefined" echo of every optional key
 * (JSON has no undefined), merges the alternatives of a literal union into one line, and
 * shortens struct descriptions to "an object".
 */
export const tidyIssues = (issues: ReadonlyArray<Issue>): Array<Issue> => {
  const under = (parent: string, child: string) =>
    parent === "(root)" ||
    child === parent ||
    child.startsWith(`${parent}.`) ||
    child.startsWith(`${parent}[`)
  const kept = issues.filter((issue, index) => {
    if (!issue.message.startsWith("Expected undefined, actual ")) return true
    return !issues.some((other, j) => j !== index && !other.message.startsWith("Expected undefined, actual ") && under(issue.path, other.path))
  })
  const out: Array<Issue> = []
  for (const issue of kept) {
    const message = issue.message === "is missing"
      ? "is missing (add it)"
      : issue.message.replace(/^Expected (?:\{[\s\S]*\}|Struct \(Encoded side\)), actual /, "Expected an object, actual ")
    const m = EXPECTED_RE.exec(message)
    const last = out[out.length - 1]
    const lm = last === undefined ? null : EXPECTED_RE.exec(last.message)
    if (last !== undefined && m !== null && lm !== null && last.path === issue.path && lm[2] === m[2]) {
      out[out.length - 1] = { path: issue.path, message: `Expected ${lm[1]} | ${m[1]}, actual ${m[2]}` }
      continue
    }
    if (last !== undefined && last.path === issue.path && last.message === message) continue
    out.push({ path: issue.path, message })
  }
  return out
}

/**
 * Parses the text of groundnote.json strictly: unknown keys fail and name their full path.
 * `source` names the file in messages.
 */
export const parseConfigFile = (
  text: string,
  source: string = "groundnote.json"
): Effect.Effect<ConfigFile, StartRefusal> =>
  Effect.gen(function* () {
    const body = text.startsWith("\uFEFF") ? text.slice(1) : text
    let json: unknown
    try {
      json = JSON.parse(body)
    } catch (e) {
      const found = jsonErrorOffset(body)
      const offset = found === -1 ? 0 : found
      const { line, column } = lineColumn(body, offset)
      const reason = (e instanceof Error ? e.message : String(e))
        .replace(/, "[\s\S]*" is not valid JSON$/, "")
        .replace(/ in JSON at position \d+[\s\S]*$/, "")
      return yield* refuse(
        "config-invalid",
        `${source} is not valid JSON at line ${line}, column ${column} (position ${offset}): ${reason}. Fix the syntax there (plain JSON: no comments, no trailing commas)`
      )
    }
    const decoded = Schema.decodeUnknownEither(ConfigFile)(json, { onExcessProperty: "error", errors: "all" })
    if (Either.isLeft(decoded)) {
      const issues = tidyIssues(issuesOf(decoded.left))
      const lines = issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")
      return yield* Effect.fail(new StartRefusal({
        code: "config-invalid",
        message: `${source} is invalid (${issues.length} ${issues.length === 1 ? "problem" : "problems"}; fix each key named below, see config/README.md):\n${lines}`,
        issues
      }))
    }
    return decoded.right
  })

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

/** Environment + groundnote.json → the Config service, or the first reason to refuse start. */
export const loadConfig = (
  env: Record<string, string | undefined>,
  cwd: string
): Effect.Effect<AppConfigShape, StartRefusal> =>
  Effect.gen(function* () {
    const checked = yield* readEnv(env, cwd)
    const path = checked.configPath
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (e) =>
        new StartRefusal({
          code: "config-unreadable",
          message: `the config file ${path} ${describeReadError(e)}: set GROUNDNOTE_CONFIG to the path of your groundnote.json, or copy config/groundnote.example.json to ${path} and edit it`
        })
    })
    const file = yield* parseConfigFile(text, path)
    yield* checkConfigAgainstEnv(file, checked)
    const config: AppConfigShape = { file, env: checked }
    return config
  })

/** The Config service from process.env and the working directory. */
export const AppConfigLive: Layer.Layer<AppConfig, StartRefusal> = Layer.effect(
  AppConfig,
  Effect.suspend(() => loadConfig(process.env, process.cwd()))
)
