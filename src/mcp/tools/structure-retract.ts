/**
 * structure_retract {id, reason}: takes back an entity or link change that the approval policy
 * adopted without a person, through the same operation as POST /v1/structure/:id/retract
 * (src/operations/retract.ts), channel mcp. Only while no person decided on it; afterwards
 * already-decided (a person changes it on the structure page). It never confirms, rejects or
 * reviews.
 */
import { StructureRetractArgs } from "../../graph/review-schemas.js"
import { retractStructure } from "../../operations/retract.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const STRUCTURE_RETRACT_DESCRIPTION =
  "Take back an entity or link change that the approval policy adopted without a person (marked auto-adopted): " +
  "an adopted new entity is archived, an adopted move or rename is undone, an adopted link is closed. Give the " +
  "entity id (its newest adopted change) or the link id. Use it only when the person asks, with their reason. It " +
  "works only while no person decided on the change; otherwise it is refused with already-decided and only a " +
  "person can change it on the structure page."

export const structureRetract: ToolSpec<typeof StructureRetractArgs.Encoded, typeof retractStructure.input.Type, Services> = {
  name: "structure_retract",
  title: "Retract an auto-adopted structure change",
  description: STRUCTURE_RETRACT_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  op: retractStructure,
  args: StructureRetractArgs,
  toInput: ({ id, reason }) => ({ id: id.replace(/^(entity|link)\//, ""), reason })
}
