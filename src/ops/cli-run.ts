/**
 * The command tree of the CLI (@effect/cli) and its run: every form of argv that cli-quick.ts
 * does not answer comes here. What the parser says when it refuses the arguments is said in the
 * CLI's words (cli-usage.ts): `groundnote: usage: …`, exit 2.
 */
import { Command, Options } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Exit } from "effect"
import { VERSION } from "../version.js"
import { apiCommands } from "./cli-api-commands.js"
import { backup, doctor, restore } from "./cli-backup.js"
import { exitCodeOf, failureLine, jsonOption, opsCommands } from "./cli-commands.js"
import { config } from "./cli-config.js"
import { key } from "./cli-keys.js"
import type { CliHost } from "./cli-host.js"
import { printJson } from "./cli-output.js"
import { parserUsage } from "./cli-usage.js"

/** What the CLI takes from the service (../main.js, loaded by cli.ts only when a command needs it). */
export interface ServiceEntry {
  readonly cliHost: CliHost
  readonly serve: (options: { readonly demo: boolean }) => Effect.Effect<unknown, unknown>
}

/** The root command: the tree of every command with its options (--help texts are cli-help.ts's). */
const commandTree = (loadService: () => Promise<ServiceEntry>) => {
  const main = Effect.promise(loadService)
  const host: Effect.Effect<CliHost> = Effect.map(main, (m) => m.cliHost)

  const version = Command.make("version", { json: jsonOption }, ({ json }) => (json ? printJson({ version: VERSION }) : Console.log(VERSION)))

  // --json everywhere (gaps.md §9): serve's stdout is always its JSON log lines (a refusal too), so
  // the option is accepted and changes nothing
  const serve = Command.make("serve", {
    demo: Options.boolean("demo").pipe(Options.withDescription("Seed and use a demo data dir (./demo-data) for a first look.")),
    json: jsonOption
  }, ({ demo }) => Effect.flatMap(main, (m) => m.serve({ demo })))

  return Command.make("groundnote").pipe(Command.withSubcommands([
    version, serve, config, ...opsCommands, key, backup(host), restore(host), doctor(host), ...apiCommands
  ]))
}

/** Parses argv (process.argv's form) with the command tree and runs the command; the process exits with its code. */
export const runCli = (argv: ReadonlyArray<string>, loadService: () => Promise<ServiceEntry>): void => {
  const cli = Command.run(commandTree(loadService), { name: "groundnote", version: VERSION })
  // the parser's own sentences are kept back and said as the CLI's usage lines (cli-usage.ts)
  const usage: Array<string> = []
  const parsing = Console.consoleWith((console) =>
    Console.withConsole(cli(argv), {
      ...console,
      error: (...parts: ReadonlyArray<unknown>) => {
        const lines = parts.length === 1 && typeof parts[0] === "string" ? parserUsage(argv.slice(2), parts[0]) : null
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
      // serve stopped by SIGTERM or SIGINT has done its work (systemctl stop): 0, not an error
      teardown: (exit, onExit) => onExit(argv[2] === "serve" && Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? 0 : exitCodeOf(exit))
    })
  )
}
