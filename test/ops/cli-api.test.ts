/**
 * The CLI's client of /v1 (src/ops/cli-api.ts) ends within its deadline whatever the other end
 * does: a service that accepts and never answers, one that sends its headers and half a body, and
 * an export that stops half-way (no partial file is left). Real loopback servers; the deadline is
 * the option every command passes (60 s for api commands, 30 min for export). A garbage
 * collection every 10 ms runs meanwhile: on Node 20 an AbortSignal.timeout inside
 * AbortSignal.any can be collected, and a deadline built on it never fires.
 */
import { createServer, type Server, type ServerResponse } from "node:http"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { apiDownload, apiRequest } from "../../src/ops/cli-api.js"
import type { Endpoint } from "../../src/ops/cli-credentials.js"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const servers: Array<Server> = []
const held: Array<ServerResponse> = []
const dirs: Array<string> = []

afterEach(() => {
  for (const r of held.splice(0)) r.destroy()
  for (const s of servers.splice(0)) s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A loopback server whose every answer is `answer`; its endpoint. */
const serve = async (answer: (res: ServerResponse) => void): Promise<Endpoint> => {
  const server = createServer((_req, res) => {
    held.push(res)
    answer(res)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return { base: `http://127.0.0.1:${port}`, headers: { authorization: "Bearer x" } } as unknown as Endpoint
}

const failureOf = async <A, E>(effect: Effect.Effect<A, E>): Promise<{ readonly error: unknown; readonly ms: number }> => {
  const started = Date.now()
  const collecting = setInterval(gc, 10)
  const exit = await Effect.runPromiseExit(effect.pipe(Effect.timeout(8_000))).finally(() => clearInterval(collecting))
  const ms = Date.now() - started
  expect(Exit.isFailure(exit)).toBe(true)
  return { error: Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined, ms }
}

describe("cli-api: every request ends within its deadline", () => {
  it("a service that accepts and never answers: api-unreachable after the deadline, not a wait for ever", async () => {
    const endpoint = await serve(() => {})
    const { error, ms } = await failureOf(apiRequest(endpoint, "apiStatus", { timeoutMs: 400 }))
    expect(error).toMatchObject({ code: "api-unreachable", message: expect.stringContaining("within") })
    expect(ms).toBeLessThan(10_000)
  })

  it("a service that sends its headers and half a body, then nothing: api-unreachable after the deadline", async () => {
    const endpoint = await serve((res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" })
      res.write("{\"half\":")
    })
    const { error, ms } = await failureOf(apiRequest(endpoint, "apiStatus", { timeoutMs: 400 }))
    expect(error).toMatchObject({ code: "api-unreachable" })
    expect(ms).toBeLessThan(10_000)
  })

  it("an export that stops half-way: api-unreachable after the deadline, and no file (nor part file) is left", async () => {
    const endpoint = await serve((res) => {
      res.writeHead(200, { "content-type": "application/gzip", "content-length": "100000" })
      res.write(Buffer.alloc(1000))
    })
    const dir = mkdtempSync(join(tmpdir(), "gn-cli-api-"))
    dirs.push(dir)
    const { error, ms } = await failureOf(apiDownload(endpoint, "exportScope", {
      params: { scope: "sales" }, timeoutMs: 400, target: join(dir, "sales.tar.gz"), fallbackName: "x.tar.gz", cwd: dir
    }))
    expect(error).toMatchObject({ code: "api-unreachable" })
    expect(ms).toBeLessThan(10_000)
    expect(readdirSync(dir)).toEqual([])
  })
})
