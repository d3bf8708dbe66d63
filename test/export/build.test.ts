import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import MarkdownIt from "markdown-it"
import { afterEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { localDateTime } from "../../src/contracts/time.js"
import { exportArchive } from "../../src/export/archive.js"
import { buildExport } from "../../src/export/build.js"
import { type ExportFiles } from "../../src/export/types.js"
import { normalizeNewlines } from "../../src/export/escape.js"
import { storeLayer, tempDir, testConfig } from "../support/env.js"
import { latestVersion } from "../../src/db/migrate.js"
import { SCOPE_MIGRATIONS } from "../../src/db/migrations/scope/index.js"

const ZONE = "Europe/Berlin"
const NOW_1 = Date.parse("2024-05-01T10:00:00Z")
const NOW_2 = Date.parse("2024-11-20T23:59:00Z")

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

/** Runs `f` on the sql client of a fresh "sales" scope file. */
const withScope = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>): Promise<A> => {
  const { dir, cleanup } = tempDir("gn-export-")
  cleanups.push(cleanup)
  return Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("sales")
      const { sql } = yield* store.use("sales")
      return yield* f(sql)
    }).pipe(Effect.scoped, Effect.provide(storeLayer(testConfig(dir)))) as Effect.Effect<A>
  )
}

const insert = (sql: SqlClient, table: string, row: Readonly<Record<string, string | number | null>>) => {
  const cols = Object.keys(row)
  return sql.unsafe(
    `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
    cols.map((c) => row[c] ?? null)
  ).raw
}

// ---------------------------------------------------------------------------------------------
// Foreign payloads

const STATEMENT =
  "Ship on Fridays [x](https://evil) <script>alert(1)</script> # Heading `code` &lt;b&gt; mail@evil.example"
const STATEMENT_MULTI = "Title\n===\n| a | b |\n|---|---|\nline\rwith CR\u0085and NEL\u2028and LS"
const TITLE = "Title\n=== <img src=x onerror=1> www.evil.example"
const MAIL_TEXT = [
  "Hello team,",
  "",
  "# Heading",
  "[x](https://evil) and <script>alert(1)</script>",
  "| a | b |",
  "|---|---|",
  "Title",
  "===",
  "https://evil.example www.evil.example mail@evil.example `code` &lt;b&gt;",
  "- not a list",
  "1. not a list either",
  "    not code",
  "",
  "We deliver every Monday before noon."
].join("\r\n")
const ATTACHMENT_TEXT = "<img src=x onerror=1>\n\n# Heading\u2028| a | b |\n|---|---|"
const ATTACHMENT_NAME = "<script>alert(1)</script>[x](https://evil).pdf"
const ENTITY_NAME = "ACME <img src=x onerror=1> [x](https://evil)"

const MAIL = "mail:<m1@example.com>"
const JAMIE = "jamie:meeting-1"
const MANUAL = "manual:person:2"

const T = (d: string) => `2024-03-${d}T09:00:00Z`

const version = (over: Readonly<Record<string, string | number | null>>) => ({
  kind: "rule",
  timestamp_s: null,
  source_link: null,
  said_at: T("01"),
  speaker: null,
  relations: "[]",
  keywords: "[]",
  valid_from: "2024-03-01",
  valid_until: null,
  supersedes: null,
  superseded_by: null,
  changed_by: "service:3",
  ...over
})

const seed = (sql: SqlClient) =>
  Effect.gen(function*() {
    // sources
    yield* insert(sql, "source", {
      id: MAIL, kind: "mail", title: TITLE, occurred_at: T("01"), sender: "Boss <boss@evil.example>", thread: MAIL,
      link: "https://mail.example/m1", excerpt: MAIL_TEXT, fulltext_sha256: "ab".repeat(32), fetched_at: T("02"),
      feeder: "service:3"
    })
    yield* insert(sql, "source_attachment", {
      source_id: MAIL, n: 1, filename: ATTACHMENT_NAME, media_type: "application/pdf", size: 1234,
      external: "paperless:12", text: ATTACHMENT_TEXT, text_origin: "ocr"
    })
    yield* insert(sql, "source_attachment", {
      source_id: MAIL, n: 2, filename: "photo.jpg", media_type: "image/jpeg", size: null, external: null, text: null,
      text_origin: "none"
    })
    yield* insert(sql, "source", {
      id: JAMIE, kind: "jamie", title: "Weekly # Heading", occurred_at: T("03"), sender: null, thread: null,
      link: null, excerpt: null, fulltext_sha256: "cd".repeat(32), fetched_at: T("03"), feeder: "service:3"
    })
    yield* insert(sql, "source_segment", {
      source_id: JAMIE, n: 1, start_s: 5, speaker: "Anna", text: "We always ship on Fridays, no exceptions."
    })
    yield* insert(sql, "source_segment", { source_id: JAMIE, n: 2, start_s: 125, speaker: null, text: "| a | b |\n|---|---|" })
    yield* insert(sql, "source_segment", {
      source_id: JAMIE, n: 3, start_s: 3725, speaker: "Bob <b>", text: "Discount max 10% for www.evil.example customers."
    })
    yield* insert(sql, "source", {
      id: MANUAL, kind: "manual", title: null, occurred_at: null, sender: null, thread: null, link: null,
      excerpt: null, fulltext_sha256: null, fetched_at: T("04"), feeder: "person:2"
    })

    // rules
    for (const seq of [1, 2, 3, 4]) {
      yield* insert(sql, "rule", { seq, id: `sales-000${seq}`, created_at: T("05"), created_by: "service:3" })
    }
    const r1 = {
      rule_id: "sales-0001", statement: STATEMENT, source_id: JAMIE, quote: "We always ship on Fridays, no exceptions.",
      timestamp_s: 5, speaker: "Anna <a@evil.example>",
      relations: JSON.stringify([{ kind: "customer", name: "ACME <img src=x onerror=1>", ref: null }]),
      keywords: JSON.stringify(["shipping", "# Heading", "www.evil.example"])
    }
    yield* insert(sql, "rule_version", version({ ...r1, version: 1, status: "proposed", reason: "proposed via api", changed_at: T("05") }))
    yield* insert(sql, "rule_version", version({
      ...r1, version: 2, status: "confirmed", reason: "confirmed", changed_by: "person:2", changed_at: T("06")
    }))
    yield* insert(sql, "decision", {
      rule_id: "sales-0001", version: 1, kind: "confirm", decided_by: "person:2", decided_by_identity: "anna@example.com",
      decided_at: T("06"), reason: null, new_version: 2
    })
    const r2 = {
      rule_id: "sales-0002", statement: "We deliver every Monday before noon, see <b>mail</b>.", source_id: MAIL,
      quote: "We deliver every Monday before noon.", source_link: "https://mail.example/m1", supersedes: "sales-0001"
    }
    yield* insert(sql, "rule_version", version({ ...r2, version: 1, status: "proposed", reason: "proposed via mcp", changed_at: T("07") }))
    yield* insert(sql, "rule_version", version({
      ...r2, version: 2, status: "confirmed", reason: "confirmed, supersedes sales-0001", changed_by: "person:2",
      changed_at: T("08")
    }))
    yield* insert(sql, "decision", {
      rule_id: "sales-0002", version: 1, kind: "confirm", decided_by: "person:2", decided_by_identity: "anna@example.com",
      decided_at: T("08"), reason: "replaces the Friday rule", new_version: 2
    })
    yield* insert(sql, "rule_version", version({
      ...r1, version: 3, status: "superseded", valid_until: "2024-03-08", superseded_by: "sales-0002",
      reason: "superseded by sales-0002", changed_by: "person:2", changed_at: T("08")
    }))
    yield* insert(sql, "decision", {
      rule_id: "sales-0002", version: 2, kind: "review", decided_by: "person:3", decided_by_identity: "ben@example.com",
      decided_at: T("09"), reason: "still valid [x](https://evil)", new_version: null
    })
    const r3 = {
      rule_id: "sales-0003", statement: STATEMENT_MULTI, source_id: MAIL, quote: "We deliver every Monday before noon."
    }
    yield* insert(sql, "rule_version", version({ ...r3, version: 1, status: "proposed", reason: "proposed via api", changed_at: T("10") }))
    yield* insert(sql, "rule_version", version({
      ...r3, version: 2, status: "rejected", reason: "duplicate | a | b |", changed_by: "person:2", changed_at: T("11")
    }))
    yield* insert(sql, "decision", {
      rule_id: "sales-0003", version: 1, kind: "reject", decided_by: "person:2", decided_by_identity: "anna@example.com",
      decided_at: T("11"), reason: "duplicate | a | b |", new_version: 2
    })
    yield* insert(sql, "rule_version", version({
      rule_id: "sales-0004", version: 1, kind: "note", statement: "A note from a person, no quote check.",
      source_id: MANUAL, quote: "x", status: "proposed", reason: "proposed via approval", changed_at: T("12")
    }))

    // entities: ACME > # Heading > Title\n===
    yield* insert(sql, "entity", { seq: 1, id: "sales-e0001", scope: "sales", created_at: T("13"), created_by: "agent" })
    yield* insert(sql, "entity", { seq: 2, id: "sales-e0002", scope: "sales", created_at: T("13"), created_by: "human" })
    yield* insert(sql, "entity", { seq: 3, id: "sales-e0003", scope: "sales", created_at: T("13"), created_by: "import" })
    const entityVersion = (over: Readonly<Record<string, string | number | null>>) => ({
      version: 1, aliases: "[]", parent_id: null, status: "unconfirmed", valid_from: "2024-03-13", valid_to: null,
      evidence: null, change: "create", channel: "mcp", changed_by: "person:2", changed_at: T("13"),
      reason: "created via mcp", ...over
    })
    const e1 = {
      id: "sales-e0001", type: "organisation", name: ENTITY_NAME,
      aliases: JSON.stringify(["[x](https://evil)", "www.evil.example"])
    }
    yield* insert(sql, "entity_version", entityVersion(e1))
    yield* insert(sql, "entity_version", entityVersion({
      ...e1, version: 2, status: "active", change: "confirm", channel: "approval", changed_at: T("14"), reason: "ok"
    }))
    yield* insert(sql, "entity_version", entityVersion({
      id: "sales-e0002", type: "department", name: "# Heading", parent_id: "sales-e0001", evidence: `source/${MAIL}`
    }))
    yield* insert(sql, "entity_version", entityVersion({
      id: "sales-e0003", type: "project", name: "Title\n===", parent_id: "sales-e0002", channel: "api"
    }))

    // links and reviews
    yield* insert(sql, "link", {
      seq: 1, id: "sales-l0001", from_ref: "rule/sales-0001", to_ref: "entity/sales-e0002", type: "concerns",
      origin: "proposed", confidence: 0.75, reason: "mail@evil.example says so <img src=x onerror=1>",
      evidence: "| a | b |\n|---|---|", valid_from: T("15"), valid_to: null, created_at: T("15"), created_by: "service:3"
    })
    yield* insert(sql, "link", {
      seq: 2, id: "sales-l0002", from_ref: `attachment/${MAIL}#1`, to_ref: "entity/sales-e0001", type: "belongs_to",
      origin: "human", confidence: null, reason: "filed by hand", evidence: null, valid_from: T("16"), valid_to: null,
      created_at: T("16"), created_by: "person:2"
    })
    yield* insert(sql, "review", {
      seq: 1, id: "sales-r0001", target: "link/sales-l0001", verdict: "confirm", decided_by: "person:2",
      decided_by_identity: "anna@example.com", decided_at: T("17"), reason: null, new_version: null
    })
    yield* insert(sql, "review", {
      seq: 2, id: "sales-r0002", target: "entity/sales-e0001@1", verdict: "confirm", decided_by: "person:2",
      decided_by_identity: "anna@example.com", decided_at: T("14"), reason: "looks right # Heading", new_version: 2
    })
  })

