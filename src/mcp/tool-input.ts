/**
 * A tool's input schema for the MCP SDK, made from the contract's Effect schema (never written
 * again by hand): its JSON Schema (what tools/list shows) as a zod schema, refined by the Effect
 * schema itself, so the SDK refuses exactly what the contract refuses with its "Input
 * validation error" (deviation D45), naming each path with the contract's message.
 */
import { JSONSchema, ParseResult, Schema, SchemaAST } from "effect"
import * as z from "zod"
import { issueMessage } from "../contracts/errors.js"
import { STRICT } from "../contracts/schemas.js"

const made = new WeakMap<object, z.ZodType>()

const pathOf = (path: ReadonlyArray<PropertyKey>): Array<string | number> =>
  path.map((p) => (typeof p === "number" ? p : String(p)))

/** The zod schema of an Effect schema (memoised per schema object). */
export const toolInput = (schema: Schema.Schema.AnyNoContext): z.ZodType => {
  const known = made.get(schema)
  if (known !== undefined) return known
  // a tool without arguments: an object with no key (Struct({}) alone would be any value)
  const none = SchemaAST.isTypeLiteral(schema.ast) && schema.ast.propertySignatures.length === 0 && schema.ast.indexSignatures.length === 0
  const { $schema: _draft, ...json } = none
    ? { $schema: null, type: "object", properties: {}, additionalProperties: false }
    : JSONSchema.make(schema) as unknown as Record<string, unknown>
  const decode = Schema.decodeUnknownEither(schema, STRICT)
  const zod = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]).superRefine((value, ctx) => {
    const decoded = decode(value)
    if (decoded._tag === "Right") return
    for (const issue of ParseResult.ArrayFormatter.formatErrorSync(decoded.left)) {
      // never the value itself: the error text reaches the model unframed
      ctx.addIssue({ code: "custom", path: pathOf(issue.path), message: issueMessage(issue, 0) })
    }
  })
  made.set(schema, zod)
  return zod
}
