/**
 * The server instructions of the MCP server (graph.md §9.1, verbatim). The two sentences of
 * approval-modes.md §9 about auto-adopted rules and rule_retract arrive with the approval-modes
 * slice, together with the tool they name.
 */
export const INSTRUCTIONS =
  "Groundnote keeps confirmed business rules with their evidence and, per scope, a small knowledge graph: entities " +
  "(organisations, departments, projects, customers, objects, people, cases, topics) in one tree, and links between " +
  "rules, sources, attachments and entities. Always name the scope; links exist only inside one scope. Call " +
  "entity_resolve before entity_create, and whenever a name from a mail or conversation should be matched to an " +
  "entity. Every graph answer contains the full path of the entity: tell the person the path. What you create or " +
  "move takes effect at once but is unconfirmed until a person confirms it on the approval page: say so and give the " +
  "approval_url. You never confirm, archive or revert structure, and you never confirm rules: point to the approval " +
  "page. Read large trees step by step with entity_tree; never ask for a whole tree. Follow next when unsure; on an " +
  "error follow remedy instead of repeating the call. For every rule you use, give its date and source, and pass on " +
  "\"still valid?\". For standard tasks use the prompts create_level, file_incoming_mail, assign_document, " +
  "restructure and where_does_this_belong."
