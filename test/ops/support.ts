/** Test support for the ops listener: start it in-process on a temp data dir, call it over the socket. */
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { OpsListenerLive } from "../../src/http/ops-listener.js"
import { storeLayer } from "../support/env.js"
import type { Stores } from "../support/run.js"

export const OPS_TOKEN = "o".repeat(40) // testConfig's GROUNDNOTE_OPS_TOKEN

export interface Started {
  readonly socket: string
  /** runs an effect against the listener's own stores */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>
  readonly stop: () => Promise<void>
}

/** Builds the stores and the ops listener on `config`'s data dir; resolves once it listens. */
export const startListener = async (config: AppConfigShape, outer?: Layer.Layer<never>): Promise<Started> => {
  const scope = Effect.runSync(Scope.make())
  const layer = OpsListenerLive.pipe(Layer.provideMerge(storeLayer(config)))
  const build = Layer.buildWithScope(layer, scope)
  const context = await Effect.runPromise(outer === undefined ? build : Effect.provide(build, outer))
  return {
    socket: join(config.env.dataDir, "ops.sock"),
    run: (effect) => Effect.runPromise(Effect.provide(effect, context as Context.Context<Stores>)),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

export interface Answer {
  readonly status: number
  readonly text: string
  readonly json: unknown
  readonly headers: Record<string, string | Array<string> | undefined>
}

export interface CallOptions {
  readonly token?: string | null
  readonly authorization?: string
  readonly body?: unknown
  readonly raw?: string | Buffer
  /** send the raw body chunked (no content-length) */
  readonly chunked?: boolean
}

/** One HTTP request over the Unix socket. */
export const call = (socketPath: string, method: string, path: string, options: CallOptions = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    const token = options.token === undefined ? OPS_TOKEN : options.token
    if (options.authorization !== undefined) headers.authorization = options.authorization
    else if (token !== null) headers.authorization = `Bearer ${token}`
    const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    if (payload !== undefined) {
      headers["content-type"] = "application/json"
      if (options.chunked !== true) headers["content-length"] = String(Buffer.byteLength(payload))
    }
    const req = request({ socketPath, method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, text, json, headers: res.headers })
      })
      res.on("error", reject)
    })
    req.on("error", reject)
    if (payload !== undefined && options.chunked === true) {
      const buf = Buffer.from(payload)
      for (let i = 0; i < buf.length; i += 16 * 1024) req.write(buf.subarray(i, i + 16 * 1024))
      req.end()
    } else {
      req.end(payload)
    }
  })

/** Inodes of the TCP sockets this process listens on (Linux /proc; null elsewhere). */
export const ownTcpListeners = (): Set<string> | null => {
  let fds: Array<string>
  try {
    fds = readdirSync("/proc/self/fd")
  } catch {
    return null
  }
  const own = new Set<string>()
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
      if (m?.[1] !== undefined) own.add(m[1])
    } catch {
      // closed meanwhile
    }
  }
  const out = new Set<string>()
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/)
      const inode = cols[9]
      if (cols[3] === "0A" && inode !== undefined && own.has(inode)) out.add(inode) // 0A = LISTEN
    }
  }
  return out
}

/** Paths of the Unix sockets this process listens on (Linux /proc; null elsewhere). */
export const ownUnixListeners = (): Array<string> | null => {
  let text: string
  try {
    text = readFileSync("/proc/self/net/unix", "utf8")
  } catch {
    return null
  }
  const own = new Set<string>()
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
      if (m?.[1] !== undefined) own.add(m[1])
    } catch {
      // closed meanwhile
    }
  }
  const out: Array<string> = []
  for (const line of text.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/)
    // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = __SO_ACCEPTCON (listening)
    if (cols[3] === "00010000" && cols[6] !== undefined && own.has(cols[6]) && cols[7] !== undefined) out.push(cols[7])
  }
  return out
}