const seededExports = () =>
  withScope((sql) =>
    Effect.gen(function*() {
      yield* seed(sql)
      const first = yield* buildExport(sql, { zone: ZONE, now: NOW_1 })
      const second = yield* buildExport(sql, { zone: ZONE, now: NOW_2 })
      return { first, second }
    })
  )

const fileOf = (exp: ExportFiles, path: string): string => {
  const f = exp.files.find((x) => x.path === path)
  if (f === undefined) throw new Error(`no ${path} in ${exp.files.map((x) => x.path).join(", ")}`)
  return f.content
}

const sha256 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex")
const sourcePath = (id: string): string => `sources/${sha256(id).slice(0, 16)}.md`

// ---------------------------------------------------------------------------------------------
// Rendering checks

const md = new MarkdownIt({ html: true, linkify: true })

const decode = (s: string): string =>
  s.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
const textOf = (html: string): string => decode(html.replace(/<[^>]*>/g, ""))
const squash = (s: string): string => s.replace(/\s+/g, " ").trim()

/** Headings the exporter itself writes (ids, numbers and fixed words only). */
const OWN_HEADINGS = [
  /^Groundnote export of sales$/,
  /^(proposed|confirmed|superseded|rejected) \(\d+\)$/,
  /^Rule sales-\d{4}$/,
  /^Version \d+$/,
  /^Decisions$/,
  /^Decision \d+$/,
  /^Source [0-9a-f]{16}$/,
  /^(Text|Segments|Attachments|Tree|Links|Reviews)$/,
  /^Attachment \d+$/,
  /^(Entities|Links) of sales$/,
  /^sales-e\d{4}( version \d+)?$/,
  /^sales-[lr]\d{4}$/
]
/** Links the exporter writes: to its own files, the text an id or a path. */
const OWN_HREF = /^((\.\.\/)?rules\/sales-\d{4}|sales-\d{4}|\.\.\/sources\/[0-9a-f]{16})\.md$/
const OWN_LINK_TEXT = /^(sales-\d{4}|sources\/[0-9a-f]{16}\.md)$/
/** Emphasis the exporter writes for null and empty values. */
const OWN_EMPHASIS = /^(none|empty)$/

