/**
 * The commands a shell user runs most, answered without the parser and without Effect (loading
 * them costs most of a second): version, config path, status and grants list, each exactly as
 * `groundnote <command>` or `groundnote <command> --json`. Every other form of argv goes to the
 * command tree (cli-run.ts), which parses it, refuses it in the CLI's words or runs it. The
 * answers are the parsed commands' own: the same renderers (cli-ops-render.ts), the same ops
 * client (ops-socket.ts), the same failure line and exit codes (0 ok, 1 error).
 */
import { homedir } from "node:os"
import type { GrantOut } from "../contracts/grants.js"
import { VERSION } from "../version.js"
import { credentialsPath } from "./cli-credentials-path.js"
import { renderGrants, renderStatus, type StatusView } from "./cli-ops-render.js"
import { failureText, jsonText } from "./cli-text.js"
import { opsCall, OpsFailure, resolveOpsTarget } from "./ops-socket.js"

const QUICK = ["version", "config path", "status", "grants list"] as const
export type QuickName = (typeof QUICK)[number]

export interface QuickCommand {
  readonly name: QuickName
  readonly json: boolean
}

/** The quick command argv asks for (its words, then --json or nothing), else null. */
export const quickCommand = (args: ReadonlyArray<string>): QuickCommand | null => {
  const json = args[args.length - 1] === "--json"
  const words = json ? args.slice(0, -1) : args
  if (words.some((w) => w.startsWith("-"))) return null
  const name = QUICK.find((q) => q === words.join(" "))
  return name === undefined ? null : { name, json }
}

const out = (text: string): void => {
  process.stdout.write(`${text}\n`)
}
const err = (text: string): void => {
  process.stderr.write(`${text}\n`)
}

/** One ops answer: JSON on stdout with --json, else its human form on stderr. */
const opsAnswer = async (json: boolean, route: "opsStatus" | "grantsList", human: (answer: unknown) => string): Promise<void> => {
  const answer = await opsCall(resolveOpsTarget(process.env, process.cwd()), route)
  if (json) out(jsonText(answer))
  else err(human(answer))
}

/** Runs a quick command; its exit code. */
export const runQuick = async (command: QuickCommand): Promise<number> => {
  const { json, name } = command
  try {
    switch (name) {
      case "version":
        out(json ? jsonText({ version: VERSION }) : VERSION)
        break
      case "config path": {
        const path = credentialsPath(process.env, homedir())
        out(json ? jsonText({ path }) : path)
        break
      }
      case "status":
        await opsAnswer(json, "opsStatus", (a) => renderStatus(a as StatusView))
        break
      case "grants list":
        await opsAnswer(json, "grantsList", (a) => renderGrants(a as ReadonlyArray<GrantOut>))
        break
    }
    return 0
  } catch (e) {
    if (!(e instanceof OpsFailure)) {
      err(failureText(`internal: ${e instanceof Error ? e.message : String(e)}`))
      return 1
    }
    if (json) out(jsonText(e.body ?? { error: e.code, message: e.message }))
    err(failureText(`${e.code}: ${e.message === "" ? "CliError" : e.message}`))
    return 1
  }
}
