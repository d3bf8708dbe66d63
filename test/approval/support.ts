/**
 * The approval tests' server: the real public listener and services (src/http/server.ts, as
 * test/support/server.ts runs them) on a free loopback port that public_url names, so the
 * browser's Origin is the configured origin. Seeds a person grant, a feeder and the dev API token.
 */
import { createServer as createNetServer } from "node:net"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { publicListener } from "../../src/http/server.js"
import { ServicesLive } from "../../src/services.js"
import { tempDir, testConfig } from "../support/env.js"
import type { Stores } from "../support/run.js"
import type { TestServer } from "../support/server.js"

export const DEV_API = "p".repeat(40)
export const APPROVAL_TOKEN = "a".repeat(40)
export const SESSION_SECRET = "s".repeat(40)
export const DEV_EMAIL = "dev@example.com"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createNetServer()
    srv.once("error", reject)
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      srv.close(() => resolve(port))
    })
  })

export interface ApprovalServer extends TestServer {
  readonly config: AppConfigShape
  readonly feeder: string
  readonly cleanup: () => Promise<void>
}

/** A server whose public_url is its own loopback origin; scopes `sales` and `ops` created. */
export const startApprovalServer = async (o: {
  scopes?: ReadonlyArray<string>
  /** the scopes whose file is created (default: all) */
  created?: ReadonlyArray<string>
  personScopes?: ReadonlyArray<string>
  rights?: ReadonlyArray<"read" | "propose" | "decide" | "redact">
  /** false: the dev person holds no grant (default: a person grant on personScopes) */
  personGrant?: boolean
  /** more keys of groundnote.json (e.g. the approval block) */
  configure?: Record<string, unknown>
} = {}): Promise<ApprovalServer> => {
  const t = tempDir("gn-approval-")
  const scopes = o.scopes ?? ["sales", "ops"]
  const port = await freePort()
  const base = testConfig(t.dir, { ...o.configure, public_url: `http://127.0.0.1:${port}`, scopes: scopes.map((name) => ({ name, providers_allowed: [] })) })
  const config: AppConfigShape = {
    ...base,
    env: { ...base.env, devApiToken: Redacted.make(DEV_API), devApprovalToken: Redacted.make(APPROVAL_TOKEN), sessionSecret: Redacted.make(SESSION_SECRET), devEmail: DEV_EMAIL }
  }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(Layer.provideMerge(ServicesLive(config))))
  await runtime.runPromise(HttpServer.HttpServer.pipe((e) => e))
  const run = <A, E>(effect: Effect.Effect<A, E, Stores>) => runtime.runPromise(effect as Effect.Effect<never, never, never>) as Promise<A>
  const feeder = await run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    for (const s of o.created ?? scopes) yield* store.create(s)
    if (o.personGrant !== false) yield* ops.createGrant({ kind: "person", auth: "email", identity: DEV_EMAIL, scopes: o.personScopes ?? scopes, rights: o.rights ?? ["read", "propose", "decide"] })
    const f = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: [...scopes], rights: ["read", "propose"], label: "feeder" })
    return f.id
  }))
  const close = () => runtime.dispose()
  return {
    url: `http://127.0.0.1:${port}`, run, close, config, feeder,
    cleanup: async () => {
      await close()
      t.cleanup()
    }
  }
}
