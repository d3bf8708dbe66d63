/**
 * The approval modes over real HTTP (gaps.md §10): POST /v1/proposals answers ProposalCreated with
 * adoption, valid, marking and reasons (201; 200 for an identical repeat), POST /v1/rules/:id/retract
 * (operation retract, right propose), quote-not-found with the closest passage, and the secret
 * corpus through POST /v1/proposals and POST /v1/sources: every secret refused with 422
 * secret-detected, no secret stored (the data dir's files are scanned after the run), no
 * near-miss refused.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { approvalOf, internalMail, PLAIN, quoting } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { NEAR_MISSES, SECRETS } from "../security/secrets-corpus.js"

let server: TestServer
let dir: string
let cleanup: () => void
const logs = captureLogs()
const tokens = { feeder: "", reader: "" }

const call = async (method: string, path: string, body?: unknown, token = tokens.feeder) => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await res.text()
  return { status: res.status, json: JSON.parse(text) as Record<string, unknown> }
}

beforeAll(async () => {
  const t = tempDir()
  dir = t.dir
  cleanup = t.cleanup
  const config = testConfig(t.dir, { ...approvalOf("autonomous", 1000), limits: { requests_per_minute: 100_000 } })
  server = await startServer(config, { logs })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    tokens.reader = "token" in reader ? reader.token : ""
  }))
  expect((await call("POST", "/v1/sources", internalMail())).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("POST /v1/proposals in mode A", () => {
  it("201 with status confirmed, adoption auto, valid, marking auto-adopted and the reasons; 200 with the same ref for an identical repeat", async () => {
    const first = await call("POST", "/v1/proposals", quoting(PLAIN[1]))
    expect(first.status).toBe(201)
    expect(first.json).toMatchObject({
      ref: "rule/sales-0001@2", status: "confirmed", adoption: { kind: "auto", ruleset: "gn-1" }, marking: "auto-adopted",
      valid: { from: "2026-01-14", until: null }, quote_check: { checked: true }, approval_url: `${"http://127.0.0.1:8787"}/approval/rules/sales-0001`
    })
    expect((first.json.reasons as Array<string>)[0]).toMatch(/^Class general/)
    const again = await call("POST", "/v1/proposals", quoting(PLAIN[1]))
    expect(again.status).toBe(200)
    expect(again.json).toMatchObject({ ref: "rule/sales-0001@2", status: "confirmed" })
    const read = await call("GET", "/v1/rules/sales-0001", undefined, tokens.reader)
    expect(read.json).toMatchObject({ head: { ref: "rule/sales-0001@2", adoption: { kind: "auto", ruleset: "gn-1" } } })
    expect((read.json.line as string).startsWith("Auto-adopted rule from 2026-01-14:")).toBe(true)
    const prov = await call("GET", "/v1/rules/sales-0001/provenance", undefined, tokens.reader)
    expect(prov.json).toMatchObject({ status: "confirmed", adoption: { kind: "auto", ruleset: "gn-1" } })
    // every answer marks it (gaps.md §10): the rule list and the versions too
    const list = await call("GET", "/v1/rules?scope=sales&status=confirmed", undefined, tokens.reader)
    expect((list.json.rules as Array<Record<string, unknown>>).find((r) => r.rule_id === "sales-0001"))
      .toMatchObject({ ref: "rule/sales-0001@2", adoption: { kind: "auto", ruleset: "gn-1" } })
    const versions = await call("GET", "/v1/rules/sales-0001/versions", undefined, tokens.reader)
    expect(versions.json).toMatchObject({ current: "rule/sales-0001@2", adoption: { kind: "auto", ruleset: "gn-1" } })
  })

  it("quote-not-found answers the closest passage and where the quote first differs", async () => {
    const r = await call("POST", "/v1/proposals", quoting(PLAIN[2], { source: { kind: "mail", id: internalMail().source.id, quote: "Sonderfarben werden nur in Halle 4 lackiert.", link: null } }))
    expect(r.status).toBe(422)
    expect(r.json).toMatchObject({
      error: "quote-not-found",
      closest: { passage: "sonderfarben werden nur in halle 3 lackiert", differs_at: "sonderfarben werden nur in halle ".length, quote_from: "4 lackiert", source_from: expect.stringMatching(/^3 lackiert/) as unknown }
    })
    expect(r.json.message).toContain("first differs at character 33")
  })
})

describe("POST /v1/rules/:id/retract", () => {
  it("retracts an auto-adopted rule (right propose, channel api); a reader may not; blank reason, unknown id and a second retract are refused", async () => {
    const created = await call("POST", "/v1/proposals", quoting(PLAIN[3]))
    const id = String(created.json.ref).replace(/^rule\/|@\d+$/g, "")
    expect((await call("POST", `/v1/rules/${id}/retract`, { reason: "wrong" }, tokens.reader)).json).toEqual({ error: "channel-not-allowed", message: "this grant or channel does not allow propose" })
    expect((await call("POST", `/v1/rules/${id}/retract`, { reason: "  " })).json).toMatchObject({ error: "reason-missing" })
    expect((await call("POST", `/v1/rules/${id}/retract`, {})).json).toMatchObject({ error: "validation-failed" })
    expect((await call("POST", "/v1/rules/sales-0404/retract", { reason: "x" })).status).toBe(404)
    expect((await call("POST", "/v1/rules/nope/retract", { reason: "x" })).status).toBe(404)
    const r = await call("POST", `/v1/rules/${id}/retract`, { reason: "the protocols moved to the wiki" })
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ retracted: `rule/${id}@2`, current: `rule/${id}@3`, status: "superseded", decision: { kind: "retract", origin: "grant" } })
    expect((await call("POST", `/v1/rules/${id}/retract`, { reason: "again" })).json).toMatchObject({ error: "already-decided", current: `rule/${id}@3` })
    const log = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ operation: string; outcome: number }>`SELECT operation, outcome FROM search_log WHERE operation = 'retract' ORDER BY at, rowid`))
    // the refusals of step 2 (validation, reason, a malformed id) go to the process log only (§5.2)
    expect(log.map((l) => l.outcome)).toEqual([404, 200, 409])
  })
})

/** Every file under the data dir (scope files, their WAL, ops.sqlite), concatenated. */
const dataDirBytes = (): Buffer => {
  const all: Array<Buffer> = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else all.push(readFileSync(p))
    }
  }
  walk(dir)
  return Buffer.concat(all)
}

