/**
 * list_scopes {}: the grant-wide listing of the MCP channel (architecture.md §5.2 step 3): the
 * grant's scopes, each with its rule counts (or available: false when it cannot be opened), the
 * grant's rights and the entity types of the graph. Logged as list_scopes in every scope it
 * could open.
 */
import { listScopes as list, NoInput } from "../../operations/status.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const LIST_SCOPES_DESCRIPTION =
  "List the scopes you may use with their rule counts, your rights (read, propose) and the entity types of the " +
  "graph. Call it first when you do not know which scope to name; every other tool needs the scope."

export const listScopes: ToolSpec<typeof NoInput.Encoded, typeof list.input.Type, Services> = {
  name: "list_scopes",
  title: "List scopes",
  description: LIST_SCOPES_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: list,
  args: NoInput
}
