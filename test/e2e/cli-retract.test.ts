/**
 * groundnote retract <rule-id> --reason: a thin client of POST /v1/rules/:id/retract (the built CLI
 * against a real service in mode A): the policy's adoption taken back, refused once taken back,
 * the reason checked client-side, a missing --reason a usage error (exit 2).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { approvalOf, internalMail, PLAIN, quoting } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { cleanEnv, cli, json, type Service, startService } from "./support.js"

describe("retract against a real service in mode A", { timeout: 240_000 }, () => {
  const { dir, cleanup } = tempDir("gn-retract-")
  let service: Service
  let feeder = ""
  const asFeeder = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_TOKEN: feeder })

  beforeAll(async () => {
    const { mkdirSync } = await import("node:fs")
    mkdirSync(join(dir, "data"), { mode: 0o700 })
    service = await startService(testConfig(join(dir, "data"), approvalOf("autonomous", 1000)))
    feeder = await service.run(Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      const f = yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
      return "token" in f ? f.token : ""
    }))
    writeFileSync(join(dir, "mail.json"), JSON.stringify(internalMail()))
    writeFileSync(join(dir, "proposal.json"), JSON.stringify(quoting(PLAIN[1])))
  })
  afterAll(async () => {
    await service.stop()
    cleanup()
  })

  it("takes back an adoption once; the second time is the service's refusal (exit 1); the reason is checked before sending", async () => {
    expect((await cli(["sources", "put", "--body", join(dir, "mail.json")], asFeeder())).code).toBe(0)
    const proposed = await cli(["propose", "--body", join(dir, "proposal.json"), "--json"], asFeeder())
    expect(proposed.code, proposed.stderr).toBe(0)
    expect(json(proposed)).toMatchObject({ ref: "rule/sales-0001@2", status: "confirmed", adoption: { kind: "auto" } })

    const r = await cli(["retract", "sales-0001", "--reason", "the mail was a draft", "--json"], asFeeder())
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.stringify(json(r))).toContain("superseded")
    const read = await cli(["rules", "get", "sales-0001", "--json"], asFeeder())
    expect(JSON.stringify(json(read))).toContain("\"status\":\"superseded\"")

    const again = await cli(["retract", "sales-0001", "--reason", "again", "--json"], asFeeder())
    expect(again.code).toBe(1)
    expect(json(again)).toMatchObject({ error: expect.any(String) as unknown })

    const blank = await cli(["retract", "sales-0001", "--reason", "  ", "--json"], asFeeder())
    expect(blank.code).toBe(1)
    expect(json(blank)).toMatchObject({ error: "reason-missing" })

    const missing = await cli(["retract", "sales-0001"], asFeeder())
    expect(missing.code).toBe(2)
  })
})
