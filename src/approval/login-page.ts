/**
 * The login page of dev-token mode (architecture.md §5.3): one password field for
 * GROUNDNOTE_DEV_APPROVAL_TOKEN, posted to /approval/login. In cloudflare-access mode the route
 * is 404; a page that finds no credential there says to sign in through Access.
 */
import { type Html, html } from "./html.js"
import { layout } from "./layout.js"

/** `next`: the approval page to come back to after signing in (checked again when the form comes back). */
export const loginPage = (o: { readonly devToken: boolean; readonly message: string | null; readonly next?: string | null }): Html =>
  layout({
    title: "Sign in",
    viewer: null,
    body: o.devToken
      ? html`<h1>Sign in</h1>
<p class="muted">Development mode: sign in with the dev approval token (GROUNDNOTE_DEV_APPROVAL_TOKEN).</p>
${o.message === null ? "" : html`<p class="notice error" role="alert">${o.message}</p>`}
<form method="post" action="/approval/login" class="decide">
  ${o.next === undefined || o.next === null ? "" : html`<input type="hidden" name="next" value="${o.next}">`}
  <label for="token">Dev approval token</label>
  <input id="token" type="password" name="token" autocomplete="current-password" required autofocus>
  <button type="submit">Sign in</button>
</form>`
      : html`<h1>Please sign in</h1>
<p>This page needs your Cloudflare Access sign-in for the approval application. Open it again through Access.</p>`
  })
