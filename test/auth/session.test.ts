import { describe, expect, it } from "vitest"
import { csrfOk, csrfToken, sameOrigin } from "../../src/auth/csrf.js"
import { SESSION_SECONDS, sessionCookie, sessionCookieName, signSession, verifySession } from "../../src/auth/session.js"

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
    expect(verifySession(SECRET, v, NOW)).toBe("dev@example.com")
    expect(verifySession(SECRET, v, NOW + SESSION_SECONDS * 1000 - 1000)).toBe("dev@example.com")
    expect(verifySession(SECRET, v, NOW + SESSION_SECONDS * 1000)).toBeNull()
    expect(verifySession("t".repeat(40), v, NOW)).toBeNull()
    const [payload, mac] = v.split(".") as [string, string]
    const other = Buffer.from(JSON.stringify({ sub: "boss@example.com", exp: NOW / 1000 + 100 })).toString("base64url")
    expect(verifySession(SECRET, `${other}.${mac}`, NOW)).toBeNull()
    expect(verifySession(SECRET, payload, NOW)).toBeNull()
    expect(verifySession(SECRET, "garbage", NOW)).toBeNull()
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
