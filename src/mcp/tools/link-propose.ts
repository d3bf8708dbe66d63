/**
 * link_propose {scope, from_ref, to_ref, type, confidence, reason, evidence?} (graph.md §9.2):
 * the same proposeLink() and pipeline as POST /v1/links (proposeLinkSpec), channel mcp. The type
 * is one of the proposable types (graph.md §9.3).
 */
import { Schema } from "effect"
import { LinkRequest, ProposableType } from "../../graph/link-types.js"
import { proposeLink } from "../../operations/links.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const LINK_PROPOSE_DESCRIPTION =
  "Propose a link inside one scope between a rule, source, attachment or entity, for example a mail concerns a " +
  "project or a document belongs to an object. Give an honest confidence from 0 to 1 and a reason that names the " +
  "evidence. A proposed link counts in search bundles only once a person confirms it or its confidence reaches the " +
  "configured minimum, and it is always marked as proposed. Thread, attachment, source and supersedes links exist " +
  "already; do not propose them."

/** The type is one of the proposable types (graph.md §9.3). */
const LinkArgs = Schema.Struct({ ...LinkRequest.from.fields, type: ProposableType })

export const linkPropose: ToolSpec<typeof LinkArgs.Encoded, typeof proposeLink.input.Type, Services> = {
  name: "link_propose",
  title: "Propose a link",
  description: LINK_PROPOSE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  op: proposeLink,
  args: LinkArgs
}
