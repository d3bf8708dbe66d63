/**
 * docs/api.md names every length and count limit of the /v1 request schemas: each maxLength,
 * maxItems and maximum of a request body or query parameter in /openapi.json (built from the
 * contract's schemas) is a row of its "Request limits" table, with the field and the number.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

type Json = Record<string, unknown>
let server: TestServer
let cleanup: () => void
let spec: Json

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

/** Every (field, limit) of a schema: the field is the last property name on the way (items of an array keep it). */
const limitsOf = (root: Json, schema: unknown, field: string, out: Set<string>, seen: Set<string> = new Set()): void => {
  if (!isObj(schema)) return
  const ref = schema.$ref
  if (typeof ref === "string") {
    if (seen.has(ref)) return
    const name = ref.split("/").pop() ?? ""
    const target = ((root.components as Json).schemas as Json)[name]
    limitsOf(root, target, field, out, new Set([...seen, ref]))
    return
  }
  for (const key of ["maxLength", "maxItems", "maximum"] as const) {
    const v = schema[key]
    if (typeof v === "number") out.add(`${field}\t${v}`)
  }
  if (isObj(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) limitsOf(root, v, k, out, seen)
  for (const k of ["items", "additionalProperties"] as const) limitsOf(root, schema[k], field, out, seen)
  for (const k of ["anyOf", "oneOf", "allOf"] as const) if (Array.isArray(schema[k])) for (const s of schema[k] as Array<unknown>) limitsOf(root, s, field, out, seen)
}

const requestLimits = (): Array<{ field: string; limit: number }> => {
  const out = new Set<string>()
  for (const [path, item] of Object.entries(spec.paths as Json)) {
    if (!path.startsWith("/v1")) continue
    for (const op of Object.values(item as Json)) {
      if (!isObj(op)) continue
      const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.["application/json"]
      if (isObj(body)) limitsOf(spec, body.schema, "(body)", out)
      for (const p of (op.parameters as Array<Json> | undefined) ?? []) limitsOf(spec, p.schema, String(p.name), out)
    }
  }
  return [...out].map((s) => s.split("\t")).map(([field, limit]) => ({ field: field ?? "", limit: Number(limit) }))
}

describe("docs/api.md, Request limits", () => {
  it("names every length and count limit of the /v1 request schemas with its field", () => {
    const doc = readFileSync(join(import.meta.dirname, "../../docs/api.md"), "utf8")
    const start = doc.indexOf("## Request limits")
    expect(start).toBeGreaterThan(-1)
    const rows = doc.slice(start).split("\n").filter((l) => l.startsWith("| `"))
    const limits = requestLimits()
    expect(limits.length).toBeGreaterThan(20)
    const missing = limits.filter(({ field, limit }) =>
      !rows.some((r) => r.includes(`\`${field}\``) && new RegExp(`(^|[^0-9_])${limit.toLocaleString("en-US").replace(/,/g, "[_,]?")}([^0-9_]|$)`).test(r.replace(/`[^`]*`/g, (m) => m.includes(field) ? "" : m))))
    expect(missing).toEqual([])
  })
})
