/**
 * Who a request is (architecture.md §5.1, gaps.md §2): a person (auth email) or a service
 * (auth access-service or bearer). Only an active grant turns an identity into rights.
 */
import { Schema } from "effect"
import type { GrantAuth } from "../contracts/grants.js"

export type ChannelName = "mcp" | "api" | "approval"

export interface Identity {
  readonly kind: "person" | "service"
  readonly auth: GrantAuth
  /** lowercased e-mail | Access common_name | SHA-256 hex of the bearer token */
  readonly identity: string
}

/** The key set could not be fetched: 500 internal, never 401 (architecture.md §6.6). */
export class JwksUnavailable extends Schema.TaggedError<JwksUnavailable>()("JwksUnavailable", {
  reason: Schema.String
}) {}

/** Every refused Access JWT (the reason, jose's code, goes to the process log only). */
export const UNAUTHORIZED_MESSAGE =
  "the Access token is not valid for this channel (expired, issued for another Access application, or not signed by the team's keys); sign in again"
