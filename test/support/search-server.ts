/**
 * A real server with scope "sales" and a service grant that may read it, for the tests of how the
 * public listener serves POST /v1/search with a ReadPool layer of the test's own.
 */
import { Effect } from "effect"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import type { ServiceOverrides } from "../../src/services.js"
import { tempDir, testConfig } from "./env.js"
import { startServer, type TestServer } from "./server.js"

export interface SalesSearchServer {
  readonly server: TestServer
  /** POST /v1/search for "Lieferzeit" in sales; its status once the body is read */
  readonly search: () => Promise<number>
  readonly close: () => Promise<void>
}

export const salesSearchServer = async (
  prefix: string,
  readPool: NonNullable<ServiceOverrides["readPool"]>,
  services: Omit<ServiceOverrides, "readPool"> = {}
): Promise<SalesSearchServer> => {
  const t = tempDir(prefix)
  const server = await startServer(testConfig(t.dir), { services: { ...services, readPool } })
  const token = await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const grant = yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] }))
    return "token" in grant ? grant.token : ""
  }))
  const search = async () => {
    const res = await fetch(`${server.url}/v1/search`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
    })
    await res.arrayBuffer()
    return res.status
  }
  return {
    server, search,
    close: async () => {
      await server.close()
      t.cleanup()
    }
  }
}
