/**
 * The approval session of dev-token mode (architecture.md §5.3): cookie __Host-gn_session (https
 * public_url: Secure, no Domain) or gn_session (http loopback dev only) = base64url({sub, exp})
 * + "." + HMAC-SHA256(GROUNDNOTE_SESSION_SECRET), HttpOnly; SameSite=Strict; Path=/; 8 h.
 */
import { hmacBase64url, sameSecret } from "./tokens.js"

export const SESSION_SECONDS = 8 * 60 * 60

export const sessionCookieName = (publicUrl: string): string =>
  new URL(publicUrl).protocol === "https:" ? "__Host-gn_session" : "gn_session"

export const signSession = (secret: string, sub: string, nowMs: number): string => {
  const payload = Buffer.from(JSON.stringify({ sub, exp: Math.floor(nowMs / 1000) + SESSION_SECONDS }), "utf8").toString("base64url")
  return `${payload}.${hmacBase64url(secret, payload)}`
}

/** The session's subject, or null when the cookie is forged, malformed or expired. */
export const verifySession = (secret: string, value: string, nowMs: number): string | null => {
  const dot = value.indexOf(".")
  if (dot <= 0) return null
  const payload = value.slice(0, dot)
  if (!sameSecret(value.slice(dot + 1), hmacBase64url(secret, payload))) return null
  try {
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown; exp?: unknown }
    if (typeof parsed.sub !== "string" || typeof parsed.exp !== "number") return null
    return parsed.exp * 1000 > nowMs ? parsed.sub : null
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
