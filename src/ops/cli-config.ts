/**
 * config show | path | init: the CLI's credentials file (cli-credentials.ts). init reads the
 * secrets from stdin (one line per --credential; on a terminal without echo), never from argv,
 * and writes the file once with mode 0600.
 */
import { homedir } from "node:os"
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { jsonOption } from "./cli-commands.js"
import {
  checkBaseUrl,
  checkSecret,
  type CredentialKind,
  type CredentialsFile,
  resolveCredentials,
  writeCredentialsFile
} from "./cli-credentials.js"
import { credentialsPath } from "./cli-credentials-path.js"
import { type CliError, cliError, printJson, say, usage, withJsonError } from "./cli-output.js"

const uid = (): number | undefined => process.getuid?.()

/** What `config show` reports: the source, the URL and which credentials are set; never a secret. */
export interface ConfigView {
  readonly file: string
  readonly source: "environment" | "file" | "none"
  readonly url: string | null
  readonly api: "token" | "api_access_jwt" | "both (credentials-ambiguous)" | null
  readonly export: "access_jwt" | null
}

const show = Command.make("show", { json: jsonOption }, ({ json }) =>
  Effect.gen(function*() {
    const file = credentialsPath(process.env, homedir())
    const c = yield* resolveCredentials(process.env, homedir(), uid())
    const view: ConfigView = c === null
      ? { file, source: "none", url: null, api: null, export: null }
      : {
        file,
        source: c.source === "environment" ? "environment" : "file",
        url: c.url ?? null,
        api: c.token !== undefined && c.api_access_jwt !== undefined
          ? "both (credentials-ambiguous)"
          : c.token !== undefined ? "token" : c.api_access_jwt !== undefined ? "api_access_jwt" : null,
        export: c.access_jwt !== undefined ? "access_jwt" : null
      }
    if (json) return yield* printJson(view)
    yield* say([
      `credentials file: ${file}`,
      `source: ${view.source === "none" ? "none (no GROUNDNOTE_URL or credential variable, no file: groundnote config init)" : view.source === "environment" ? "the environment (the file is not read)" : "the file"}`,
      `url: ${view.url ?? "not set"}`,
      `api commands: ${view.api ?? "no credential"}`,
      `export: ${view.export ?? "no credential"}`
    ].join("\n"))
  }).pipe(withJsonError(json)))

const path = Command.make("path", { json: jsonOption }, ({ json }) => {
  const file = credentialsPath(process.env, homedir())
  return json ? printJson({ path: file }) : Console.log(file)
})

const KIND_OF: Readonly<Record<string, CredentialKind>> = { "token": "token", "api-access-jwt": "api_access_jwt", "access-jwt": "access_jwt" }

/** All of stdin as text (a pipe or a file). */
const readAllStdin = (): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const chunks: Array<Buffer> = []
    process.stdin.on("data", (c: Buffer) => chunks.push(c))
    process.stdin.on("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    process.stdin.on("error", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
    process.stdin.resume()
  })

/** One line from the terminal without echo; null when the person pressed Ctrl-C or Ctrl-D. */
const readHidden = (prompt: string): Effect.Effect<string | null> =>
  Effect.async<string | null>((resume) => {
    const stdin = process.stdin
    process.stderr.write(prompt)
    stdin.setRawMode(true)
    stdin.resume()
    let line = ""
    const done = (value: string | null) => {
      stdin.off("data", onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write("\n")
      resume(Effect.succeed(value))
    }
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return done(line)
        if (ch === "\u0003" || ch === "\u0004") return done(null)
        if (ch === "\u007f" || ch === "\b") line = line.slice(0, -1)
        else if (ch >= " ") line += ch
      }
    }
    stdin.on("data", onData)
  })

/** The secrets for `kinds`, in order: lines of stdin, or asked on the terminal without echo. */
const readSecrets = (kinds: ReadonlyArray<CredentialKind>): Effect.Effect<ReadonlyArray<string>, CliError> =>
  Effect.gen(function*() {
    if (process.stdin.isTTY === true) {
      const out: Array<string> = []
      for (const kind of kinds) {
        const s = yield* readHidden(`${kind} (not shown): `)
        if (s === null) return yield* cliError("stdin-invalid", "cancelled: nothing was written")
        out.push(s.trim())
      }
      return out
    }
    const lines = (yield* readAllStdin()).split(/\r?\n/)
    while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
    if (lines.length !== kinds.length) {
      return yield* cliError("stdin-invalid", `stdin has ${lines.length} line(s), ${kinds.length} expected: one secret per --credential, in their order (${kinds.join(", ")})`)
    }
    return lines.map((l) => l.trim())
  })

const init = Command.make("init", {
  json: jsonOption,
  url: Options.text("url").pipe(Options.withDescription("the service's address, e.g. https://groundnote.example.com")),
  credentials: Options.choice("credential", ["token", "api-access-jwt", "access-jwt"]).pipe(
    Options.withDescription("token, api-access-jwt or access-jwt; repeat for more; the secrets come from stdin in this order"),
    Options.atLeast(1)
  )
}, ({ credentials, json, url }) =>
  Effect.gen(function*() {
    const kinds = credentials.map((c) => KIND_OF[c] ?? "token")
    if (new Set(kinds).size !== kinds.length) return yield* usage("each --credential at most once")
    if (kinds.includes("token") && kinds.includes("api_access_jwt")) {
      return yield* usage("--credential token and api-access-jwt exclude each other: the api commands use exactly one")
    }
    const base = yield* checkBaseUrl(url, "--url")
    const file = credentialsPath(process.env, homedir())
    const secrets = yield* readSecrets(kinds)
    const content: Record<string, string> = { url: base }
    for (const [i, kind] of kinds.entries()) {
      const secret = secrets[i] ?? ""
      const problem = checkSecret(kind, secret)
      if (problem !== null) return yield* cliError("stdin-invalid", `${problem}: nothing was written`)
      content[kind] = secret
    }
    yield* writeCredentialsFile(file, content as CredentialsFile)
    if (json) return yield* printJson({ written: file, url: base, credentials: kinds })
    yield* say(`wrote ${file} (mode 0600) with url ${base} and ${kinds.join(", ")}; it is never overwritten (remove it to write new credentials)`)
  }).pipe(withJsonError(json)))

export const config = Command.make("config").pipe(Command.withSubcommands([show, path, init]))
