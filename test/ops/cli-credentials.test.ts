/**
 * The CLI's credentials (architecture.md §11 "CLI groundnote"): GROUNDNOTE_URL with exactly one
 * api credential, GROUNDNOTE_ACCESS_JWT for export, or ~/.config/groundnote/cli.json ($XDG_CONFIG_HOME
 * honoured) only as a regular file of the user with mode 0600; https only, http for loopback; the
 * file written once with mode 0600 and never overwritten.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  apiEndpoint,
  checkBaseUrl,
  checkSecret,
  exportEndpoint,
  readCredentialsFile,
  writeCredentialsFile
} from "../../src/ops/cli-credentials.js"
import { credentialsPath } from "../../src/ops/cli-credentials-path.js"
import { tempDir } from "../support/env.js"

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6ImFAYi5jIn0.c2lnbmF0dXJl"
const TOKEN = `gn_${"A".repeat(43)}`
const UID = process.getuid?.() ?? 0

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-cred-"))
})
afterEach(() => cleanup())

const failure = <A>(e: Effect.Effect<A, { code: string; message: string }>) => {
  const r = Effect.runSync(Effect.either(e))
  if (Either.isRight(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.right)}`)
  return r.left
}
const ok = <A, E>(e: Effect.Effect<A, E>): A => Effect.runSync(e)

const writeFile = (content: unknown, mode = 0o600) => {
  const path = credentialsPath({ XDG_CONFIG_HOME: dir }, "/nohome")
  mkdirSync(join(dir, "groundnote"), { recursive: true, mode: 0o700 })
  writeFileSync(path, JSON.stringify(content), { mode })
  chmodSync(path, mode)
  return path
}

describe("where the credentials come from", () => {
  it("the file is $XDG_CONFIG_HOME/groundnote/cli.json, else ~/.config/groundnote/cli.json (a relative XDG_CONFIG_HOME is ignored)", () => {
    expect(credentialsPath({ XDG_CONFIG_HOME: "/x/conf" }, "/home/anna")).toBe("/x/conf/groundnote/cli.json")
    expect(credentialsPath({}, "/home/anna")).toBe("/home/anna/.config/groundnote/cli.json")
    expect(credentialsPath({ XDG_CONFIG_HOME: "conf" }, "/home/anna")).toBe("/home/anna/.config/groundnote/cli.json")
  })

  it("the environment: a token is a bearer, a person's JWT goes as cf-access-token and cf-access-jwt-assertion", () => {
    const env = { GROUNDNOTE_URL: "https://g.example.com/", GROUNDNOTE_API_TOKEN: TOKEN }
    expect(ok(apiEndpoint(env, dir, UID))).toEqual({ base: "https://g.example.com", headers: { authorization: `Bearer ${TOKEN}` }, kind: "token", source: "environment" })
    const jwt = ok(apiEndpoint({ GROUNDNOTE_URL: "https://g.example.com", GROUNDNOTE_API_ACCESS_JWT: JWT }, dir, UID))
    expect(jwt.headers).toEqual({ "cf-access-token": JWT, "cf-access-jwt-assertion": JWT })
    expect(ok(exportEndpoint({ GROUNDNOTE_URL: "https://g.example.com", GROUNDNOTE_ACCESS_JWT: JWT }, dir, UID)).kind).toBe("access_jwt")
  })

  it("refuses both api credentials, none, no URL, and export without its JWT", () => {
    expect(failure(apiEndpoint({ GROUNDNOTE_URL: "https://g.example.com", GROUNDNOTE_API_TOKEN: TOKEN, GROUNDNOTE_API_ACCESS_JWT: JWT }, dir, UID)).code).toBe("credentials-ambiguous")
    expect(failure(apiEndpoint({ GROUNDNOTE_URL: "https://g.example.com" }, dir, UID))).toMatchObject({ code: "credentials-missing", message: expect.stringContaining("GROUNDNOTE_API_TOKEN") })
    expect(failure(apiEndpoint({ GROUNDNOTE_API_TOKEN: TOKEN }, dir, UID))).toMatchObject({ code: "credentials-missing", message: expect.stringContaining("GROUNDNOTE_URL is not set") })
    expect(failure(apiEndpoint({ XDG_CONFIG_HOME: dir }, dir, UID))).toMatchObject({ code: "credentials-missing", message: expect.stringContaining("groundnote config init") })
    expect(failure(exportEndpoint({ GROUNDNOTE_URL: "https://g.example.com", GROUNDNOTE_API_TOKEN: TOKEN }, dir, UID))).toMatchObject({ code: "credentials-missing", message: expect.stringContaining("GROUNDNOTE_ACCESS_JWT") })
  })

  it("https only; http only for a loopback host; nothing but the address", () => {
    expect(Either.getOrNull(checkBaseUrl("http://127.0.0.1:8787", "u"))).toBe("http://127.0.0.1:8787")
    expect(Either.getOrNull(checkBaseUrl("http://localhost:8787/", "u"))).toBe("http://localhost:8787")
    expect(Either.getOrNull(checkBaseUrl("http://[::1]:8787", "u"))).toBe("http://[::1]:8787")
    expect(Either.getOrNull(checkBaseUrl("https://g.example.com/groundnote/", "u"))).toBe("https://g.example.com/groundnote")
    const code = (u: string) => Either.match(checkBaseUrl(u, "u"), { onLeft: (e) => e.code, onRight: () => "ok" })
    expect(code("http://g.example.com")).toBe("url-not-https")
    expect(code("http://10.0.0.5:8787")).toBe("url-not-https")
    expect(code("ftp://g.example.com")).toBe("url-invalid")
    expect(code("https://user:pw@g.example.com")).toBe("url-invalid")
    expect(code("https://g.example.com/?token=x")).toBe("url-invalid")
    expect(code("not a url")).toBe("url-invalid")
    expect(failure(apiEndpoint({ GROUNDNOTE_URL: "http://g.example.com", GROUNDNOTE_API_TOKEN: TOKEN }, dir, UID)).code).toBe("url-not-https")
  })

  it("the file is read only when the environment names no GROUNDNOTE_URL or credential", () => {
    writeFile({ url: "https://g.example.com", token: TOKEN, access_jwt: JWT })
    const env = { XDG_CONFIG_HOME: dir }
    const ep = ok(apiEndpoint(env, "/nohome", UID))
    expect(ep).toMatchObject({ base: "https://g.example.com", kind: "token", source: join(dir, "groundnote", "cli.json") })
    expect(ok(exportEndpoint(env, "/nohome", UID)).kind).toBe("access_jwt")
    // any credential variable means the environment, and then the file is not read
    expect(failure(apiEndpoint({ ...env, GROUNDNOTE_ACCESS_JWT: JWT }, "/nohome", UID)).code).toBe("credentials-missing")
  })

  it("refuses a file that is not a regular 0600 file of the user, or holds other keys", () => {
    const path = writeFile({ url: "https://g.example.com", token: TOKEN }, 0o644)
    expect(failure(readCredentialsFile(path, UID))).toMatchObject({ code: "credentials-file-permissions", message: `${path} has mode 0644, not 0600: run chmod 600 ${path}` })
    chmodSync(path, 0o400)
    expect(failure(readCredentialsFile(path, UID)).code).toBe("credentials-file-permissions")
    chmodSync(path, 0o600)
    expect(ok(readCredentialsFile(path, UID))).toEqual({ url: "https://g.example.com", token: TOKEN })
    expect(failure(readCredentialsFile(path, UID + 1))).toMatchObject({ code: "credentials-file-permissions", message: expect.stringContaining("not by you") })
    if (UID === 0) {
      chownSync(path, 4242, 4242)
      expect(failure(readCredentialsFile(path, 0)).code).toBe("credentials-file-permissions")
      chownSync(path, 0, 0)
    }
    const link = join(dir, "link.json")
    symlinkSync(path, link)
    expect(failure(readCredentialsFile(link, UID))).toMatchObject({ code: "credentials-file-permissions", message: expect.stringContaining("symlink") })
    const other = join(dir, "other.json")
    writeFileSync(other, JSON.stringify({ url: "https://g.example.com", password: "x" }), { mode: 0o600 })
    expect(failure(readCredentialsFile(other, UID)).code).toBe("credentials-file-invalid")
    writeFileSync(join(dir, "bad.json"), "{", { mode: 0o600 })
    expect(failure(readCredentialsFile(join(dir, "bad.json"), UID)).code).toBe("credentials-file-invalid")
    expect(ok(readCredentialsFile(join(dir, "missing.json"), UID))).toBeNull()
  })
})

describe("writing the file", () => {
  it("creates the directory 0700 and the file 0600, and never overwrites it", () => {
    const path = credentialsPath({ XDG_CONFIG_HOME: join(dir, "conf") }, "/nohome")
    ok(writeCredentialsFile(path, { url: "https://g.example.com", token: TOKEN }))
    expect(lstatSync(path).mode & 0o777).toBe(0o600)
    expect(lstatSync(join(dir, "conf", "groundnote")).mode & 0o777).toBe(0o700)
    const before = readFileSync(path)
    expect(JSON.parse(before.toString())).toEqual({ url: "https://g.example.com", token: TOKEN })
    expect(failure(writeCredentialsFile(path, { url: "https://other.example.com", token: TOKEN })).code).toBe("credentials-file-exists")
    expect(readFileSync(path).equals(before)).toBe(true)
  })

  it("checks a secret: one line, no white space, a JWT has three parts", () => {
    expect(checkSecret("token", TOKEN)).toBeNull()
    expect(checkSecret("api_access_jwt", JWT)).toBeNull()
    expect(checkSecret("access_jwt", "not-a-jwt")).toMatch(/not a JWT/)
    expect(checkSecret("token", "a b")).toMatch(/white space/)
    expect(checkSecret("token", "")).toMatch(/empty/)
  })
})
