import { describe, expect, it } from "vitest"
import { csrfOk, csrfToken, sameOrigin } from "../../src/auth/csrf.js"
import { hmacBase64url } from "../../src/auth/tokens.js"
import { SESSION_SECONDS, SID_RE, sessionCookie, sessionCookieName, signSession, verifySession } from "../../src/auth/session.js"

const SECRET = "s".repeat(40)
const NOW = Date.UTC(2026, 10, 30, 12)

describe("approval session cookie (§5.3)", () => {
  it("is __Host-gn_session with Secure and no Domain on https, gn_session without Secure on http", () => {
    expect(sessionCookieName("https://g.example")).toBe("__Host-gn_session")
    expect(sessionCookie("https://g.example", "v")).toBe("__Host-gn_session=v; HttpOnly; SameSite=Strict; Path=/; Max-Age=28800; Secure")
    expect(sessionCookie("http://127.0.0.1:8787", "v")).toBe("gn_session=v; HttpOnly; SameSite=Strict; Path=/; Max-Age=28800")
    expect(sessionCookie("https://g.example", "v")).not.toContain("Domain")
  })
  it("carries the subject for 8 hours and is refused when expired, forged or malformed", () => {
    const v = signSession(SECRET, "dev@example.com", NOW)
    expect(verifySession(SECRET, v, NOW)?.sub).toBe("dev@example.com")
    expect(verifySession(SECRET, v, NOW + SESSION_SECONDS * 1000 - 1000)?.sub).toBe("dev@example.com")
    expect(verifySession(SECRET, v, NOW + SESSION_SECONDS * 1000)).toBeNull()
    expect(verifySession("t".repeat(40), v, NOW)).toBeNull()
    const [payload, mac] = v.split(".") as [string, string]
    const other = Buffer.from(JSON.stringify({ sub: "boss@example.com", exp: NOW / 1000 + 100 })).toString("base64url")
    expect(verifySession(SECRET, `${other}.${mac}`, NOW)).toBeNull()
    expect(verifySession(SECRET, payload, NOW)).toBeNull()
    expect(verifySession(SECRET, "garbage", NOW)).toBeNull()
  })
  it("carries a random session id of at least 128 bits (base64url) besides sub and exp", () => {
    const a = signSession(SECRET, "dev@example.com", NOW)
    const b = signSession(SECRET, "dev@example.com", NOW)
    const payload = JSON.parse(Buffer.from(a.split(".")[0] ?? "", "base64url").toString("utf8")) as Record<string, unknown>
    expect(Object.keys(payload).sort()).toEqual(["exp", "sid", "sub"])
    expect(payload).toMatchObject({ sub: "dev@example.com", exp: NOW / 1000 + SESSION_SECONDS })
    const sa = verifySession(SECRET, a, NOW)
    const sb = verifySession(SECRET, b, NOW)
    expect(sa).toEqual({ sub: "dev@example.com", sid: payload.sid, exp: NOW / 1000 + SESSION_SECONDS })
    expect(sa?.sid).toMatch(SID_RE)
    expect(Buffer.from(sa?.sid ?? "", "base64url").length).toBeGreaterThanOrEqual(16)
    expect(sa?.sid).not.toBe(sb?.sid)
  })
  it("refuses a forged cookie: another sid or subject under the old MAC, a MAC of another secret, a signed payload without sid", () => {
    const v = signSession(SECRET, "dev@example.com", NOW)
    const [payload, mac] = v.split(".") as [string, string]
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub: string; sid: string; exp: number }
    const encode = (o: unknown) => Buffer.from(JSON.stringify(o), "utf8").toString("base64url")
    const otherSid = encode({ ...parsed, sid: "A".repeat(22) })
    expect(verifySession(SECRET, `${otherSid}.${mac}`, NOW)).toBeNull()
    expect(verifySession(SECRET, `${otherSid}.${hmacBase64url("t".repeat(40), otherSid)}`, NOW)).toBeNull()
    // correctly signed, but without a session id (the cookie format before sessions could end) or with a short one
    const noSid = encode({ sub: parsed.sub, exp: parsed.exp })
    expect(verifySession(SECRET, `${noSid}.${hmacBase64url(SECRET, noSid)}`, NOW)).toBeNull()
    const shortSid = encode({ ...parsed, sid: "abc" })
    expect(verifySession(SECRET, `${shortSid}.${hmacBase64url(SECRET, shortSid)}`, NOW)).toBeNull()
    // the same, correctly signed with a well-formed sid, is accepted: the refusals above are the forgeries
    const fine = encode({ ...parsed, sid: "A".repeat(22) })
    expect(verifySession(SECRET, `${fine}.${hmacBase64url(SECRET, fine)}`, NOW)).toEqual({ ...parsed, sid: "A".repeat(22) })
  })
})

describe("CSRF (§5.3)", () => {
  const base = { secret: SECRET, identity: "dev@example.com", publicUrl: "https://g.example", secFetchSite: undefined }
  it("needs same origin: Origin equal to public_url's origin, or without Origin Sec-Fetch-Site same-origin", () => {
    expect(sameOrigin("https://g.example", "https://g.example", undefined)).toBe(true)
    expect(sameOrigin("https://g.example", "https://g.example:444", undefined)).toBe(false)
    expect(sameOrigin("https://g.example", "null", "same-origin")).toBe(false)
    expect(sameOrigin("https://g.example", undefined, "same-origin")).toBe(true)
    expect(sameOrigin("https://g.example", undefined, "same-site")).toBe(false)
    expect(sameOrigin("https://g.example", undefined, undefined)).toBe(false)
  })
  it("and the token base64url(HMAC-SHA256(secret, \"csrf\\0\" + identity)) of this identity", () => {
    const token = csrfToken(SECRET, "dev@example.com")
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(csrfOk({ ...base, origin: "https://g.example", token })).toBe(true)
    expect(csrfOk({ ...base, origin: "https://g.example", token: csrfToken(SECRET, "other@example.com") })).toBe(false)
    expect(csrfOk({ ...base, origin: "https://g.example", token: undefined })).toBe(false)
    expect(csrfOk({ ...base, origin: "https://evil.example", token })).toBe(false)
  })
})
