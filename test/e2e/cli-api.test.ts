/**
 * The api commands of the built CLI against a real service (gaps.md §9, architecture.md §11):
 * sources put|get, propose, proposals list, approvals open, rules get|versions|provenance|list,
 * search, feedback and export; credentials from the environment and from the file of
 * `config init` (stdin, 0600, never overwritten); the service's own schemas client-side (a
 * refused request never reaches the service); exit codes 0/1/2; the answer on stdout: JSON with
 * --json, plain text for a person (no preamble, no ⟪gn: block, stored control characters
 * escaped), the framed form of an AI model with --for-model.
 */
import { createHash } from "node:crypto"
import { chmodSync, lstatSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UNTRUSTED_PREAMBLE } from "../../src/security/model-output.js"
import type { AppConfigShape } from "../../src/config/config.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { cleanEnv, cli, json, type Service, startService } from "./support.js"

const DEV_API = "p".repeat(40)

describe("api commands against a real service", { timeout: 240_000 }, () => {
  const { dir, cleanup } = tempDir("gn-api-")
  const logs = captureLogs()
  let service: Service
  let feeder = ""
  let trap: Server
  let trapUrl = ""
  let trapHits = 0

  const base = testConfig(join(dir, "data"), { public_url: "http://127.0.0.1:8787" })
  const config: AppConfigShape = { ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API) } }
  const asFeeder = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_TOKEN: feeder })
  const asPerson = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_TOKEN: DEV_API })
  const toTrap = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_URL: trapUrl, GROUNDNOTE_API_TOKEN: feeder })

  beforeAll(async () => {
    const { mkdirSync } = await import("node:fs")
    mkdirSync(join(dir, "data"), { mode: 0o700 })
    service = await startService(config, { logs })
    feeder = await service.run(Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      const ops = yield* OpsStore
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose", "decide"] })
      const f = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
      return "token" in f ? f.token : ""
    }))
    trap = createServer((req, res) => {
      trapHits++
      res.writeHead(500).end()
    })
    await new Promise<void>((r) => trap.listen(0, "127.0.0.1", () => r()))
    trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`
    writeFileSync(join(dir, "mail.json"), JSON.stringify(mailSource()))
    writeFileSync(join(dir, "proposal.json"), JSON.stringify(mailProposal()))
    writeFileSync(join(dir, "bad-proposal.json"), JSON.stringify({ ...mailProposal(), statement: "short", extra: 1 }))
    writeFileSync(join(dir, "broken.json"), "{\"scope\": ")
  })
  afterAll(async () => {
    await service.stop()
    await new Promise<void>((r) => trap.close(() => r()))
    cleanup()
  })

  let ruleId = ""

  it("sources put stores a mail (--json: the answer only); again it is the same source", async () => {
    const r = await cli(["sources", "put", "--body", join(dir, "mail.json"), "--json"], asFeeder())
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    expect(json(r)).toMatchObject({ id: "mail:<order-rule@example.com>", created: true })
    const again = await cli(["sources", "put", "--body", join(dir, "mail.json")], asFeeder())
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toBe("")
    expect(again.stdout).toContain("created: false")
  })

  it("propose sends the proposal; a listing is plain text on stdout for a person, framed for a model with --for-model", async () => {
    const r = await cli(["propose", "--body", join(dir, "proposal.json")], asFeeder())
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    ruleId = /rule\/(sales-\d{4})@1/.exec(r.stdout)?.[1] ?? ""
    expect(ruleId).toBe("sales-0001")
    expect(r.stdout).toContain("approval_url: http://127.0.0.1:8787/approval/rules/sales-0001")
    const [list, forModel] = await Promise.all([
      cli(["proposals", "list", "--scope", "sales"], asFeeder()),
      cli(["proposals", "list", "--scope", "sales", "--for-model"], asFeeder())
    ])
    expect(list.code, list.stderr).toBe(0)
    expect(list.stderr).toBe("")
    expect(list.stdout).toMatch(/^open proposals of sales\n/)
    expect(list.stdout).toContain("statement: Ask the supplier for the delivery time before ordering black hook rails\n")
    expect(list.stdout).toContain(`ref: rule/${ruleId}@1`)
    for (const text of [list.stdout, r.stdout]) {
      expect(text).not.toContain("⟪gn:")
      expect(text).not.toContain(UNTRUSTED_PREAMBLE)
    }
    expect(forModel.code, forModel.stderr).toBe(0)
    expect(forModel.stderr).toBe("")
    expect(forModel.stdout.startsWith(UNTRUSTED_PREAMBLE)).toBe(true)
    expect(forModel.stdout).toMatch(/⟪gn:[0-9a-f]{16} untrusted [^⟫]*⟫Ask the supplier for the delivery time/)
  })

  it("proposals list, approvals open (the bare number), rules get/versions/provenance/list", async () => {
    const [list, open, openJson, get, versions, provenance, rules] = await Promise.all([
      cli(["proposals", "list", "--scope", "sales", "--json"], asPerson()),
      cli(["approvals", "open"], asPerson()),
      cli(["approvals", "open", "--scope", "sales", "--json"], asPerson()),
      cli(["rules", "get", ruleId, "--include-proposals", "--json"], asFeeder()),
      cli(["rules", "versions", ruleId, "--json"], asFeeder()),
      cli(["rules", "provenance", ruleId, "--json"], asFeeder()),
      cli(["rules", "list", "--scope", "sales", "--status", "proposed", "--limit", "5", "--json"], asFeeder())
    ])
    for (const r of [list, open, openJson, get, versions, provenance, rules]) expect(r.code, r.stderr).toBe(0)
    expect((json(list).proposals as Array<{ ref: string }>).map((p) => p.ref)).toEqual([`rule/${ruleId}@1`])
    expect(open.stdout).toBe("1\n")
    expect(open.stderr).toContain("sales: 1 proposal(s), 0 structure change(s)")
    expect(json(openJson)).toEqual({ open: 1, due_for_recheck: 0, scopes: [{ scope: "sales", available: true, proposals: 1, structure: 0, due_for_recheck: 0 }] })
    expect(json(get)).toMatchObject({ head: { ref: `rule/${ruleId}@1`, status: "proposed" } })
    expect(json(versions)).toMatchObject({ rule_id: ruleId, current: `rule/${ruleId}@1` })
    expect(json(provenance)).toMatchObject({ ref: `rule/${ruleId}@1` })
    expect((json(rules).rules as Array<{ ref: string }>).map((x) => x.ref)).toEqual([`rule/${ruleId}@1`])
  })

  it("search finds the proposal, feedback records a verdict on it, sources get reads the feeder's source back", async () => {
    const s = await cli(["search", "--scope", "sales", "--text", "Lieferzeit Hakenleisten", "--include-proposals", "--json"], asFeeder())
    expect(s.code, s.stderr).toBe(0)
    const answer = json(s) as { search_id: string; bundles: Array<{ head: { ref: string } }> }
    expect(answer.bundles.map((b) => b.head.ref)).toContain(`rule/${ruleId}@1`)
    const [human, fb, src] = await Promise.all([
      cli(["search", "--scope", "sales", "--term", "Lieferzeit", "--include-proposals"], asFeeder()),
      cli(["feedback", answer.search_id, "--relevant", `rule/${ruleId}@1`, "--json"], asFeeder()),
      cli(["sources", "get", "mail:<order-rule@example.com>", "--scope", "sales", "--include", "text", "--json"], asFeeder())
    ])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stderr).toBe("")
    expect(human.stdout).toMatch(/^search \S+: \d+ bundle\(s\) in sales\n/)
    expect(human.stdout).toContain(`rule/${ruleId}@1`)
    expect(human.stdout).not.toContain("⟪gn:")
    expect(human.stdout).not.toContain(UNTRUSTED_PREAMBLE)
    expect(fb.code, fb.stderr).toBe(0)
    expect(json(fb)).toEqual({ recorded: 1 })
    expect(src.code, src.stderr).toBe(0)
    expect(json(src)).toMatchObject({ id: "mail:<order-rule@example.com>" })
  })

  it("the plain answer escapes control characters and ANSI escapes of stored text; the JSON answer keeps them", async () => {
    const id = "mail:<escape@example.com>"
    const title = "Bestellung \u001b[2J\u001b[31mrot\u0007 \u202eevil"
    const source = mailSource({}, id)
    writeFileSync(join(dir, "escape.json"), JSON.stringify({ ...source, source: { ...source.source, title } }))
    const put = await cli(["sources", "put", "--body", join(dir, "escape.json"), "--json"], asFeeder())
    expect(put.code, put.stderr).toBe(0)
    const [plain, asJson] = await Promise.all([
      cli(["sources", "get", id, "--scope", "sales"], asFeeder()),
      cli(["sources", "get", id, "--scope", "sales", "--json"], asFeeder())
    ])
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).toContain("title: Bestellung \\u001b[2J\\u001b[31mrot\\u0007 \\u202eevil\n")
    // nothing that steers a terminal: no C0/C1 control character but the line breaks, no bidi override
    const steering = [...plain.stdout].filter((c) => {
      const code = c.codePointAt(0) ?? 0
      return (code < 0x20 && c !== "\n") || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)
    })
    expect(steering).toEqual([])
    expect(plain.stdout).not.toContain("⟪gn:")
    expect(asJson.code, asJson.stderr).toBe(0)
    expect(json(asJson).title).toBe(title)
  })

  it("the service's schemas refuse a bad request client-side: exit 1 validation-failed with the paths, nothing sent", async () => {
    const before = trapHits
    const [bad, broken, limit, include, ruleFilter] = await Promise.all([
      cli(["propose", "--body", join(dir, "bad-proposal.json"), "--json"], toTrap()),
      cli(["sources", "put", "--body", join(dir, "broken.json")], toTrap()),
      cli(["search", "--scope", "sales", "--text", "x", "--limit", "500", "--json"], toTrap()),
      cli(["sources", "get", "mail:<a@b>", "--scope", "sales", "--include", "text,text"], toTrap()),
      cli(["rules", "list", "--scope", "sales", "--relation", "colour:black", "--json"], toTrap())
    ])
    for (const r of [bad, broken, limit, include, ruleFilter]) {
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr).toMatch(/^groundnote: validation-failed: /)
    }
    const issues = (r: typeof bad) => (json(r).issues as Array<{ path: string }>).map((i) => i.path)
    expect(issues(bad)).toEqual(expect.arrayContaining(["statement", "extra"]))
    expect(new Set(issues(limit))).toEqual(new Set(["limit"]))
    expect(new Set(issues(ruleFilter))).toEqual(new Set(["relation"]))
    expect(broken.stdout).toBe("")
    expect(trapHits).toBe(before)
  })

  it("usage errors exit 2 before anything is sent; the service's refusals exit 1 with their code and, with --json, the body", async () => {
    const before = trapHits
    const usage = await Promise.all([
      cli(["search", "--text", "x"], toTrap()),
      cli(["search", "--scope", "sales"], toTrap()),
      cli(["search", "--scope", "sales", "--text", "x", "--body", join(dir, "proposal.json")], toTrap()),
      cli(["feedback", "3f1c2a9e-4b7d-4c1e-9a2f-1d2e3f4a5b6c"], toTrap()),
      cli(["rules", "get"], toTrap()),
      cli(["config", "init", "--url", "https://g.example.com", "--credential", "token", `gn_${"S".repeat(43)}`], toTrap()),
      cli(["rules", "list", "--scope", "sales", "--limit", "many"], toTrap()),
      cli(["propose"], toTrap())
    ])
    for (const r of usage) {
      expect(r.code, r.stderr).toBe(2)
      expect(r.stdout).toBe("")
    }
    // a secret given as an argument is never echoed back
    expect(usage.map((r) => r.stderr).join("")).not.toContain("S".repeat(43))
    const empty = await cli(["rules", "versions", "", "--json"], toTrap())
    expect(empty.code).toBe(1)
    expect(json(empty)).toMatchObject({ error: "validation-failed", issues: [{ path: "id" }] })
    expect(trapHits).toBe(before)
    const [missing, wrong, person] = await Promise.all([
      cli(["rules", "get", "sales-9999", "--json"], asFeeder()),
      cli(["rules", "versions", "sales-0001"], { ...asFeeder(), GROUNDNOTE_API_TOKEN: `gn_${"Z".repeat(43)}` }),
      cli(["sources", "get", "mail:<order-rule@example.com>", "--scope", "sales"], asPerson())
    ])
    expect(missing.code).toBe(1)
    expect(json(missing)).toMatchObject({ error: "not-found" })
    expect(missing.stderr).toMatch(/^groundnote: not-found: /)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/^groundnote: unauthorized: /)
    // another grant's source reads as not found (§6.2a)
    expect(person.code).toBe(1)
    expect(person.stderr).toMatch(/^groundnote: not-found: /)
  })

  it("credentials: none, both, no URL, http to a remote host are refused before anything is sent", async () => {
    const before = trapHits
    const [none, both, noUrl, remote] = await Promise.all([
      cli(["proposals", "list", "--scope", "sales", "--json"], { ...cleanEnv(), XDG_CONFIG_HOME: join(dir, "empty-conf") }),
      cli(["proposals", "list", "--scope", "sales"], { ...toTrap(), GROUNDNOTE_API_ACCESS_JWT: "a.b.c" }),
      cli(["proposals", "list", "--scope", "sales"], { ...cleanEnv(), GROUNDNOTE_API_TOKEN: feeder }),
      cli(["proposals", "list", "--scope", "sales"], { ...cleanEnv(), GROUNDNOTE_URL: "http://groundnote.example.com", GROUNDNOTE_API_TOKEN: feeder })
    ])
    expect([none.code, both.code, noUrl.code, remote.code]).toEqual([1, 1, 1, 1])
    expect(json(none)).toMatchObject({ error: "credentials-missing" })
    expect(both.stderr).toMatch(/^groundnote: credentials-ambiguous: /)
    expect(noUrl.stderr).toMatch(/^groundnote: credentials-missing: GROUNDNOTE_URL is not set/)
    expect(remote.stderr).toMatch(/^groundnote: url-not-https: /)
    for (const r of [none, both, noUrl, remote]) expect(`${r.stdout}${r.stderr}`).not.toContain(feeder)
    expect(trapHits).toBe(before)
  })

  it("config init writes the file once from stdin (0600), api commands use it, show and path never print the secret", async () => {
    const conf = join(dir, "conf")
    const env = { ...cleanEnv(), XDG_CONFIG_HOME: conf }
    const file = join(conf, "groundnote", "cli.json")
    const init = await cli(["config", "init", "--url", service.url, "--credential", "token"], env, { stdin: `${feeder}\n` })
    expect(init.code, init.stderr).toBe(0)
    expect(init.stdout).toBe("")
    expect(lstatSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ url: service.url, token: feeder })
    const written = readFileSync(file)
    const [path, show, showJson, list, again, argv] = await Promise.all([
      cli(["config", "path"], env),
      cli(["config", "show"], env),
      cli(["config", "show", "--json"], env),
      cli(["proposals", "list", "--scope", "sales", "--json"], env),
      cli(["config", "init", "--url", service.url, "--credential", "token"], env, { stdin: `gn_${"B".repeat(43)}\n` }),
      cli(["config", "init", "--url", service.url, "--credential", "token", feeder], env)
    ])
    expect(path.stdout).toBe(`${file}\n`)
    expect(show.code).toBe(0)
    expect(show.stderr).toContain("api commands: token")
    expect(json(showJson)).toEqual({ file, source: "file", url: service.url, api: "token", export: null })
    expect(list.code, list.stderr).toBe(0)
    expect((json(list).proposals as Array<unknown>).length).toBe(1)
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^groundnote: credentials-file-exists: /)
    expect(argv.code).toBe(2)
    expect(readFileSync(file).equals(written)).toBe(true)
    // --json everywhere (gaps.md §9): path and init answer JSON on stdout, never a secret
    const conf2 = join(dir, "conf-json")
    const env2 = { ...cleanEnv(), XDG_CONFIG_HOME: conf2 }
    const [pathJson, initJson] = [await cli(["config", "path", "--json"], env2), await cli(["config", "init", "--url", service.url, "--credential", "token", "--json"], env2, { stdin: `${feeder}\n` })]
    expect(json(pathJson)).toEqual({ path: join(conf2, "groundnote", "cli.json") })
    expect(initJson.code, initJson.stderr).toBe(0)
    expect(json(initJson)).toEqual({ written: join(conf2, "groundnote", "cli.json"), url: service.url, credentials: ["token"] })
    expect(`${initJson.stdout}${initJson.stderr}`).not.toContain(feeder)
    const initAgain = await cli(["config", "init", "--url", service.url, "--credential", "token", "--json"], env2, { stdin: `${feeder}\n` })
    expect(initAgain.code).toBe(1)
    expect(json(initAgain)).toMatchObject({ error: "credentials-file-exists" })
    for (const r of [init, path, show, showJson, again, argv]) expect(`${r.stdout}${r.stderr}`).not.toContain(feeder)
    chmodSync(file, 0o644)
    const open = await cli(["approvals", "open"], env)
    expect(open.code).toBe(1)
    expect(open.stderr).toMatch(new RegExp(`^groundnote: credentials-file-permissions: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} has mode 0644`))
    chmodSync(file, 0o600)
  })

  it("config init refuses two api credentials, a wrong line count and an http URL to a remote host; nothing is written", async () => {
    const conf = join(dir, "conf2")
    const env = { ...cleanEnv(), XDG_CONFIG_HOME: conf }
    const [two, lines, remote] = await Promise.all([
      cli(["config", "init", "--url", service.url, "--credential", "token", "--credential", "api-access-jwt"], env, { stdin: "a\nb.c.d\n" }),
      cli(["config", "init", "--url", service.url, "--credential", "token", "--credential", "access-jwt"], env, { stdin: `${feeder}\n` }),
      cli(["config", "init", "--url", "http://groundnote.example.com", "--credential", "token"], env, { stdin: `${feeder}\n` })
    ])
    expect(two.code).toBe(2)
    expect(lines.code).toBe(1)
    expect(lines.stderr).toMatch(/^groundnote: stdin-invalid: /)
    expect(remote.code).toBe(1)
    expect(remote.stderr).toMatch(/^groundnote: url-not-https: /)
    const { existsSync } = await import("node:fs")
    expect(existsSync(join(conf, "groundnote", "cli.json"))).toBe(false)
  })

  it("never logs a token or the source text", () => {
    const all = JSON.stringify(logs.lines)
    expect(all).not.toContain(feeder)
    expect(all).not.toContain(DEV_API)
    expect(all).not.toContain("Vor jeder Bestellung")
  })
})

describe("export (a person's Access token for the approval application)", { timeout: 120_000 }, () => {
  const TEAM = "https://acme.cloudflareaccess.com"
  const ACCESS = { team_domain: TEAM, aud_mcp: "aud-mcp", aud_approval: "aud-approval", aud_api: "aud-api" }
  const { dir, cleanup } = tempDir("gn-exp-")
  let service: Service
  let sign: (claims: Record<string, unknown>, aud: string) => Promise<string>

  beforeAll(async () => {
    const { mkdirSync } = await import("node:fs")
    mkdirSync(join(dir, "data"), { mode: 0o700 })
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true })
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }
    sign = (claims, aud) => new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(TEAM).setAudience(aud).setIssuedAt().setExpirationTime("5m").sign(privateKey)
    const c = testConfig(join(dir, "data"), { public_url: "https://groundnote.acme.example", access: ACCESS })
    const config: AppConfigShape = { ...c, env: { ...c.env, authMode: "cloudflare-access", devMcpToken: null, devApprovalToken: null, devEmail: null } }
    service = await startService(config, { keys: createLocalJWKSet({ keys: [jwk] }), logs: captureLogs() })
    await service.run(Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      const ops = yield* OpsStore
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "anna@acme.example", scopes: ["sales"], rights: ["read", "decide"] })
      yield* ops.createGrant({ kind: "service", auth: "access-service", identity: "feeder.acme", scopes: ["sales"], rights: ["read", "propose"] })
    }))
  })
  afterAll(async () => {
    await service.stop()
    cleanup()
  })

  it("writes the archive (0600, never over a file), with the service's name by default; a service is refused; no JWT is missing credentials", async () => {
    const jwt = await sign({ email: "anna@acme.example" }, "aud-approval")
    const env = { ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_ACCESS_JWT: jwt }
    const out = join(dir, "sales.tar.gz")
    const r = await cli(["export", "sales", "--out", out, "--json"], env)
    expect(r.code, r.stderr).toBe(0)
    const data = readFileSync(out)
    expect(json(r)).toEqual({ file: out, bytes: data.length, sha256: createHash("sha256").update(data).digest("hex") })
    expect(data.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(true)
    expect(lstatSync(out).mode & 0o777).toBe(0o600)
    const [again, named, service2, none, api] = await Promise.all([
      cli(["export", "sales", "--out", out], env),
      cli(["export", "sales"], env, { cwd: dir }),
      cli(["export", "sales", "--out", join(dir, "svc.tar.gz")], { ...env, GROUNDNOTE_ACCESS_JWT: await sign({ common_name: "feeder.acme" }, "aud-approval") }),
      cli(["export", "sales"], { ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_TOKEN: `gn_${"A".repeat(43)}` }),
      cli(["rules", "list", "--scope", "sales", "--json"], { ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_ACCESS_JWT: await sign({ email: "anna@acme.example" }, "aud-api") })
    ])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^groundnote: target-exists: /)
    expect(readFileSync(out).equals(data)).toBe(true)
    expect(named.code, named.stderr).toBe(0)
    expect(named.stdout).toMatch(new RegExp(`wrote ${dir}/sales-export-\\d{8}T\\d{6}Z\\.tar\\.gz`))
    expect(service2.code).toBe(1)
    expect(service2.stderr).toMatch(/^groundnote: channel-not-allowed: /)
    expect(none.code).toBe(1)
    expect(none.stderr).toMatch(/^groundnote: credentials-missing: GROUNDNOTE_ACCESS_JWT is not set/)
    // a person's API token works for the api commands
    expect(api.code, api.stderr).toBe(0)
    expect(json(api)).toEqual({ rules: [], next_after: null })
    for (const x of [again, named, service2]) expect(`${x.stdout}${x.stderr}`).not.toContain(jwt)
  })
})