describe("the secret corpus through the API (invariant 12)", () => {
  const PROPOSAL_FIELDS = ["statement", "source.quote", "keywords[0]", "speaker"] as const
  const SOURCE_FIELDS = ["text", "source.title", "source.sender", "segments[0].text", "attachments[0].filename", "attachments[0].text"] as const

  /** The field of a secret: the rotation's, or the quote when the secret is longer than that field takes. */
  const fieldFor = (field: typeof PROPOSAL_FIELDS[number], secret: string): typeof PROPOSAL_FIELDS[number] =>
    ({ "statement": 480, "source.quote": 1990, "keywords[0]": 100, "speaker": 190 })[field] >= secret.length ? field : "source.quote"

  const proposalWith = (field: typeof PROPOSAL_FIELDS[number], secret: string) => {
    const base = quoting(PLAIN[4])
    const text = `Notiz: ${secret}`
    switch (field) {
      case "statement": return { ...base, statement: `Gabelstapler laden. ${secret}` }
      case "source.quote": return { ...base, source: { ...base.source, quote: text } }
      case "keywords[0]": return { ...base, keywords: [secret] }
      case "speaker": return { ...base, speaker: text }
    }
  }

  const sourceWith = (field: typeof SOURCE_FIELDS[number], secret: string, i: number) => {
    const m = internalMail()
    const source = { ...m.source, id: `mail:<secret-${i}@acme.example>` }
    switch (field) {
      case "text": return { ...m, source, text: `Hallo,\n${secret}\nGruß` }
      case "source.title": return { ...m, source: { ...source, title: `Zugang ${secret}`.slice(0, 500) } }
      case "source.sender": return { ...m, source: { ...source, sender: `maria@acme.example ${secret}`.slice(0, 500) } }
      case "attachments[0].filename": return { ...m, source, attachments: [{ filename: secret.slice(0, 500), media_type: "text/plain", size: 1, external: null, text: null, text_origin: null }] }
      case "attachments[0].text": return { ...m, source, attachments: [{ filename: "notiz.txt", media_type: "text/plain", size: 1, external: null, text: secret, text_origin: "ocr" }] }
      case "segments[0].text": return {
        scope: "sales", attachments: [],
        source: { kind: "jamie", id: `jamie:secret-${i}`, title: "Weekly", occurred_at: "2026-01-14T10:00:00Z", sender: null, link: "https://jamie.example/m/1" },
        segments: [{ start_s: 0, speaker: "Tom", text: secret.slice(0, 10_000) }]
      }
    }
  }

  it(`refuses each of the ${SECRETS.length} secrets in proposals and sources with secret-detected; afterwards no secret is in any file`, async () => {
    const before = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT (SELECT count(*) FROM rule) + (SELECT count(*) FROM source) AS n`))
    let findings = 0
    for (const [i, secret] of SECRETS.entries()) {
      const pf = fieldFor(PROPOSAL_FIELDS[i % PROPOSAL_FIELDS.length] ?? "statement", secret.text)
      const p = await call("POST", "/v1/proposals", proposalWith(pf, secret.text))
      expect(p.status, `${secret.kind} in ${pf}`).toBe(422)
      expect(p.json.error).toBe("secret-detected")
      const named = p.json.findings as Array<{ field: string; kind: string }>
      expect(named.map((f) => f.field), `${secret.kind} in ${pf}`).toContain(pf)
      expect(JSON.stringify(p.json)).not.toContain(secret.text)
      findings += named.length
      const sf = SOURCE_FIELDS[i % SOURCE_FIELDS.length] ?? "text"
      const s = await call("POST", "/v1/sources", sourceWith(sf, secret.text, i))
      expect(s.status, `${secret.kind} in ${sf}`).toBe(422)
      expect((s.json.findings as Array<{ field: string }>).map((f) => f.field), `${secret.kind} in ${sf}`).toContain(sf)
      findings += (s.json.findings as Array<unknown>).length
    }
    const after = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => Effect.all({
      n: sql<{ n: number }>`SELECT (SELECT count(*) FROM rule) + (SELECT count(*) FROM source) AS n`,
      findings: sql<{ n: number }>`SELECT count(*) AS n FROM secret_finding`,
      logged: sql<{ n: number }>`SELECT count(*) AS n FROM search_log WHERE outcome = 422 AND operation IN ('propose', 'store_source')`
    })))
    expect(after.n).toEqual(before)
    expect(after.findings[0]?.n).toBe(findings)
    expect(after.logged[0]?.n).toBeGreaterThanOrEqual(SECRETS.length * 2)
    // checkpoint-free: the scope file, its WAL and ops.sqlite hold no byte of any secret (the matched part included)
    const bytes = dataDirBytes()
    for (const secret of SECRETS) {
      const core = secret.text.length > 24 ? secret.text.slice(4, 24) : secret.text
      expect(bytes.includes(Buffer.from(core)), secret.kind).toBe(false)
    }
    // nor does the process log
    for (const line of logs.lines) for (const secret of SECRETS) expect(JSON.stringify(line)).not.toContain(secret.text)
  }, 240_000)

  it(`accepts each of the ${NEAR_MISSES.length} near-misses in a source and a proposal quoting it`, async () => {
    const refused: Array<string> = []
    for (const [i, text] of NEAR_MISSES.entries()) {
      const line = `Notiz ${i} aus der Besprechung: ${text}`
      const m = internalMail()
      const id = `mail:<near-${i}@acme.example>`
      const s = await call("POST", "/v1/sources", { ...m, source: { ...m.source, id, title: `Liste ${text}`.slice(0, 500) }, text: `Hallo,\n${line}\nGruß` })
      if (s.status !== 201) refused.push(`source ${s.status} ${JSON.stringify(s.json)}: ${text}`)
      const p = await call("POST", "/v1/proposals", { ...quoting(line), statement: line.length >= 10 ? line.slice(0, 500) : `${line} ......`, keywords: [], source: { kind: "mail", id, quote: line.slice(0, 2000), link: null } })
      if (p.status !== 201) refused.push(`proposal ${p.status} ${JSON.stringify(p.json)}: ${text}`)
    }
    expect(refused).toEqual([])
  }, 240_000)
})

describe("a secret after a label without = or : (invariant 12)", () => {
  const KEY = "wJa7rXUtnFEMIK7MDENGbPxRfiCY4xq9Lm2Tz8Vd"
  const TOKEN = "Rk3vQ9xLm2Tz8VdNb7pWc4YhJs6Gf1Ea5Ku0Io"

  /** Rows per table of the scope file, without the audit rows a refusal writes (search_log, secret_finding and its AUTOINCREMENT counter). */
  const contentRows = () => server.run(Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('search_log', 'secret_finding', 'sqlite_sequence') ORDER BY name`
    const out: Record<string, number> = {}
    for (const { name } of tables) out[name] = (yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM "${name}"`))[0]?.n ?? 0
    return out
  }))

  it("POST /v1/sources with such a mail and POST /v1/proposals with it in statement, quote or keyword: 422 secret-detected, nothing stored", async () => {
    const before = await contentRows()
    const m = internalMail()
    const mails = [
      `Hallo Tom,\nhier der Zugang für das Lager:\naws secret key ${KEY}\nGruß Maria`,
      `Hi Tom,\nthe new api token for the shop -> ${TOKEN}\nBest, Maria`,
      `Hallo,\nder Schlüssel für die Schnittstelle ist jetzt ${TOKEN}\nGruß`,
      `Hallo,\n${KEY} ist der neue API-Schlüssel.\nGruß`
    ]
    for (const [i, text] of mails.entries()) {
      const r = await call("POST", "/v1/sources", { ...m, source: { ...m.source, id: `mail:<label-${i}@acme.example>` }, text })
      expect(r.status, text).toBe(422)
      expect(r.json.error).toBe("secret-detected")
      expect(r.json.findings).toEqual([{ field: "text", kind: expect.stringMatching(/^(aws-secret-key|high-entropy)$/) as unknown }])
    }
    const line = PLAIN[5]
    const proposals = [
      { field: "statement", body: quoting(line, { statement: `Die Inventur: aws secret key ${KEY}` }) },
      { field: "statement", body: quoting(line, { statement: `Für die Inventur gilt der Passwort-Tresor, Kennwort des Kontos ${TOKEN}` }) },
      { field: "source.quote", body: quoting(line, { source: { kind: "mail", id: internalMail().source.id, quote: `${line} Token ${TOKEN}`, link: null } }) },
      { field: "keywords[1]", body: quoting(line, { keywords: ["Inventur", `aws secret key ${KEY}`] }) },
      { field: "keywords[0]", body: quoting(line, { keywords: [`${TOKEN} (API key)`] }) }
    ]
    for (const p of proposals) {
      const r = await call("POST", "/v1/proposals", p.body)
      expect(r.status, p.field).toBe(422)
      expect(r.json.error).toBe("secret-detected")
      expect((r.json.findings as Array<{ field: string }>).map((f) => f.field)).toEqual([p.field])
      expect(JSON.stringify(r.json)).not.toContain(KEY)
      expect(JSON.stringify(r.json)).not.toContain(TOKEN)
    }
    // nothing but the audit rows was written, and no byte of either value is in any file of the data dir
    expect(await contentRows()).toEqual(before)
    const bytes = dataDirBytes()
    expect(bytes.includes(Buffer.from(KEY))).toBe(false)
    expect(bytes.includes(Buffer.from(TOKEN))).toBe(false)
  })
})

