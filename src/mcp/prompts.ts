/**
 * The five prompts (graph.md §9.4, gaps.md §5), one user message each. Arguments are checked
 * before any text is built (scope a ScopeName, type an entity type of the configuration, source a
 * mail or jamie id, ref an Endpoint; names ≤ 200 characters, subject, sender, hint, reason and
 * evidence ≤ 1000, description ≤ 2000). Every argument except scope and type is foreign text:
 * the message names it by its label ("the subject quoted below") and appends it in its own
 * untrusted block, all with one boundary, followed by the untrusted-text preamble.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js"
import * as z from "zod"
import { JAMIE_ID_RE, MAIL_ID_MAX, MAIL_ID_RE, SCOPE_NAME_RE } from "../contracts/ids.js"
import { frame, newBoundary, UNTRUSTED_PREAMBLE } from "../security/model-output.js"

export const PROMPT_NAMES = ["create_level", "file_incoming_mail", "assign_document", "restructure", "where_does_this_belong"] as const

/** Endpoint (graph.md §2): rule, source, attachment or entity ref, versionless. */
export const ENDPOINT_RE = new RegExp([
  /^rule\/[a-z][a-z0-9-]{1,39}-\d{4,}$/,
  /^source\/(jamie:[A-Za-z0-9._-]{1,200}|mail:<[^<>\s]+>)$/,
  /^attachment\/(jamie:[A-Za-z0-9._-]{1,200}|mail:<[^<>\s]+>)#[1-9]\d*$/,
  /^entity\/[a-z][a-z0-9-]{1,39}-e\d{4,}$/
].map((r) => `(?:${r.source})`).join("|"))

const scopeName = z.string().regex(SCOPE_NAME_RE, "must match ^[a-z][a-z0-9-]{1,39}$")
const name = z.string().min(1).max(200)
const text1000 = z.string().min(1).max(1000)
const description = z.string().min(1).max(2000)
const sourceId = z.string().max(MAIL_ID_MAX + 10).refine((s) => MAIL_ID_RE.test(s) || JAMIE_ID_RE.test(s), "must be a mail:<message-id> or jamie:<id> source id")
const endpoint = z.string().max(MAIL_ID_MAX + 40).regex(ENDPOINT_RE, "must be a rule, source, attachment or entity ref")

/** Builds one user message: the instructions, each foreign argument in its own block, the preamble. */
const message = (instructions: string, foreign: ReadonlyArray<readonly [label: string, value: string | undefined]>): GetPromptResult => {
  const boundary = newBoundary()
  const blocks = foreign
    .filter((f): f is readonly [string, string] => f[1] !== undefined)
    .map(([label, value]) => `The ${label}:\n${frame(boundary, label, value)}`)
  return {
    messages: [{ role: "user", content: { type: "text", text: [instructions, ...blocks, UNTRUSTED_PREAMBLE].join("\n\n") } }]
  }
}

