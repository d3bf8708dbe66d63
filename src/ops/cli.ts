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
 *                     dynamic import of the service, ../main.js, brings the service and the CLI
 *                     host (cli-host.ts)
 *
 * This file loads only what a command needs, so the CLI starts in the time a shell user expects:
 * --help is ours (cli-help.ts, plain text); version, config path, status and grants list with
 * at most --json are answered by cli-quick.ts without the parser; every other form of argv
 * loads the command tree (cli-run.ts), and ../main.js is loaded only by a command that needs
 * the service.
 */
import { helpRequest } from "./cli-help.js"
import { quickCommand, runQuick } from "./cli-quick.js"

const args = process.argv.slice(2)
const asked = helpRequest(args)
if (asked.kind === "help") {
  process.stdout.write(`${asked.text}\n`)
} else if (asked.kind === "usage") {
  if (asked.message !== null) process.stderr.write(`groundnote: usage: ${asked.message}\n`)
  if (asked.text !== "") process.stderr.write(`${asked.text}\n`)
  process.exitCode = 2
} else {
  const quick = quickCommand(args)
  if (quick !== null) {
    process.exitCode = await runQuick(quick)
  } else {
    const { runCli } = await import("./cli-run.js")
    runCli(process.argv, () => import("../main.js"))
  }
}
