/** config.approval (gaps.md §10, invariant 12): modes, limit, own domains, guardrail keys refused. */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigFile } from "../../src/config/file.js"
import { type StartRefusal } from "../../src/config/refusal.js"
import { MANDATORY_EXCEPTIONS, type ConfigFile } from "../../src/config/schema.js"

const minimal = {
  instance: "acme",
  zone: "Europe/Berlin",
  public_url: "http://127.0.0.1:8787",
  scopes: [{ name: "sales", providers_allowed: [] }, { name: "payments", providers_allowed: [] }],
  search: {},
  backup: { kind: "copy", directory: "/var/backups/groundnote", deadman_url: "https://hc-ping.com/x" }
}
const withApproval = (approval: unknown) => ({ ...minimal, approval })

const parse = (value: unknown): ConfigFile => Effect.runSync(parseConfigFile(JSON.stringify(value)))
const refusal = (value: unknown): StartRefusal => {
  const result = Effect.runSync(Effect.either(parseConfigFile(JSON.stringify(value))))
  if (Either.isRight(result)) throw new Error("expected config-invalid")
  expect(result.left.code).toBe("config-invalid")
  return result.left
}
const issues = (value: unknown) => {
  const e = refusal(value)
  for (const i of e.issues ?? []) expect(e.message).toContain(`${i.path}: ${i.message}`)
  return e.issues ?? []
}
const messageAt = (value: unknown, path: string): string => {
  const found = issues(value).find((i) => i.path === path)
  if (found === undefined) throw new Error(`no issue at ${path}`)
  return found.message
}

describe("config.approval", () => {
  it("is absent by default and takes its defaults when present", () => {
    expect(parse(minimal).approval).toBeUndefined()
    expect(parse(withApproval({})).approval).toEqual({ default_mode: "classified", daily_limit: 20, own_domains: [] })
  })

  it("takes default_mode, per-scope mode and class modes, daily_limit and own_domains", () => {
    const c = parse(withApproval({
      default_mode: "manual",
      daily_limit: 1000,
      own_domains: ["acme.example", "mail.acme-group.example"],
      scopes: { sales: { mode: "autonomous", classes: { general: "autonomous", personal: "manual", external: "classified" } }, payments: {} }
    }))
    expect(c.approval).toEqual({
      default_mode: "manual",
      daily_limit: 1000,
      own_domains: ["acme.example", "mail.acme-group.example"],
      scopes: { sales: { mode: "autonomous", classes: { general: "autonomous", personal: "manual", external: "classified" } }, payments: {} }
    })
  })

  it("refuses a daily_limit outside 1..1000 and a mode that does not exist", () => {
    for (const daily_limit of [0, 1001, 2.5, "20"]) expect(issues(withApproval({ daily_limit })).map((i) => i.path)).toEqual(["approval.daily_limit"])
    expect(issues(withApproval({ default_mode: "auto" })).map((i) => i.path)).toEqual(["approval.default_mode"])
    expect(issues(withApproval({ scopes: { sales: { mode: "always" } } })).map((i) => i.path)).toEqual(["approval.scopes.sales.mode"])
  })

  it("refuses own_domains that are not lowercase mail domains, or repeat one", () => {
    for (const bad of ["@acme.example", "Acme.example", "acme", "https://acme.example", "maria@acme.example", "acme..example", ""]) {
      expect(messageAt(withApproval({ own_domains: [bad] }), "approval.own_domains[0]")).toContain("mail domain such as acme.example")
    }
    expect(messageAt(withApproval({ own_domains: ["acme.example", "acme.example"] }), "approval.own_domains[1]")).toContain("duplicate domain")
  })

  it("refuses every mandatory exception named as a class, with the key path and the fix", () => {
    for (const exception of MANDATORY_EXCEPTIONS) {
      const message = messageAt(withApproval({ scopes: { sales: { classes: { [exception]: "autonomous" } } } }), `approval.scopes.sales.classes.${exception}`)
      expect(message).toContain(`"${exception}"`)
      expect(message).toContain("mandatory exception")
      expect(message).toContain("Remove this key")
    }
  })

  it("refuses payment as a class in any mode, saying it is a class and a mandatory exception", () => {
    for (const mode of ["autonomous", "classified", "manual"]) {
      const message = messageAt(withApproval({ scopes: { sales: { classes: { payment: mode } } } }), "approval.scopes.sales.classes.payment")
      expect(message).toBe("\"payment\" is a class and a mandatory exception: a payment proposal always waits for a person, in every mode, so it takes no mode and no setting. Remove this key")
    }
  })

  it("refuses keys that try to switch a mandatory exception off, at the top and in a scope, in any spelling", () => {
    const cases: Array<[unknown, string, string]> = [
      [{ doubt: false }, "approval.doubt", "\"doubt\" is a mandatory exception"],
      [{ large_subtree: { enabled: false } }, "approval.large_subtree", "\"large-subtree\" is a mandatory exception"],
      [{ "external-sensitive": "off" }, "approval.external-sensitive", "\"external-sensitive\" is a mandatory exception"],
      [{ uncheckedQuote: "autonomous" }, "approval.uncheckedQuote", "\"unchecked-quote\" is a mandatory exception"],
      [{ allow_injection: true }, "approval.allow_injection", "\"injection\" is a mandatory exception"],
      [{ skip_secret_scan: true }, "approval.skip_secret_scan", "\"secret\" is a mandatory exception"],
      [{ exceptions: [] }, "approval.exceptions", "are code, not configuration"],
      [{ mandatory_exceptions: { payment: false } }, "approval.mandatory_exceptions", "are code, not configuration"],
      [{ guardrails: false }, "approval.guardrails", "are code, not configuration"],
      [{ scopes: { sales: { contradiction: "autonomous" } } }, "approval.scopes.sales.contradiction", "\"contradiction\" is a mandatory exception"],
      [{ scopes: { sales: { exceptions: { doubt: false } } } }, "approval.scopes.sales.exceptions", "are code, not configuration"],
      [{ scopes: { sales: { payment: "manual" } } }, "approval.scopes.sales.payment", "is a class and a mandatory exception"]
    ]
    for (const [approval, path, text] of cases) {
      const message = messageAt(withApproval(approval), path)
      expect(message).toContain(text)
      expect(message).toContain("Remove this key")
    }
  })

  it("lists every guardrail key at once and still lets a scope be called payments", () => {
    const found = issues(withApproval({ doubt: false, scopes: { sales: { classes: { secret: "manual", injection: "manual" } } } }))
    expect(found.map((i) => i.path).sort()).toEqual(["approval.doubt", "approval.scopes.sales.classes.injection", "approval.scopes.sales.classes.secret"])
    expect(parse(withApproval({ scopes: { payments: { mode: "manual" } } })).approval?.scopes).toEqual({ payments: { mode: "manual" } })
  })

  it("refuses an unknown approval class and an unknown key with the generic fixes", () => {
    expect(messageAt(withApproval({ scopes: { sales: { classes: { vip: "manual" } } } }), "approval.scopes.sales.classes.vip")).toContain("unknown class (use one of general, personal, external)")
    expect(messageAt(withApproval({ modes: {} }), "approval.modes")).toBe("unknown key (remove it)")
  })

  it("the shipped example config keeps parsing", () => {
    const text = readFileSync(join(import.meta.dirname, "../../config/groundnote.example.json"), "utf8")
    expect(Either.isRight(Effect.runSync(Effect.either(parseConfigFile(text))))).toBe(true)
  })
})
