/**
 * The entity requests with `type` an enum of the configured types (graph.md §7), as the MCP
 * tools entity_create and entity_resolve list them; built from the contract's request schemas
 * once per list of types.
 */
import { Schema } from "effect"
import { CreateEntityRequest, ResolveQuery } from "./schemas.js"

const make = (types: ReadonlyArray<string>) => {
  const type = Schema.Literal(...(types as [string, ...Array<string>]))
  return {
    create: Schema.Struct({ ...CreateEntityRequest.fields, type }),
    resolve: Schema.Struct({ ...ResolveQuery.fields, type: Schema.optional(type) })
  }
}
type WithTypes = ReturnType<typeof make>

const byTypes = new Map<string, WithTypes>()

/** CreateEntityRequest and the resolve query with `type` one of `types`. */
export const withEntityTypes = (types: ReadonlyArray<string>): WithTypes => {
  const key = types.join(",")
  const known = byTypes.get(key)
  if (known !== undefined) return known
  const made = make(types)
  byTypes.set(key, made)
  return made
}
