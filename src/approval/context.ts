/**
 * Who looks at a page and when: the viewer (identity e-mail, grant, csrf token) and the clock of
 * config.zone. Shared by every page and form handler.
 */
import { Clock, Effect, Redacted } from "effect"
import { csrfToken } from "../auth/csrf.js"
import { AppConfig } from "../config/config.js"
import type { Clockwork } from "./format.js"
import type { Viewer } from "./layout.js"

export const viewerOf = (identity: string, grantId: string) =>
  Effect.map(AppConfig, (config): Viewer => ({
    identity,
    grantId,
    csrf: csrfToken(Redacted.value(config.env.sessionSecret), identity),
    canLogout: config.env.authMode === "dev-token",
    zone: config.file.zone
  }))

export const clockwork = Effect.gen(function*() {
  const config = yield* AppConfig
  const nowMs = yield* Clock.currentTimeMillis
  return { nowMs, zone: config.file.zone } satisfies Clockwork
})
