/**
 * Where a person lands after signing in: the approval page they asked for, carried as `next`
 * through the login page. Only a path of this service's approval pages counts; an absolute URL,
 * a scheme, `//host`, a backslash (browsers read `/\host` as `//host`), control characters, dot
 * segments that leave /approval and the login page itself all fall back to /approval, so the
 * login never redirects off-site.
 */

export const HOME = "/approval"
const LOGIN = "/approval/login"
const BASE = "http://groundnote.invalid"

/** The same-origin approval path of `raw` (path and query, normalised), or null when it is none. */
export const approvalPathOf = (raw: string | null | undefined): string | null => {
  if (raw === null || raw === undefined || raw.length === 0 || raw.length > 2000) return null
  // one leading slash, then anything but a second slash or backslash; no backslash or control character anywhere
  if (!/^\/(?![/\\])/.test(raw) || raw.includes("\\") || [...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return null
  let url: URL
  try {
    url = new URL(raw, BASE)
  } catch {
    return null
  }
  if (url.origin !== BASE) return null
  const path = url.pathname
  if (path !== HOME && !path.startsWith(`${HOME}/`)) return null
  if (path === LOGIN || path.startsWith(`${LOGIN}/`)) return null
  // an encoded slash or backslash could turn into one after another decoding somewhere
  if (/%(2f|5c)/i.test(path)) return null
  return `${path}${url.search}`
}

/** Where to go after signing in: `next` when it is an approval path, else the proposals. */
export const returnPathOf = (raw: string | null | undefined): string => approvalPathOf(raw) ?? HOME

/** The login page's address that comes back to `path` (the proposals need no `next`). */
export const loginPathFor = (path: string | null | undefined): string => {
  const target = approvalPathOf(path)
  return target === null || target === HOME ? LOGIN : `${LOGIN}?next=${encodeURIComponent(target)}`
}
