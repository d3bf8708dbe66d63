/** GET /healthz and the RFC 9728 protected-resource document (no credential). */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { AppConfig } from "../../config/config.js"

export const healthz = Effect.succeed(HttpServerResponse.unsafeJson({ ok: true }))

export const protectedResource = Effect.map(AppConfig, (config) =>
  HttpServerResponse.unsafeJson({
    resource: `${config.file.public_url}/mcp`,
    authorization_servers: config.file.access === undefined ? [] : [config.file.access.team_domain]
  }))
