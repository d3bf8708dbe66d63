#!/usr/bin/env node
/**
 * The operator's CLI `groundnote` (gaps.md §9, architecture.md §11 "CLI groundnote"). Exit codes:
 * 0 ok, 1 error, 2 usage, 3 a check failed. It never confirms, rejects, revokes, reviews,
 * archives, reverts or redacts (AT6).
 *
 *   ops commands      status, scope, grants, backup: thin clients of the ops socket
 *   api commands      sources, search, rules, proposals, propose, feedback, approvals, export:
 *                     thin clients of /v1 with the service's own request schemas
 *   host commands     serve, restore, doctor (and backup nightly's groundnote.json): the only
 *                     dynamic import of src/ops/**, ../main.js, brings the service and the CLI
 *                     host (cli-host.ts)
 *
 * --help is ours (cli-help.ts): plain text, one example per command. What the parser says when it
 * refuses the arguments is said in the CLI's words (cli-usage.ts): `groundnote: usage: …`, exit 2.
 */
import { Command, Options } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { VERSION } from "../version.js"
import { apiCommands } from "./cli-api-commands.js"
import { backup, doctor, restore } from "./cli-backup.js"
import { exitCodeOf, failureLine, jsonOption, opsCommands } from "./cli-commands.js"
import { config } from "./cli-config.js"
import { helpRequest } from "./cli-help.js"
import type { CliHost } from "./cli-host.js"
import { printJson } from "./cli-output.js"
import { parserUsage } from "./cli-usage.js"

const main = Effect.promise(() => import("../main.js"))
const host: Effect.Effect<CliHost> = Effect.map(main, (m) => m.cliHost)

const version = Command.make("version", { json: jsonOption }, ({ json }) => (json ? printJson({ version: VERSION }) : Console.log(VERSION)))

// --json everywhere (gaps.md §9): serve's stdout is always its JSON log lines (a refusal too), so
// the option is accepted and changes nothing
const serve = Command.make("serve", {
  demo: Options.boolean("demo").pipe(Options.withDescription("Seed and use a demo data dir (./demo-data) for a first look.")),
  json: jsonOption
}, ({ demo }) => Effect.flatMap(main, (m) => m.serve({ demo })))

const root = Command.make("groundnote").pipe(Command.withSubcommands([
  version, serve, config, ...opsCommands, backup(host), restore(host), doctor(host), ...apiCommands
]))

const cli = Command.run(root, { name: "groundnote", version: VERSION })

const asked = helpRequest(process.argv.slice(2))
if (asked.kind === "help") {
  process.stdout.write(`${asked.text}\n`)
} else if (asked.kind === "usage") {
  if (asked.message !== null) process.stderr.write(`groundnote: usage: ${asked.message}\n`)
  if (asked.text !== "") process.stderr.write(`${asked.text}\n`)
  process.exitCode = 2
} else {
  // the parser's own sentences are kept back and said as the CLI's usage lines (cli-usage.ts)
  const usage: Array<string> = []
  const parsing = Console.consoleWith((console) =>
    Console.withConsole(cli(process.argv), {
      ...console,
      error: (...parts: ReadonlyArray<unknown>) => {
        const lines = parts.length === 1 && typeof parts[0] === "string" ? parserUsage(process.argv.slice(2), parts[0]) : null
        if (lines === null) return console.error(...parts)
        usage.push(...lines)
        return Effect.void
      }
    }))
  parsing.pipe(
    Effect.tapErrorCause((cause) => {
      const lines = usage.length > 0 ? usage : [failureLine(cause)].filter((l) => l !== null)
      return lines.length === 0 ? Effect.void : Console.error(lines.join("\n"))
    }),
    Effect.provide(NodeContext.layer),
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => onExit(exitCodeOf(exit))
    })
  )
}
