import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { Effect, Either } from "effect"
import { parseConfigFile } from "../../src/config/file.js"
import { type StartRefusal } from "../../src/config/refusal.js"
import type { ConfigFile } from "../../src/config/schema.js"

const minimal = {
  instance: "acme",
  zone: "Europe/Berlin",
  public_url: "http://127.0.0.1:8787",
  scopes: [{ name: "sales", providers_allowed: [] }, { name: "ops", providers_allowed: ["local"] }],
  search: {},
  backup: { kind: "copy", directory: "/var/backups/groundnote", deadman_url: "https://hc-ping.com/x" }
}

const parse = (value: unknown): ConfigFile => Effect.runSync(parseConfigFile(JSON.stringify(value)))

const refusal = (value: unknown): StartRefusal => {
  const result = Effect.runSync(Effect.either(parseConfigFile(JSON.stringify(value))))
  if (Either.isRight(result)) throw new Error("expected config-invalid")
  expect(result.left.code).toBe("config-invalid")
  return result.left
}

/** The issue paths of a refused config, and a check that the message lists each one. */
const issuePaths = (value: unknown): Array<string> => {
  const e = refusal(value)
  const issues = e.issues ?? []
  expect(issues.length).toBeGreaterThan(0)
  for (const i of issues) expect(e.message).toContain(`${i.path}: ${i.message}`)
  return issues.map((i) => i.path)
}

const messageAt = (value: unknown, path: string): string => {
  const e = refusal(value)
  const issue = (e.issues ?? []).find((i) => i.path === path)
  if (issue === undefined) throw new Error(`no issue at ${path}: ${e.message}`)
  return issue.message
}