/** "A is quoted below." / "A and B are quoted below." / "A, B and C are quoted below." */
const quotedBelow = (parts: ReadonlyArray<string>): string =>
  parts.length <= 1
    ? `${parts[0] ?? ""} is quoted below.`
    : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1] ?? ""} are quoted below.`

const NEVER = "Never confirm, reject, archive or revert anything yourself: a person does that on the approval page."

export const registerPrompts = (server: McpServer, entityTypes: ReadonlyArray<string>): void => {
  const type = z.enum(entityTypes as [string, ...Array<string>])

  const createLevel = { scope: scopeName, name, type, parent: name.optional(), evidence: text1000.optional() }
  server.registerPrompt("create_level", {
    title: "Create a level",
    description: "Create one new entity (a level of the tree) under the right parent, after checking that it does not exist yet.",
    argsSchema: createLevel
  }, (raw) => {
    const a = z.strictObject(createLevel).parse(raw)
    return message([
      `Create a new entity of type ${a.type} in scope ${a.scope}, named as the name quoted below` +
      `${a.parent === undefined ? "" : ", under the parent quoted below"}${a.evidence === undefined ? "" : ", with the evidence quoted below"}.`,
      `1. Call entity_resolve in scope ${a.scope} with the name and type ${a.type}. An exact or alias match means it exists already: show the person its full path and stop. Several close candidates: show their paths and ask the person which one is meant.`,
      a.parent === undefined
        ? `2. Find the parent: ask the person or look with entity_tree step by step from the top level; parent_id null only for a new top level.`
        : `2. Call entity_resolve in scope ${a.scope} with the parent name to find the parent; if it is not one clear match, show the candidates' paths and ask the person.`,
      `3. Call entity_create with scope ${a.scope}, type ${a.type}, the name, the parent_id from step 2${a.evidence === undefined ? "" : " and the evidence"}. On duplicate-candidate show the candidates' paths; use force: true with a reason only when the person says the new entity is different.`,
      `4. Tell the person the full path of the new entity, that it is unconfirmed until a person confirms it on the approval page, and give the approval_url. ${NEVER}`
    ].join("\n"), [["name", a.name], ["parent", a.parent], ["evidence", a.evidence]])
  })

  const fileMail = { scope: scopeName, source: sourceId, subject: text1000, sender: text1000.optional(), hint: text1000.optional() }
  server.registerPrompt("file_incoming_mail", {
    title: "File an incoming mail",
    description: "File a stored mail under the entities it concerns by proposing links, and propose any rule it states.",
    argsSchema: fileMail
  }, (raw) => {
    const a = z.strictObject(fileMail).parse(raw)
    return message([
      `File the incoming mail whose source id is quoted below in scope ${a.scope}. ${quotedBelow(["Its subject", ...(a.sender === undefined ? [] : ["its sender"]), ...(a.hint === undefined ? [] : ["a hint"])])}`,
      `1. Find what the mail is about: call entity_resolve in scope ${a.scope} with each name in the subject${a.sender === undefined ? "" : ", the sender"}${a.hint === undefined ? "" : " and the hint"} (customers, projects, objects, cases, organisations).`,
      "2. An exact or alias match: use it and check its place with entity_path. Several close candidates: show their paths and ask the person. Nothing fits: ask the person whether to create a new level (prompt create_level).",
      `3. Call link_propose in scope ${a.scope} from source/<the source id> to the entity, type concerns (or belongs_to), with an honest confidence from 0 to 1 and a reason that names the evidence.`,
      "4. If the mail states a business rule, call search_rules first, then propose_rule with a quote copied exactly from the mail.",
      `5. Tell the person the full path where the mail was filed, that the link is proposed until a person confirms it, and give every approval_url. ${NEVER}`
    ].join("\n"), [["source id", a.source], ["subject", a.subject], ["sender", a.sender], ["hint", a.hint]])
  })

  const assign = { scope: scopeName, ref: endpoint, description, hint: text1000.optional() }
  server.registerPrompt("assign_document", {
    title: "Assign a document",
    description: "Assign a document (attachment, source or rule) to the entity it belongs to by proposing a link.",
    argsSchema: assign
  }, (raw) => {
    const a = z.strictObject(assign).parse(raw)
    return message([
      `Assign the document whose ref is quoted below to its place in scope ${a.scope}. Its description${a.hint === undefined ? " is" : " and a hint are"} quoted below.`,
      `1. Call entity_resolve in scope ${a.scope} with the names in the description${a.hint === undefined ? "" : " and the hint"}.`,
      "2. An exact or alias match: check its place with entity_path. Several close candidates: show their paths and ask the person. Nothing fits: ask the person (prompt where_does_this_belong).",
      `3. Call link_propose in scope ${a.scope} from the document ref to the entity, type belongs_to (or concerns), with an honest confidence and a reason that names the evidence.`,
      `4. Tell the person the full path, that the link is proposed until a person confirms it, and give the approval_url if there is one. ${NEVER}`
    ].join("\n"), [["document ref", a.ref], ["description", a.description], ["hint", a.hint]])
  })

  const restructure = { scope: scopeName, entity: name, new_parent: name, reason: text1000 }
  server.registerPrompt("restructure", {
    title: "Restructure",
    description: "Move an entity with its subtree under another parent, after showing the person the old and the new path.",
    argsSchema: restructure
  }, (raw) => {
    const a = z.strictObject(restructure).parse(raw)
    return message([
      `Move the entity named below under the new parent named below in scope ${a.scope}, for the reason quoted below.`,
      `1. Call entity_resolve in scope ${a.scope} for the entity and for the new parent. Each must be clearly meant (an exact or alias match); otherwise show the candidates' paths and ask the person.`,
      "2. Show the person the old path (entity_path) and the new path, and ask for agreement before moving.",
      `3. Call entity_move with scope ${a.scope}, the entity's id, the new parent_id and the reason. On cycle show both paths and ask the person.`,
      `4. Tell the person the new full path, that the move is unconfirmed until a person confirms or reverts it on the approval page, and give the approval_url. ${NEVER}`
    ].join("\n"), [["entity", a.entity], ["new parent", a.new_parent], ["reason", a.reason]])
  })

  const where = { scope: scopeName, description, hint: text1000.optional() }
  server.registerPrompt("where_does_this_belong", {
    title: "Where does this belong?",
    description: "Find the place in the tree where something belongs, without creating or moving anything.",
    argsSchema: where
  }, (raw) => {
    const a = z.strictObject(where).parse(raw)
    return message([
      `Find where the thing described below belongs in scope ${a.scope}${a.hint === undefined ? "" : "; a hint is quoted below"}. Do not create, move or link anything.`,
      `1. Call entity_resolve in scope ${a.scope} with the names in the description${a.hint === undefined ? "" : " and the hint"}.`,
      "2. Look with entity_tree step by step from the top level or from a candidate's parent; never ask for a whole tree.",
      "3. Answer with the full path of the best place (entity_path), say how sure you are and name at most two alternatives with their paths. If nothing fits, suggest where a new level could go (prompt create_level) and let the person decide.",
      NEVER
    ].join("\n"), [["description", a.description], ["hint", a.hint]])
  })
}
