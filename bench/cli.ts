/**
 * How fast the built CLI answers a shell user: the median of 10 runs of `node dist/src/ops/cli.js
 * <command>` from spawn to exit, per command, against a real service (the public listener and
 * the ops socket over ServicesLive in this process, as main.ts composes them, on a temp data
 * dir). Goals: version, --help and config path within 150 ms; status and grants list (over the
 * ops socket) within 400 ms. The first row is node's own start (`node -e 0`), the floor under
 * every figure: on a loaded machine it alone can exceed a goal.
 */
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { serviceListeners } from "../src/http/listeners.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { goalLine, stats } from "./support.js"

const CLI = join(import.meta.dirname, "..", "src", "ops", "cli.js")
const RUNS = 10

const COMMANDS: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
  [["version"], 150],
  [["--help"], 150],
  [["config", "path"], 150],
  [["status"], 400],
  [["grants", "list"], 400]
]

/** One run of the CLI, spawn to exit, in ms; a non-zero exit is an error (the figure would lie). */
const runOnce = (args: ReadonlyArray<string>, env: Record<string, string>, argv: ReadonlyArray<string> = [CLI, ...args]): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    const child = spawn(process.execPath, argv, { env, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
    child.on("error", reject)
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      if (code === 0) resolve(ms)
      else reject(new Error(`groundnote ${args.join(" ")} exited ${String(code)}: ${stderr.trim()}`))
    })
  })

export const cliBench = async (): Promise<void> => {
  const root = mkdtempSync(join(tmpdir(), "gn-bench-cli-"))
  const dataDir = join(root, "data")
  mkdirSync(dataDir, { mode: 0o700 })
  const config = benchConfig(dataDir, {}, 0)
  const runtime = ManagedRuntime.make(serviceListeners("127.0.0.1", 0).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  try {
    await runtime.runPromise(Effect.gen(function*() {
      yield* (yield* ScopeStore).create("bench")
      yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read"] })
    }))
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "", HOME: root, XDG_CONFIG_HOME: join(root, "config"),
      GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_OPS_TOKEN: "o".repeat(40)
    }
    console.log(`\nThe CLI's start (node ${CLI.split("/").slice(-3).join("/")}, spawn to exit, median of ${RUNS} runs after one warm-up)`)
    console.log("command          | median ms | min   | max   | goal")
    // the floor: node's own start on this machine now (a loaded machine moves every figure)
    const floor: Array<number> = []
    for (let i = 0; i < RUNS; i++) floor.push(await runOnce([], env, ["-e", "0"]))
    console.log(`${"(node -e 0)".padEnd(16)} | ${stats(floor).median.toFixed(0).padStart(9)} | ${Math.min(...floor).toFixed(0).padStart(5)} | ${Math.max(...floor).toFixed(0).padStart(5)} | -`)
    for (const [args, goal] of COMMANDS) {
      await runOnce(args, env)
      const runs: Array<number> = []
      for (let i = 0; i < RUNS; i++) runs.push(await runOnce(args, env))
      const s = stats(runs)
      const name = args.join(" ")
      console.log(`${name.padEnd(16)} | ${s.median.toFixed(0).padStart(9)} | ${Math.min(...runs).toFixed(0).padStart(5)} | ${Math.max(...runs).toFixed(0).padStart(5)} | ${goal}`)
      console.log(goalLine(`groundnote ${name} ≤ ${goal} ms`, s.median <= goal, `median ${s.median.toFixed(0)} ms of ${RUNS}`))
    }
  } finally {
    await runtime.dispose()
    rmSync(root, { recursive: true, force: true })
  }
}
