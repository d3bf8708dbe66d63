/**
 * A tool's input schema for the MCP SDK, made from the contract's Effect schema (never written
 * again by hand): tools/list shows the schema's JSON Schema, and the SDK's check is the Effect
 * schema itself, so the SDK refuses exactly what the contract refuses with its "Input
 * validation error" (deviation D45), naming each path with the contract's message. The zod
 * schema the SDK is given is an object (the SDK lists only objects) that checks nothing of its
 * own: a zod schema read from the JSON Schema refused first, with zod's words, and a union
 * (propose_rule's source) only as "Invalid input at source", never saying what was missing.
 */
import { JSONSchema, Schema, SchemaAST } from "effect"
import * as z from "zod"
import { issueMessage, keyText, schemaIssues } from "../contracts/errors.js"
import { STRICT } from "../contracts/schemas.js"

const made = new WeakMap<object, z.ZodType>()

const pathOf = (path: ReadonlyArray<PropertyKey>): Array<string | number> =>
  path.map((p) => (typeof p === "number" ? p : keyText(p)))

/** The zod schema of an Effect schema (memoised per schema object). */
export const toolInput = (schema: Schema.Schema.AnyNoContext): z.ZodType => {
  const known = made.get(schema)
  if (known !== undefined) return known
  // a tool without arguments: an object with no key (Struct({}) alone would be any value)
  const none = SchemaAST.isTypeLiteral(schema.ast) && schema.ast.propertySignatures.length === 0 && schema.ast.indexSignatures.length === 0
  const { $schema: _draft, ...json } = none
    ? { $schema: null, type: "object", properties: {}, additionalProperties: false }
    : JSONSchema.make(schema) as unknown as Record<string, unknown>
  // what tools/list shows: the JSON Schema as zod reads it (references inlined, one-value enums as const)
  const { $schema: _listedDraft, ...listed } = z.toJSONSchema(z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]), { target: "draft-7", io: "input" })
  const decode = Schema.decodeUnknownEither(schema, STRICT)
  // any object passes zod; every rule is the Effect schema's
  const zod = z.looseObject({}).superRefine((value, ctx) => {
    if (none) {
      for (const key of Object.keys(value)) ctx.addIssue({ code: "custom", path: [keyText(key)], message: "unknown key (remove it)" })
      return
    }
    const decoded = decode(value)
    if (decoded._tag === "Right") return
    for (const issue of schemaIssues(decoded.left)) {
      // never the value itself: the error text reaches the model unframed
      ctx.addIssue({ code: "custom", path: pathOf(issue.path), message: issueMessage(issue, 0) })
    }
  }).meta(listed)
  made.set(schema, zod)
  return zod
}
