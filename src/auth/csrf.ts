/**
 * CSRF for every state-changing approval request (architecture.md §5.3): same origin (Origin
 * equals the origin of public_url; without Origin, Sec-Fetch-Site: same-origin) and the token
 * base64url(HMAC-SHA256(secret, "csrf\0" + identity)) in the form field or header `csrf`.
 */
import { hmacBase64url, sameSecret } from "./tokens.js"

export const csrfToken = (secret: string, identity: string): string => hmacBase64url(secret, `csrf\0${identity}`)

export const sameOrigin = (publicUrl: string, origin: string | undefined, secFetchSite: string | undefined): boolean => {
  if (origin !== undefined) return origin === new URL(publicUrl).origin
  return secFetchSite === "same-origin"
}

export const csrfOk = (input: {
  readonly secret: string
  readonly identity: string
  readonly publicUrl: string
  readonly origin: string | undefined
  readonly secFetchSite: string | undefined
  readonly token: string | undefined
}): boolean =>
  sameOrigin(input.publicUrl, input.origin, input.secFetchSite) &&
  input.token !== undefined &&
  sameSecret(input.token, csrfToken(input.secret, input.identity))
