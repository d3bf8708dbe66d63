/**
 * End-to-end support: the built CLI (`node dist/src/ops/cli.js`) spawned as an operator runs it,
 * and a real service in this process (the public listener on a free loopback port and the ops
 * socket, over ServicesLive on a temp data dir) for the CLI to talk to.
 */
import { spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { type Effect, Layer, ManagedRuntime } from "effect"
import type { JWTVerifyGetKey } from "jose"
import { jwtVerifierLayer } from "../../src/auth/jwt.js"
import type { AppConfigShape } from "../../src/config/config.js"
import { OpsListenerLive } from "../../src/http/ops-listener.js"
import { publicListener } from "../../src/http/server.js"
import { ServicesLive } from "../../src/services.js"
import type { captureLogs } from "../support/logs.js"
import type { Stores } from "../support/run.js"

export const ROOT = join(import.meta.dirname, "..", "..")
export const CLI = join(ROOT, "dist", "src", "ops", "cli.js")

/** The environment without any GROUNDNOTE_* variable (and no XDG_CONFIG_HOME: tests set their own). */
export const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("GROUNDNOTE_") && k !== "XDG_CONFIG_HOME" && !k.startsWith("TYPESAFE_") && v !== undefined) env[k] = v
  }
  return env
}

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliOptions {
  readonly cwd?: string
  /** written to stdin, which is then closed (default: stdin closed at once) */
  readonly stdin?: string
  readonly timeoutMs?: number
  /** options of node itself, before the CLI's path */
  readonly nodeArgs?: ReadonlyArray<string>
}

/**
 * Node options that collect garbage every 20 ms in the CLI, as V8 does at its own moments on a
 * busy instance: what a GC can lose (a weakly held timer or signal) is lost at once.
 */
export const GC_PRESSURE: ReadonlyArray<string> = ["--expose-gc", "--import", "data:text/javascript,setInterval(() => globalThis.gc(), 20).unref()"]

/** Spawns the built CLI asynchronously (a service in this process answers from its event loop). */
export const cli = (args: ReadonlyArray<string>, env: Record<string, string>, options: CliOptions = {}): Promise<Result> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], { env, cwd: options.cwd ?? ROOT, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
    child.stdin.end(options.stdin ?? "")
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** The --json answer on stdout. */
export const json = (r: Result): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>
  } catch {
    throw new Error(`stdout is not JSON (exit ${String(r.code)}):\n${r.stdout}\nstderr:\n${r.stderr}`)
  }
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address()
      srv.close(() => (typeof addr === "object" && addr !== null ? resolve(addr.port) : reject(new Error("no port"))))
    })
  })

export interface Service {
  readonly url: string
  readonly socket: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>
  readonly stop: () => Promise<void>
}

/** The public listener on a free loopback port (or `port`) and the ops socket, over ServicesLive. */
export const startService = async (
  config: AppConfigShape,
  options: { readonly keys?: JWTVerifyGetKey; readonly logs?: ReturnType<typeof captureLogs>; readonly port?: number } = {}
): Promise<Service> => {
  const services = ServicesLive(config, options.keys === undefined ? {} : { jwt: jwtVerifierLayer(options.keys) })
  const layer = Layer.merge(OpsListenerLive, publicListener("127.0.0.1", options.port ?? 0)).pipe(Layer.provideMerge(services))
  const runtime = ManagedRuntime.make(options.logs === undefined ? layer : Layer.provide(layer, options.logs.layer))
  const address = await runtime.runPromise(HttpServer.HttpServer.pipe((e) => e)).then((s) => s.address)
  if (address._tag !== "TcpAddress") throw new Error("no tcp address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    socket: join(config.env.dataDir, "ops.sock"),
    run: (effect) => runtime.runPromise(effect as Effect.Effect<never, never, never>),
    stop: () => runtime.dispose()
  }
}