describe("groundnote.json schema", () => {
  it("applies every default to a minimal config", () => {
    const c = parse(minimal)
    expect(c.recheck_after_days).toBe(180)
    expect(c.limits).toEqual({
      requests_per_minute: 60,
      decisions_per_minute: 60,
      login_attempts_per_minute: 5,
      exports_per_hour: 6,
      trusted_proxy: false
    })
    expect(c.graph).toEqual({
      entity_types: ["organisation", "department", "project", "customer", "object", "person", "case", "topic"],
      max_depth: 16,
      large_subtree: 10,
      proposed_min_confidence: null
    })
    expect(c.search.languages).toEqual(["de", "en"])
    expect(c.search.synonyms).toEqual([])
    expect(c.search.min_coverage).toBe(0)
    expect(c.search.lexical).toEqual({ features: {}, sub_weights: {} })
    expect(c.search.semantic).toEqual({ enabled: false })
    expect(c.search.reranker).toEqual({ enabled: false })
    expect(c.doctor).toEqual({ max_backup_age_hours: 26, max_probe_age_hours: 26 })
    expect(c.scopes.map((s) => s.reranker)).toEqual([false, false])
    expect(c.access).toBeUndefined()
    expect(c.approval).toBeUndefined()
    expect(c.at_rest).toBeUndefined()
  })

  it("refuses a secret anywhere in the file, naming the key and the kind, never the value (invariant 9)", () => {
    const token = `ghp_${"A1b2C3d4E5".repeat(3)}123456`
    const value = {
      ...minimal,
      public_url: "http://admin:Pa55w0rd!x@127.0.0.1:8787",
      search: { synonyms: [["Lieferzeit", token]] },
      backup: { kind: "copy", directory: "/var/backups/groundnote", deadman_url: "https://user:Pa55w0rd!x@hc.example/ping" }
    }
    expect(issuePaths(value).sort()).toEqual(["backup.deadman_url", "public_url", "search.synonyms[0][1]"])
    const e = refusal(value)
    expect(e.message).toContain("secrets never go into groundnote.json")
    expect(e.message).not.toContain("Pa55w0rd")
    expect(e.message).not.toContain(token)
    // ordinary values with key-like words are no secrets
    expect(parse({ ...minimal, search: { synonyms: [["api key", "Schlüssel", "token"]] } }).search.synonyms).toEqual([["api key", "Schlüssel", "token"]])
  })

  it("parses the shipped example config", () => {
    const text = readFileSync(join(import.meta.dirname, "../../config/groundnote.example.json"), "utf8")
    const c = Effect.runSync(parseConfigFile(text))
    expect(c.instance).toBe("acme")
    expect(c.zone).toBe("Europe/Berlin")
    expect(c.public_url).toBe("http://127.0.0.1:8787")
    expect(c.scopes.map((s) => s.name)).toEqual(["sales", "ops"])
    expect(c.backup.kind).toBe("copy")
    if (c.backup.kind === "copy") expect(c.backup.directory).toBe("/var/backups/groundnote")
  })

  it("accepts a leading byte order mark", () => {
    const c = Effect.runSync(parseConfigFile(`\uFEFF${JSON.stringify(minimal)}`))
    expect(c.instance).toBe("acme")
  })

  it("accepts a full config with every optional block", () => {
    const c = parse({
      ...minimal,
      access: { team_domain: "https://acme.cloudflareaccess.com", aud_mcp: "a", aud_approval: "b", aud_api: "c" },
      search: {
        synonyms: [["Lieferzeit", "delivery time"]],
        languages: ["de"],
        lexical: { features: { trigram: true }, field_weights: [4, 3, 2, 1], fusion: "rrf", rrf_k: 60 },
        min_coverage: 0.3
      },
      backup: { kind: "litestream", target: "s3://bucket/path", prefix: "gn", deadman_url: "https://hc-ping.com/x", export_directory: "/srv/export" },
      at_rest: { kind: "volume", attested_at: "2026-01-31" },
      doctor: { max_backup_age_hours: 48 },
      recheck_after_days: 365,
      limits: { trusted_proxy: true },
      graph: { entity_types: ["customer", "project"], max_depth: 8, proposed_min_confidence: 0.7 }
    })
    expect(c.limits.trusted_proxy).toBe(true)
    expect(c.limits.requests_per_minute).toBe(60)
    expect(c.doctor.max_probe_age_hours).toBe(26)
    expect(c.search.lexical.features.trigram).toBe(true)
    expect(c.graph.max_depth).toBe(8)
  })

  it("names unknown keys with their full path at every depth", () => {
    const paths = issuePaths({
      ...minimal,
      colour: "blue",
      scopes: [{ name: "sales", providers_allowed: [], secret: "x" }],
      search: { lexical: { features: { foo: true } } },
      limits: { bar: 1 },
      backup: { ...minimal.backup, extra: 1 }
    })
    expect(paths).toEqual(expect.arrayContaining([
      "colour", "scopes[0].secret", "search.lexical.features.foo", "limits.bar", "backup.extra"
    ]))
    expect(messageAt({ ...minimal, search: { lexical: { features: { foo: true } } } }, "search.lexical.features.foo"))
      .toBe("unknown key (remove it)")
  })

  it("lists every problem, without the 'Expected undefined' echo of optional keys", () => {
    const e = refusal({ ...minimal, zone: "Mars/Olympus", public_url: "nope", recheck_after_days: 5 })
    expect((e.issues ?? []).map((i) => i.path)).toEqual(["zone", "public_url", "recheck_after_days"])
    expect(e.message).not.toContain("Expected undefined")
  })

  it("names missing required keys", () => {
    const paths = issuePaths({})
    expect(paths).toEqual(["instance", "zone", "public_url", "scopes", "search", "backup"])
  })

  it("backup.deadman_url may be null (no dead-man service, the demo), but never left out", () => {
    expect(parse({ ...minimal, backup: { ...minimal.backup, deadman_url: null } }).backup.deadman_url).toBeNull()
    expect(parse({ ...minimal, backup: { kind: "litestream", target: "s3://b/p", prefix: "gn", deadman_url: null } }).backup.deadman_url).toBeNull()
    expect(issuePaths({ ...minimal, backup: { kind: "copy", directory: "/var/backups/groundnote" } })).toEqual(["backup.deadman_url"])
    expect(issuePaths({ ...minimal, backup: { ...minimal.backup, deadman_url: "" } })).toEqual(["backup.deadman_url"])
  })

  it("turns semantic on with its defaults (gaps §11)", () => {
    const c = parse({ ...minimal, search: { semantic: { enabled: true } } })
    expect(c.search.semantic).toEqual({ enabled: true, model: "bge-m3" })
    const d = parse({ ...minimal, search: { semantic: { enabled: true, model: "qwen3-embedding-0.6b", model_dir: "/srv/models" } } })
    expect(d.search.semantic).toEqual({ enabled: true, model: "qwen3-embedding-0.6b", model_dir: "/srv/models" })
  })

  it("turns the reranker on with its defaults (gaps §11)", () => {
    const c = parse({ ...minimal, search: { reranker: { enabled: true } } })
    expect(c.search.reranker).toEqual({
      enabled: true, provider: "typesafe", model: "jev-1.14.0", monthly_cap_usd: 5, timeout_ms: 1000, threshold: 0.5
    })
  })

  it("refuses bad stage b/c settings with their paths", () => {
    expect(messageAt({ ...minimal, search: { semantic: { enabled: true, model: "gpt" } } }, "search.semantic.model"))
      .toContain("\"bge-m3\" | \"qwen3-embedding-0.6b\"")
    expect(issuePaths({ ...minimal, search: { semantic: { enabled: false, model: "bge-m3" } } })).toEqual(["search.semantic.model"])
    expect(issuePaths({ ...minimal, search: { reranker: { enabled: true, timeout_ms: 50, monthly_cap_usd: 2000 } } }))
      .toEqual(expect.arrayContaining(["search.reranker.timeout_ms", "search.reranker.monthly_cap_usd"]))
  })

  it("accepts an approval block and applies its defaults (gaps §10)", () => {
    const c = parse({ ...minimal, approval: { scopes: { sales: { mode: "autonomous", classes: { personal: "manual" } } } } })
    expect(c.approval).toEqual({
      default_mode: "classified",
      daily_limit: 20,
      own_domains: [],
      scopes: { sales: { mode: "autonomous", classes: { personal: "manual" } } }
    })
  })

  it("refuses a mandatory exception under approval classes", () => {
    const message = messageAt(
      { ...minimal, approval: { scopes: { sales: { classes: { payment: "autonomous" } } } } },
      "approval.scopes.sales.classes.payment"
    )
    expect(message).toContain("mandatory exception")
  })

  it("refuses an unknown approval class and a bad daily_limit", () => {
    const paths = issuePaths({ ...minimal, approval: { daily_limit: 0, scopes: { sales: { classes: { vip: "manual" } } } } })
    expect(paths).toEqual(expect.arrayContaining(["approval.daily_limit", "approval.scopes.sales.classes.vip"]))
  })

  it("refuses an unconfigured scope under approval.scopes", () => {
    const message = messageAt({ ...minimal, approval: { scopes: { hr: { mode: "manual" } } } }, "approval.scopes.hr")
    expect(message).toContain("not a configured scope")
  })

  it("refuses duplicate scope names", () => {
    const message = messageAt(
      { ...minimal, scopes: [{ name: "sales", providers_allowed: [] }, { name: "sales", providers_allowed: [] }] },
      "scopes[1].name"
    )
    expect(message).toContain("duplicate scope name")
  })

  it("refuses an empty scope list and a bad scope name", () => {
    expect(issuePaths({ ...minimal, scopes: [] })).toEqual(["scopes"])
    expect(issuePaths({ ...minimal, scopes: [{ name: "Sales", providers_allowed: [] }] })).toEqual(["scopes[0].name"])
  })

  it("refuses equal access audiences", () => {
    const message = messageAt(
      { ...minimal, access: { team_domain: "https://acme.cloudflareaccess.com", aud_mcp: "x", aud_approval: "x", aud_api: "y" } },
      "access"
    )
    expect(message).toContain("different audiences")
  })

  it("refuses a zone that is not an IANA zone", () => {
    expect(messageAt({ ...minimal, zone: "Mars/Olympus" }, "zone")).toContain("IANA")
  })

  it("refuses a public_url with a trailing slash", () => {
    expect(messageAt({ ...minimal, public_url: "https://groundnote.acme.example/" }, "public_url")).toContain("slash")
  })

  it("refuses an unknown backup kind and a relative export_directory", () => {
    expect(issuePaths({ ...minimal, backup: { kind: "tape" } })).toEqual(["backup.kind"])
    expect(messageAt({ ...minimal, backup: { ...minimal.backup, export_directory: "export" } }, "backup.export_directory"))
      .toContain("absolute path")
  })

  it("refuses duplicate and malformed entity types", () => {
    const paths = issuePaths({ ...minimal, graph: { entity_types: ["customer", "customer", "Bad Type"] } })
    expect(paths).toEqual(["graph.entity_types[2]"])
    expect(issuePaths({ ...minimal, graph: { entity_types: ["customer", "customer"] } })).toEqual(["graph.entity_types[1]"])
  })

  it("refuses an at_rest day that does not exist", () => {
    expect(issuePaths({ ...minimal, at_rest: { kind: "volume", attested_at: "2026-02-30" } })).toEqual(["at_rest.attested_at"])
  })
})
