/**
 * A person whose sign-in is valid but who holds no active grant (architecture.md §5.2 step 1:
 * 401). In dev-token mode the login page sends a signed-in person to /approval, so answering
 * that with a redirect to the login page would loop; instead every approval page says that the
 * sign-in worked, that no active grant covers this address, and the command the operator runs
 * to create one (docs/cli.md, `grants create`).
 */
import type { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { authenticate } from "../auth/credentials.js"
import { csrfToken } from "../auth/csrf.js"
import { type AppConfigShape, scopeNames } from "../config/config.js"
import { type Html, html } from "./html.js"
import { layout, pageResponse } from "./layout.js"

/** The command that creates a person grant for `identity` on the configured scopes. */
export const grantCommand = (identity: string, scopes: ReadonlyArray<string>): string =>
  [
    "npx groundnote grants create --kind person --auth email",
    `--identity ${identity}`,
    ...(scopes.length === 0 ? ["--scope <scope>"] : scopes.map((s) => `--scope ${s}`)),
    "--right read --right decide"
  ].join(" ")

export const noGrantPage = (o: { readonly identity: string; readonly scopes: ReadonlyArray<string>; readonly csrf: string; readonly canLogout: boolean }): Html =>
  layout({
    title: "No active grant",
    // the viewer line shows who is signed in and the sign-out form; there is no grant to name
    viewer: { identity: o.identity, grantId: "", csrf: o.csrf, canLogout: o.canLogout },
    body: html`<h1>No active grant for ${o.identity}</h1>
<div class="notice warn" role="alert">
  <p>You are signed in as <b>${o.identity}</b>, but there is no active grant for that address, so there is nothing you may read or decide here yet.</p>
</div>
<h2>What the operator runs</h2>
<p>On the machine that runs Groundnote, the operator creates a grant for this address (add or remove <code>--scope</code> as needed):</p>
<pre class="command"><code>${grantCommand(o.identity, o.scopes)}</code></pre>
<p class="small muted">A grant that existed but was disabled stays disabled; <code>npx groundnote grants list</code> shows every grant. Reload this page once the grant exists.</p>`
  })

/**
 * When a page request was refused with 401: is the credential itself valid (a signed-in person
 * without an active grant)? Then the no-grant page, with status 401 as the contract says; else
 * null (not signed in: the caller's usual answer).
 */
export const noGrantResponse = (request: HttpServerRequest.HttpServerRequest, config: AppConfigShape) =>
  Effect.gen(function*() {
    const identity = yield* Effect.either(authenticate(request, "approval", config))
    if (identity._tag === "Left" || identity.right.kind !== "person") return null
    const person = identity.right.identity
    const doc = noGrantPage({
      identity: person,
      scopes: scopeNames(config),
      csrf: csrfToken(Redacted.value(config.env.sessionSecret), person),
      canLogout: config.env.authMode === "dev-token"
    })
    return pageResponse(doc, 401) as HttpServerResponse.HttpServerResponse
  })
