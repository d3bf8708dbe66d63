/**
 * The approval session of dev-token mode (architecture.md §5.3): cookie __Host-gn_session (https
 * public_url: Secure, no Domain) or gn_session (http loopback dev only) = base64url({sub, sid, exp})
 * + "." + HMAC-SHA256(GROUNDNOTE_SESSION_SECRET), HttpOnly; SameSite=Strict; Path=/; 8 h.
 * `sid` is a random session id (128 bits, base64url): logout records it as ended in ops.sqlite
 * (OpsStore.endSession), so a copied cookie stops working when its person signs out.
 */
import { randomBytes } from "node:crypto"
import { hmacBase64url, sameSecret } from "./tokens.js"

export const SESSION_SECONDS = 8 * 60 * 60

/** A session id: at least 128 bits from a CSPRNG, base64url (22 characters for 16 bytes). */
export const SID_RE = /^[A-Za-z0-9_-]{22,64}$/
export const newSessionId = (): string => randomBytes(16).toString("base64url")

/** A verified session: its subject (lowercased e-mail), id and expiry (seconds since the epoch). */
export interface Session {
  readonly sub: string
  readonly sid: string
  readonly exp: number
}

export const sessionCookieName = (publicUrl: string): string =>
  new URL(publicUrl).protocol === "https:" ? "__Host-gn_session" : "gn_session"

export const signSession = (secret: string, sub: string, nowMs: number, sid: string = newSessionId()): string => {
  const exp = Math.floor(nowMs / 1000) + SESSION_SECONDS
  const payload = Buffer.from(JSON.stringify({ sub, sid, exp }), "utf8").toString("base64url")
  return `${payload}.${hmacBase64url(secret, payload)}`
}

/**
 * The session of a cookie value, or null when it is forged, malformed, expired or carries no
 * session id (a cookie without sid could never be ended by logout).
 */
export const verifySession = (secret: string, value: string, nowMs: number): Session | null => {
  const dot = value.indexOf(".")
  if (dot <= 0) return null
  const payload = value.slice(0, dot)
  if (!sameSecret(value.slice(dot + 1), hmacBase64url(secret, payload))) return null
  try {
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown; sid?: unknown; exp?: unknown }
    if (typeof parsed.sub !== "string" || typeof parsed.exp !== "number" || !Number.isSafeInteger(parsed.exp)) return null
    if (typeof parsed.sid !== "string" || !SID_RE.test(parsed.sid)) return null
    return parsed.exp * 1000 > nowMs ? { sub: parsed.sub, sid: parsed.sid, exp: parsed.exp } : null
  } catch {
    return null
  }
}

export const sessionCookie = (publicUrl: string, value: string, maxAge = SESSION_SECONDS): string => {
  const secure = new URL(publicUrl).protocol === "https:"
  return [
    `${sessionCookieName(publicUrl)}=${value}`,
    "HttpOnly",
    "SameSite=Strict",
    "Path=/",
    `Max-Age=${maxAge}`,
    ...(secure ? ["Secure"] : [])
  ].join("; ")
}
