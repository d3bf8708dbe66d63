/**
 * Refusals on the approval pages as pages: the pipeline answers ErrorBody JSON; a page request
 * gets the same status and code as HTML (and a person without a session in dev-token mode is
 * sent to the login page). Headers of §5.3 on every one.
 */
import type { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpServerResponse as Response } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { type Html, html, PAGE_HEADERS } from "./html.js"
import { layout, pageResponse, type Viewer } from "./layout.js"
import { loginPage } from "./login-page.js"
import { loginPathFor } from "./return-path.js"

const TITLES: Readonly<Record<string, string>> = {
  "unauthorized": "Please sign in",
  "channel-not-allowed": "Not allowed here",
  "scope-not-allowed": "Not your scope",
  "csrf-failed": "Refused: not sent from this page",
  "not-found": "Not found",
  "validation-failed": "That address is not valid",
  "scope-locked": "This scope is locked",
  "rate-limited": "Too many requests",
  "internal": "Something went wrong"
}

export const errorPage = (o: { readonly status: number; readonly code: string; readonly message: string; readonly viewer: Viewer | null }): Html =>
  layout({
    title: TITLES[o.code] ?? o.code,
    viewer: o.viewer,
    body: html`<h1>${TITLES[o.code] ?? "Refused"}</h1>
<div class="notice error" role="alert"><p><b>${o.status} ${o.code}</b></p><p>${o.message}</p></div>
<p><a href="/approval">Back to the open proposals</a></p>`
  })

/**
 * A refused state-changing request (csrf-failed) as a page that says what to do: the service is
 * reached at public_url only (another host or port, e.g. localhost for 127.0.0.1, is another
 * origin), and a form works only from a page of this service opened there.
 */
export const csrfPage = (o: { readonly publicUrl: string; readonly message: string; readonly viewer: Viewer | null; readonly login: boolean }): Html => {
  const start = `${o.publicUrl}${o.login ? "/approval/login" : "/approval"}`
  return layout({
    title: TITLES["csrf-failed"] ?? "Refused",
    viewer: o.viewer,
    body: html`<h1>${o.login ? "Sign-in refused: not sent from this service's address" : "Refused: not sent from this service's address"}</h1>
<div class="notice error" role="alert">
  <p>This service accepts forms only from its own pages at <b>${o.publicUrl}</b> (its <code>public_url</code>). Your browser sent this one from another address or without this page's token, so nothing was ${o.login ? "signed in" : "saved"}.</p>
  <p>Open <a href="${start}">${start}</a> exactly as written (the same host and port: <code>localhost</code> and <code>127.0.0.1</code> are different addresses) and try again. If people reach the service under another address, the operator sets <code>public_url</code> in groundnote.json to that address.</p>
</div>
<p class="details">Details: 403 csrf-failed · ${o.message}</p>`
  })
}

interface ErrorJson {
  readonly error?: unknown
  readonly message?: unknown
}

/** The ErrorBody of a JSON response, or null when the response is not one. */
export const errorBodyOf = (response: HttpServerResponse.HttpServerResponse): { code: string; message: string } | null => {
  if (response.status < 400 || response.body._tag !== "Uint8Array" || !response.body.contentType.startsWith("application/json")) return null
  try {
    const parsed = JSON.parse(new TextDecoder().decode(response.body.body)) as ErrorJson
    if (typeof parsed.error !== "string") return null
    return { code: parsed.error, message: typeof parsed.message === "string" ? parsed.message : "" }
  } catch {
    return null
  }
}

/**
 * A JSON refusal of the pipeline as a page, same status; Retry-After is kept. 401: a page
 * request in dev-token mode goes to the login page (303), which comes back to `returnTo`; a post
 * gets the login page with 401 and a note that nothing was saved.
 */
export const asPage = (
  response: HttpServerResponse.HttpServerResponse,
  o: { readonly devToken: boolean; readonly viewer: Viewer | null; readonly toLogin: boolean; readonly returnTo?: string; readonly publicUrl?: string }
): HttpServerResponse.HttpServerResponse => {
  const body = errorBodyOf(response)
  if (body === null) return response
  if (body.code === "unauthorized" && o.devToken && o.toLogin) {
    // back to the page asked for after signing in (only an approval path of this service)
    return Response.redirect(loginPathFor(o.returnTo), { status: 303, headers: PAGE_HEADERS })
  }
  if (body.code === "unauthorized") {
    return pageResponse(loginPage({ devToken: o.devToken, message: o.toLogin ? null : "You are not signed in (any more). Nothing was saved." }), 401)
  }
  if (body.code === "csrf-failed" && o.publicUrl !== undefined) {
    return pageResponse(csrfPage({ publicUrl: o.publicUrl, message: body.message, viewer: o.viewer, login: false }), response.status)
  }
  const retry = response.headers["retry-after"]
  return pageResponse(
    errorPage({ status: response.status, code: body.code, message: body.message, viewer: o.viewer }),
    response.status,
    retry === undefined ? {} : { "retry-after": retry }
  )
}

export const isFormPost = (request: HttpServerRequest.HttpServerRequest): boolean =>
  (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() === "application/x-www-form-urlencoded"

/**
 * For the /v1 routes the approval forms post to: a refusal before the page could be rendered
 * (401, csrf, limits, a malformed target) answers a form post as a page too; JSON stays JSON.
 */
export const asPageForFormPost = (request: HttpServerRequest.HttpServerRequest) => (response: HttpServerResponse.HttpServerResponse) =>
  isFormPost(request)
    ? Effect.map(AppConfig, (config) =>
      asPage(response, { devToken: config.env.authMode === "dev-token", viewer: null, toLogin: false, publicUrl: config.file.public_url }))
    : Effect.succeed(response)
