/**
 * The frame of every approval page: the document, the one stylesheet from 'self', the header
 * with the person and (dev-token mode) the logout form, and the response with the CSP and
 * nosniff headers of architecture.md §5.3. No script, no inline style, no image.
 */
import { HttpServerResponse } from "@effect/platform"
import { type Html, html, PAGE_HEADERS } from "./html.js"
import { STYLESHEET_HREF } from "./style.js"

/** Who looks at the page: the identity e-mail (shown only on these pages) and the csrf token. */
export interface Viewer {
  readonly identity: string
  readonly grantId: string
  readonly csrf: string
  /** dev-token mode: the session can be ended here */
  readonly canLogout: boolean
  /** config.zone: every time on the pages is in it */
  readonly zone?: string
}

export const csrfField = (viewer: Viewer): Html => html`<input type="hidden" name="csrf" value="${viewer.csrf}">`

export const layout = (o: { readonly title: string; readonly viewer: Viewer | null; readonly body: Html }): Html => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${o.title} · Groundnote approval</title>
<link rel="stylesheet" href="${STYLESHEET_HREF}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/approval">Groundnote approval</a>
  ${o.viewer === null ? "" : html`<nav aria-label="Account">
    <span>Signed in as <b>${o.viewer.identity}</b></span>
    ${o.viewer.zone === undefined ? "" : html`<span class="muted small">Times in ${o.viewer.zone}</span>`}
    ${o.viewer.canLogout ? html`<form method="post" action="/approval/logout">${csrfField(o.viewer)}<button type="submit" class="link">Sign out</button></form>` : ""}
  </nav>`}
</header>
<main id="main">
${o.body}
</main>
</body>
</html>
`

export const HTML_TYPE = "text/html; charset=utf-8"

/** A page with the headers of §5.3 on every answer, whatever its status. */
export const pageResponse = (doc: Html, status = 200, headers: Readonly<Record<string, string>> = {}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(doc.value, { status, headers: { ...headers, ...PAGE_HEADERS }, contentType: HTML_TYPE })
