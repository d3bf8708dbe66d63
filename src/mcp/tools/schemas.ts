/**
 * Input schemas of the MCP tools in zod (the SDK checks them; a rejection stays its "Input
 * validation error", D45). They mirror the contract's Effect schemas, which the shared pipeline
 * decodes again, so a call passes exactly what the same /v1 request would pass.
 */
import * as z from "zod"
import { ENTITY_ID_RE, JAMIE_ID_RE, MAIL_ID_MAX, MAIL_ID_RE, RULE_ID_RE, RULE_REF_RE, SCOPE_NAME_RE } from "../../contracts/ids.js"
import { isCalendarDay, isInstant, LINK_MAX } from "../../contracts/schemas.js"
import { ENDPOINT_MAX, endKindOf, PROPOSABLE_TYPES } from "../../graph/link-types.js"
import { charLength, normalize } from "../../graph/normalize.js"

export const scopeName = z.string().regex(SCOPE_NAME_RE, "must match ^[a-z][a-z0-9-]{1,39}$")
export const day = z.string().refine(isCalendarDay, "must be a calendar day YYYY-MM-DD")
export const instant = z.string().refine(isInstant, "must be a UTC instant YYYY-MM-DDTHH:MM:SS[.fff]Z")
export const ruleId = z.string().regex(RULE_ID_RE, "must be a rule id <scope>-<nnnn>")
export const ruleRef = z.string().regex(RULE_REF_RE, "must be a rule ref rule/<id>[@<n>]")
export const entityId = z.string().regex(ENTITY_ID_RE, "must be an entity id <scope>-e<nnnn>")
export const jamieId = z.string().regex(JAMIE_ID_RE, "must be jamie:<id>")
export const mailId = z.string().max(MAIL_ID_MAX).regex(MAIL_ID_RE, "must be mail:<message-id> including the angle brackets")

const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s)
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}
export const link = z.string().max(LINK_MAX).refine(isHttpUrl, "must be an http: or https: URL")

export const relationKind = z.enum(["customer", "product", "supplier"])
export const relation = z.strictObject({
  kind: relationKind, name: z.string().min(1).max(200), ref: z.string().min(1).max(200).nullable()
})
export const keywords = z.array(z.string().min(2).max(100)).max(30)

// ------------------------------------------------------------------------------------------
// Graph tools (graph.md §9.2): names bounded as given and after normalization (§5.3); entity
// types an enum built per request from the configuration.

export const NAME_MAX = 200
const nameBound = (s: string): boolean => s.trim().length > 0 && charLength(s) <= NAME_MAX && charLength(normalize(s)) <= NAME_MAX
export const entityName = z.string()
  .refine(nameBound, "1–200 characters that are not all spaces, also at most 200 after normalization")
  .refine((s) => normalize(s).length > 0, "must contain a letter or a digit")
export const entityTypeOf = (types: ReadonlyArray<string>) => z.enum(types as [string, ...Array<string>])
export const graphReason = z.string().max(1000).refine((s) => s.trim().length > 0, "must not be empty")
export const evidence = z.string().min(1).max(1000)
export const endpoint = z.string().max(ENDPOINT_MAX).refine((s) => endKindOf(s) !== null,
  "must be rule/<id>, source/<mail:<…>|jamie:…>, attachment/<source id>#<n> or entity/<id> (no @version)")
export const proposableType = z.enum(PROPOSABLE_TYPES)
