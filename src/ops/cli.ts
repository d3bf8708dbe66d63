#!/usr/bin/env node
/**
 * The operator's CLI `groundnote` (gaps.md §9). Exit codes: 0 ok, 1 error, 2 usage, 3 a check
 * failed. It never confirms, rejects, revokes, reviews, archives, reverts or redacts (AT6); the
 * service itself is reached only through the dynamic import of ../main.js. The ops commands are
 * thin clients of the ops socket (cli-commands.ts, ops-client.ts, cli-routes.ts).
 */
import { Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { VERSION } from "../version.js"
import { exitCodeOf, failureLine, opsCommands } from "./cli-commands.js"

const version = Command.make("version", {}, () => Console.log(VERSION)).pipe(
  Command.withDescription("Print the version of this build.")
)

const serve = Command.make("serve", {
  demo: Options.boolean("demo").pipe(Options.withDescription("Seed and use a demo data dir (./demo-data) for a first look."))
}, ({ demo }) => Effect.flatMap(Effect.promise(() => import("../main.js")), (main) => main.serve({ demo }))).pipe(
  Command.withDescription("Run the service.")
)

const root = Command.make("groundnote").pipe(Command.withSubcommands([version, serve, ...opsCommands]))

const cli = Command.run(root, { name: "groundnote", version: VERSION })

cli(process.argv).pipe(
  Effect.tapErrorCause((cause) => {
    const line = failureLine(cause)
    return line === null ? Effect.void : Console.error(line)
  }),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => onExit(exitCodeOf(exit))
  })
)