const PAYLOAD_FRAGMENTS = [
  "[x](https://evil)", "<script>alert(1)</script>", "<img src=x onerror=1>", "# Heading", "Title\n===",
  "| a | b |\n|---|---|", "https://evil.example", "www.evil.example", "mail@evil.example", "`code`", "&lt;b&gt;"
]

const elements = (html: string, tag: string): Array<string> =>
  [...html.matchAll(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1] ?? "")

describe("buildExport", () => {
  it("gives byte-identical files for the same state; README differs only in its time line", async () => {
    const { first, second } = await seededExports()
    expect(first.scope).toBe("sales")
    expect(first.files.map((f) => f.path)).toEqual(second.files.map((f) => f.path))
    const paths = first.files.map((f) => f.path)
    expect(paths).toEqual([...paths].sort())
    expect(paths).toEqual([
      "README.md", "graph/entities.md", "graph/links.md", "manifest.json",
      "rules/sales-0001.md", "rules/sales-0002.md", "rules/sales-0003.md", "rules/sales-0004.md",
      ...[MAIL, JAMIE, MANUAL].map(sourcePath).sort()
    ])
    for (const f of first.files) {
      if (f.path !== "README.md") expect(fileOf(second, f.path), f.path).toBe(f.content)
    }
    const a = fileOf(first, "README.md").split("\n")
    const b = fileOf(second, "README.md").split("\n")
    expect(a.length).toBe(b.length)
    const differing = a.map((line, i) => [line, b[i]] as const).filter(([x, y]) => x !== y)
    expect(differing).toEqual([[
      `- exported: ${localDateTime(ZONE, NOW_1)} (${ZONE})`,
      `- exported: ${localDateTime(ZONE, NOW_2)} (${ZONE})`
    ]])
    expect(differing[0]?.[1]).toContain("2024-11-21 00:59")
  })

  it("writes a manifest with sorted keys, row counts and the sha256 of every other file", async () => {
    const { first } = await seededExports()
    const raw = fileOf(first, "manifest.json")
    expect(raw.endsWith("}\n")).toBe(true)
    const manifest = JSON.parse(raw) as {
      scope: string; schema_version: number; counts: Record<string, number>; files: Record<string, string>
    }
    expect(raw).toBe(`${JSON.stringify(manifest, null, 2)}\n`)
    expect(Object.keys(manifest)).toEqual(["counts", "files", "schema_version", "scope"])
    expect(manifest.scope).toBe("sales")
    expect(manifest.schema_version).toBe(latestVersion(SCOPE_MIGRATIONS))
    expect(manifest.counts).toEqual({
      classification: 0, decision: 4, entity: 3, entity_override: 0, entity_version: 4, link: 2, review: 2, rule: 4, rule_version: 8,
      secret_finding: 0, source: 3, source_attachment: 2, source_auth: 0, source_segment: 3
    })
    expect(Object.keys(manifest.counts)).toEqual(Object.keys(manifest.counts).sort())
    const hashed = first.files.filter((f) => f.path !== "README.md" && f.path !== "manifest.json")
    expect(Object.keys(manifest.files)).toEqual(hashed.map((f) => f.path))
    for (const f of hashed) expect(manifest.files[f.path], f.path).toBe(sha256(f.content))
  })

  it("writes every rule with every version and decision, the deciding person's e-mail included", async () => {
    const { first } = await seededExports()
    const r1 = fileOf(first, "rules/sales-0001.md")
    for (const v of [1, 2, 3]) expect(r1).toContain(`## Version ${v}\n`)
    expect(r1).toContain("- current status: superseded")
    expect(r1).toContain(`- source: source/${JAMIE}`)
    expect(r1).toContain(`- source file: [${sourcePath(JAMIE)}](../${sourcePath(JAMIE)})`)
    expect(r1).toContain("- timestamp_s: 5 (0:05)")
    expect(r1).toContain("- valid_until: 2024-03-08")
    expect(r1).toContain("- superseded_by: [sales-0002](sales-0002.md)")
    expect(r1).toContain("- decided_by_identity: anna\\@example.com")
    expect(r1).toContain("- relations:\n  - customer: ACME \\<img src=x onerror=1\\>")
    expect(r1).toContain("- keywords:\n  - shipping\n  - \\# Heading\n  - www\\.evil.example")

    const r2 = fileOf(first, "rules/sales-0002.md")
    expect(r2).toContain("- supersedes: [sales-0001](sales-0001.md)")
    expect(r2).toContain("- kind: review\n- version: 2\n- new_version: *none*\n- decided_by: person:3")
    expect(r2).toContain("- source_link: https\\:\\//mail.example/m1")

    const r3 = fileOf(first, "rules/sales-0003.md")
    expect(r3).toContain("- current status: rejected")
    expect(r3).toContain("- kind: reject")
    expect(r3).toContain("- reason: duplicate \\| a \\| b \\|")

    const readme = fileOf(first, "README.md")
    expect(readme).toContain("- rules: 4\n- rules proposed: 1\n- rules confirmed: 1\n- rules superseded: 1\n- rules rejected: 1")
    expect(readme).toContain("- sources: 3\n- entities: 3\n- links: 2")
    expect(readme).toContain("## rejected (1)\n\n- [sales-0003](rules/sales-0003.md) Title\n")
    expect(readme).toContain("## proposed (1)\n\n- [sales-0004](rules/sales-0004.md) A note from a person, no quote check.\n")
  })

  it("writes sources with metadata, the full mail text, every segment and the attachments", async () => {
    const { first } = await seededExports()
    const mail = md.render(fileOf(first, sourcePath(MAIL)))
    expect(textOf(mail)).toContain(normalizeNewlines(MAIL_TEXT).split("\n").slice(2, 12).join("\n"))
    expect(textOf(mail)).toContain("We deliver every Monday before noon.")
    expect(textOf(mail)).toContain(`filename: ${ATTACHMENT_NAME}`)
    expect(squash(textOf(mail))).toContain(squash(normalizeNewlines(ATTACHMENT_TEXT)))
    expect(textOf(mail)).toContain(`ref: attachment/${MAIL}#2`)
    expect(fileOf(first, sourcePath(MAIL))).toContain(
      "- cited by:\n  - [sales-0002](../rules/sales-0002.md)\n  - [sales-0003](../rules/sales-0003.md)\n"
    )

    const jamie = textOf(md.render(fileOf(first, sourcePath(JAMIE))))
    expect(jamie).toContain("[0:05] Anna: We always ship on Fridays, no exceptions.")
    expect(jamie).toContain("[2:05] | a | b |\n|---|---|")
    expect(jamie).toContain("[1:02:05] Bob <b>: Discount max 10% for www.evil.example customers.")

    const manual = fileOf(first, sourcePath(MANUAL))
    expect(manual).toContain("- kind: manual\n- title: *none*")
    expect(manual).toContain("No attachments.")
  })

  it("writes the entity tree with full paths, every entity version, every link and review", async () => {
    const { first } = await seededExports()
    const entities = textOf(md.render(fileOf(first, "graph/entities.md")))
    expect(entities).toContain(`${ENTITY_NAME} (sales-e0001, organisation, active)`)
    expect(entities).toContain(`${ENTITY_NAME} › # Heading (sales-e0002, department, unconfirmed)`)
    expect(entities).toContain(`${ENTITY_NAME} › # Heading › Title\n=== (sales-e0003, project, unconfirmed)`)
    expect(entities.indexOf("(sales-e0001, organisation")).toBeLessThan(entities.indexOf("(sales-e0002, department"))
    expect(fileOf(first, "graph/entities.md")).toContain("### sales-e0001 version 2\n\n- type: organisation")
    expect(fileOf(first, "graph/entities.md")).toContain("- change: confirm\n- channel: approval")

    const links = fileOf(first, "graph/links.md")
    expect(links).toContain("### sales-l0001\n\n- from_ref: rule/sales-0001\n- to_ref: entity/sales-e0002\n- type: concerns")
    expect(links).toContain("- confidence: 0.75\n- status (from reviews): confirmed")
    expect(links).toContain("- from_ref: attachment/mail:\\<m1\\@example.com\\>\\#1")
    expect(links).toContain("### sales-r0002\n\n- target: entity/sales-e0001@1".replace("@1", "\\@1"))
    expect(links).toContain("- decided_by_identity: anna\\@example.com")
  })

  it("renders foreign payloads as text: no foreign link, tag, heading, cell or code", async () => {
    const { first } = await seededExports()
    let allText = ""
    for (const f of first.files.filter((x) => x.path.endsWith(".md"))) {
      const html = md.render(f.content)
      allText += `${textOf(html)}\n`
      for (const tag of ["script", "img", "table", "td", "th", "code", "pre", "blockquote", "hr", "ol", "b", "div"]) {
        expect(html, `<${tag}> in ${f.path}`).not.toMatch(new RegExp(`<${tag}[\\s>]`))
      }
      for (const level of [1, 2, 3, 4, 5, 6]) {
        for (const heading of elements(html, `h${level}`)) {
          expect(OWN_HEADINGS.some((re) => re.test(textOf(heading))), `heading ${heading} in ${f.path}`).toBe(true)
        }
      }
      for (const m of html.matchAll(/<a\s([^>]*)>([\s\S]*?)<\/a>/g)) {
        expect(m[1], f.path).toMatch(/^href="[^"]*"$/)
        expect(decode((m[1] ?? "").slice(6, -1)), f.path).toMatch(OWN_HREF)
        expect(textOf(m[2] ?? ""), f.path).toMatch(OWN_LINK_TEXT)
      }
      expect((html.match(/<a[\s>]/g) ?? []).length).toBe([...html.matchAll(/<a\s[^>]*>[\s\S]*?<\/a>/g)].length)
      for (const em of elements(html, "em")) expect(em, f.path).toMatch(OWN_EMPHASIS)
      for (const inside of [...elements(html, "a"), ...[1, 2, 3, 4, 5, 6].flatMap((l) => elements(html, `h${l}`))]) {
        for (const p of PAYLOAD_FRAGMENTS) expect(textOf(inside)).not.toContain(p.split("\n")[0])
      }
    }
    // the escaped text round-trips: markdown-it renders the original characters back
    const text = squash(allText)
    for (const p of [...PAYLOAD_FRAGMENTS, STATEMENT, STATEMENT_MULTI, TITLE, ATTACHMENT_NAME, ENTITY_NAME]) {
      expect(text, JSON.stringify(p)).toContain(squash(normalizeNewlines(p)))
    }
    expect(allText).toContain(normalizeNewlines(STATEMENT_MULTI))
  })

  it("packs the export into a tar.gz that GNU tar extracts byte for byte", async () => {
    const { first } = await seededExports()
    const { dir, cleanup } = tempDir("gn-export-tar-")
    cleanups.push(cleanup)
    const file = join(dir, "sales.tar.gz")
    writeFileSync(file, exportArchive(first, { mtime: Math.floor(NOW_1 / 1000) }))
    const out = join(dir, "out")
    mkdirSync(out)
    execFileSync("tar", ["-xzf", file, "-C", out])
    expect(readdirSync(out)).toEqual(["sales"])
    for (const f of first.files) {
      const extracted = join(out, "sales", f.path)
      expect(readFileSync(extracted).equals(Buffer.from(f.content, "utf8")), f.path).toBe(true)
      expect(statSync(extracted).mtimeMs).toBe(Math.floor(NOW_1 / 1000) * 1000)
    }
  })

  it("exports an empty scope as README, manifest and the two (empty) graph files", async () => {
    const exp = await withScope((sql) => buildExport(sql, { zone: ZONE, now: NOW_1 }))
    expect(exp.files.map((f) => f.path)).toEqual(["README.md", "graph/entities.md", "graph/links.md", "manifest.json"])
    const manifest = JSON.parse(fileOf(exp, "manifest.json")) as { counts: Record<string, number>; files: Record<string, string> }
    expect(Object.keys(manifest.files)).toEqual(["graph/entities.md", "graph/links.md"])
    expect(Object.values(manifest.counts).every((n) => n === 0)).toBe(true)
    // the append-only tables, with classification, source_auth and secret_finding of scope migration 0004 and entity_override of 0008
    expect(Object.keys(manifest.counts)).toHaveLength(14)
    expect(fileOf(exp, "graph/entities.md")).toContain("No entities.")
    expect(fileOf(exp, "graph/links.md")).toContain("No links.")
    expect(fileOf(exp, "graph/links.md")).toContain("No reviews.")
    expect(fileOf(exp, "README.md")).toContain("- rules: 0")
    expect(fileOf(exp, "README.md")).toContain("## confirmed (0)\n\nNo rules.")
  })

  it("runs inside a caller's transaction as well (nested read)", async () => {
    const exp = await withScope((sql) => sql.withTransaction(buildExport(sql, { zone: ZONE, now: NOW_1 })))
    expect(exp.files).toHaveLength(4)
  })
})
