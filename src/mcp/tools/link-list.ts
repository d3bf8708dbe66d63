/**
 * link_list {scope, ref, grouped?, page?} (graph.md §9.2, §6 "Everything about X"): the same
 * listLinks() and pipeline as GET /v1/links (listLinksSpec), channel mcp.
 */
import { ListLinksInput } from "../../graph/link-types.js"
import { listLinks } from "../../operations/links.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const LINK_LIST_DESCRIPTION =
  "List the links of one item: stored and derived ones, proposed ones with their confidence. With grouped: true on " +
  "an entity it returns everything about the entity and its descendants, grouped by kind with dates. 50 per page."

export const linkList: ToolSpec<typeof ListLinksInput.Encoded, typeof listLinks.input.Type, Services> = {
  name: "link_list",
  title: "List links",
  description: LINK_LIST_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: listLinks,
  args: ListLinksInput
}
