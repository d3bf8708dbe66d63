/**
 * Append-only and its one exemption (gaps.md §12, R2; scope migration 0009), as a property over
 * every append-only table of a scope file — each table with a trigger that raises 'append-only',
 * read from the file's schema, so a table added later is driven too. A scope file gets rows in
 * every one of them from the service's own writers; then random UPDATEs (a random subset of the
 * columns, random new values of each column's kind) and DELETEs on random rows, each inside a
 * transaction that is rolled back:
 *
 *  - without the redaction permit: every UPDATE of a guarded column and every DELETE is refused
 *    with 'append-only' and the row is as it was;
 *  - with the permit (redaction_permit.redaction_seq = the next redaction seq, inserted first in
 *    the transaction, deleted last): an UPDATE that changes only the redactable text columns
 *    (migration 0009's list) goes through as a redaction writes it (marker in place) and changes
 *    nothing else; one that changes any other column is refused and changes nothing; DELETE stays
 *    refused.
 *
 * And the permit itself: once per transaction, only with the next seq; a redaction row or place
 * only under its permit.
 */
import { createRequire } from "node:module"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PRAGMAS } from "../../src/db/connection.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { writeVectors } from "../../src/search/semantic/vectors.js"
import { review } from "../../src/structure/review.js"
import { approvalOf, INTERNAL_MAIL_ID, internalMail, PLAIN, quoting } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, mailProposal, mailSource } from "../support/fixtures.js"
import { run } from "../support/run.js"
import { SECRETS } from "../security/secrets-corpus.js"

interface Statement {
  run(...params: ReadonlyArray<unknown>): unknown
  get(...params: ReadonlyArray<unknown>): unknown
  all(...params: ReadonlyArray<unknown>): Array<unknown>
}
interface Db {
  exec(sql: string): void
  prepare(sql: string): Statement
  close(): void
}
const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => Db

/**
 * The redactable text columns (gaps.md §12 "every occurrence is replaced … only the text columns
 * listed above change"; migration 0009's list, and link's reason and evidence). Written here on
 * their own: the triggers are checked against this statement of the design, not against themselves.
 */
const REDACTABLE: Readonly<Record<string, ReadonlyArray<string>>> = {
  source: ["title", "sender", "excerpt"],
  source_segment: ["speaker", "text"],
  source_attachment: ["filename", "text"],
  source_auth: ["mail_from", "authentication_results"],
  rule_version: ["statement", "quote", "speaker", "relations", "keywords", "reason"],
  decision: ["reason"],
  review: ["reason"],
  entity_version: ["name", "aliases", "evidence", "reason"],
  classification: ["reasons"],
  entity_override: ["name", "aliases", "path"],
  link: ["reason", "evidence"]
}

/**
 * Append-only tables whose rows may be deleted by design: vec_rule holds derived vectors (the
 * vector of a redacted version is deleted and embedded again); redaction_permit's one row is
 * deleted last by the redaction that inserted it.
 */
const DELETABLE = ["redaction_permit", "vec_rule"]

const T = "2026-01-14T09:00:00Z"
const MARKER = "[redacted]"

let dir: string
let cleanup: () => void
let db: Db

// ---------------------------------------------------------------------------------------------
// Seeding: rows in every append-only table, from the service's writers

const feeder = { grantId: "service:7", channel: "api" as const, requestId: null }
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@acme.example" }
const api = { grantId: "service:7", channel: "api" as const }

const seed = Effect.gen(function*() {
  const store = yield* ScopeStore
  yield* store.create("sales")
  // sources: a mail with its authentication results, a mail with attachments, a transcript
  yield* storeSource(internalMail(), feeder.grantId)
  yield* storeSource(mailSource(), feeder.grantId)
  yield* storeSource(jamieSource(), feeder.grantId)
  // a secret refused: its finding is kept (fingerprint, never the value)
  yield* Effect.either(storeSource({ ...mailSource({}, "mail:<secret@example.com>"), text: `see below\n${SECRETS[0]?.text ?? ""}` }, feeder.grantId))
  // intake in mode A: classification, an adopting decision (origin auto), versions 1 and 2
  yield* intake(quoting(PLAIN[0] ?? ""), feeder)
  yield* intake(quoting(PLAIN[1] ?? ""), feeder)
  // proposals decided by a person: confirm, reject with a reason
  yield* propose(mailProposal(), agent)
  yield* propose(mailProposal({ statement: "Never order black hook rails without the delivery time" }), agent)
  const rules = yield* Effect.flatMap(store.use("sales"), ({ sql }) =>
    sql<{ rule_id: string }>`SELECT rule_id FROM current_version WHERE status = 'proposed' ORDER BY rule_id`)
  yield* decide(rules[0]?.rule_id ?? "", { decision: "confirm", version: 1 }, person)
  yield* decide(rules[1]?.rule_id ?? "", { decision: "reject", version: 1, reason: "duplicate of the other one" }, person)
  // entities, one forced past a look-alike (entity_override), a link proposed and reviewed
  const dept = yield* createEntity({ scope: "sales", type: "department", name: "Vertrieb Nord", parent_id: null, aliases: ["VN"], evidence: "the mail says so" }, api)
  yield* createEntity({ scope: "sales", type: "department", name: "Vertrieb Nordd", parent_id: null, force: true, reason: "a different team" }, api)
  const { link } = yield* proposeLink({
    scope: "sales", from_ref: `source/${INTERNAL_MAIL_ID}`, to_ref: `entity/${dept.id}`, type: "concerns", confidence: 0.6, reason: "names the department"
  }, { grantId: "person:1" })
  yield* review({ target: `link/${link.id}`, verdict: "reject", reason: "not about the department" }, person)
  // a vector of stage b
  yield* Effect.flatMap(store.use("sales"), ({ sql }) =>
    writeVectors(sql, "test-model", [{ seq: 1, version: 1, vector: Float32Array.of(0.6, 0.8) }]))
  // a redaction and its place, under its permit (the redaction's own transaction)
  yield* store.write("sales", ({ sql }) => redactionRows(sql))
})

const redactionRows = (sql: SqlClient) =>
  Effect.gen(function*() {
    yield* sql`INSERT INTO redaction_permit (redaction_seq) VALUES (1)`.raw
    yield* sql`INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at)
      VALUES (1, 'sales-x0001', ${"a".repeat(64)}, 1, 'person:2', 'anna@acme.example', 'erasure request 17', ${T})`.raw
    yield* sql`INSERT INTO redaction_place (redaction_seq, tbl, key, col, offsets)
      VALUES (1, 'source', '["mail:<order-rule@example.com>"]', 'title', '[[0,3]]')`.raw
    yield* sql`DELETE FROM redaction_permit`.raw
  })

// ---------------------------------------------------------------------------------------------
// The schema, as the file has it

interface Table {
  readonly name: string
  readonly columns: ReadonlyArray<string>
  /** declared type of each column */
  readonly types: ReadonlyArray<string>
  /** the INTEGER PRIMARY KEY column, if any */
  readonly alias: string | null
  /** the key a row is found by: rowid, or the primary key of a WITHOUT ROWID table */
  readonly key: ReadonlyArray<string>
  /** the columns an UPDATE may not change (all, or those of BEFORE UPDATE OF …) */
  readonly guarded: ReadonlySet<string>
  readonly deleteGuarded: boolean
}

const APPEND_ONLY = /RAISE\s*\(\s*ABORT\s*,\s*'append-only'\s*\)/i

const tablesOf = (d: Db): ReadonlyArray<Table> => {
  const triggers = d.prepare("SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ tbl_name: string; sql: string }>
  const names = [...new Set(triggers.filter((t) => APPEND_ONLY.test(t.sql)).map((t) => t.tbl_name))].sort()
  return names.map((name) => {
    const info = d.prepare(`SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`).all(name) as Array<{ name: string; type: string; pk: number }>
    const columns = info.map((c) => c.name)
    const pks = info.filter((c) => c.pk > 0)
    const withoutRowid = (d.prepare("SELECT wr FROM pragma_table_list WHERE name = ?").get(name) as { wr: number }).wr === 1
    const mine = triggers.filter((t) => t.tbl_name === name && APPEND_ONLY.test(t.sql))
    const guarded = new Set<string>()
    for (const t of mine) {
      const of = /BEFORE\s+UPDATE\s+OF\s+(.+?)\s+ON\s/i.exec(t.sql)
      if (of !== null) for (const c of (of[1] ?? "").split(",")) guarded.add(c.trim())
      else if (/BEFORE\s+UPDATE\s+ON\s/i.test(t.sql)) for (const c of columns) guarded.add(c)
    }
    return {
      name, columns, guarded,
      types: info.map((c) => c.type),
      alias: !withoutRowid && pks.length === 1 && /^INTEGER$/i.test(pks[0]?.type ?? "") ? pks[0]?.name ?? null : null,
      key: withoutRowid ? info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name) : ["rowid"],
      deleteGuarded: mine.some((t) => /BEFORE\s+DELETE\s+ON\s/i.test(t.sql))
    }
  })
}

const q = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

type Row = Record<string, unknown>

const keyOf = (t: Table, row: Row): Array<unknown> => t.key.map((k) => row[k])
const where = (t: Table): string => t.key.map((k) => `${k === "rowid" ? "rowid" : q(k)} IS ?`).join(" AND ")
const rowsOf = (t: Table): Array<Row> =>
  d().prepare(`SELECT ${t.key.includes("rowid") ? "rowid AS \"rowid\", " : ""}* FROM ${q(t.name)} ORDER BY ${t.key.map((k) => (k === "rowid" ? "rowid" : q(k))).join(", ")}`).all() as Array<Row>
const rowAt = (t: Table, key: ReadonlyArray<unknown>): Row | undefined =>
  d().prepare(`SELECT ${t.key.includes("rowid") ? "rowid AS \"rowid\", " : ""}* FROM ${q(t.name)} WHERE ${where(t)}`).get(...key) as Row | undefined
const d = (): Db => db

/** The message a statement was refused with, or null when it ran. */
const attempt = (sql: string, params: ReadonlyArray<unknown>): string | null => {
  try {
    d().prepare(sql).run(...params)
    return null
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

const nextSeq = (): number => (d().prepare("SELECT coalesce(max(seq), 0) + 1 AS n FROM redaction").get() as { n: number }).n

/** SQLite's IS, as far as the values of a row read back go. */
const same = (a: unknown, b: unknown): boolean =>
  a instanceof Uint8Array || b instanceof Uint8Array
    ? a instanceof Uint8Array && b instanceof Uint8Array && Buffer.from(a).equals(Buffer.from(b))
    : a === null || b === null
    ? a === b
    : String(a) === String(b)

// ---------------------------------------------------------------------------------------------
// Random values

/**
 * A new value of the column's declared type that differs from `old` (NULL too, except for a rowid
 * alias, which SQLite itself refuses to set to anything but an integer).
 */
const changed = (old: unknown, type: string, rowidAlias: boolean): fc.Arbitrary<unknown> => {
  const int = fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => (typeof old === "number" ? old + (n === 0 ? 1 : n) : n))
  const text = fc.string({ minLength: 1, maxLength: 40 }).map((s) => (typeof old === "string" ? `${old}${s}` : `${s}~`))
  const kinds = /INT/i.test(type)
    ? [int]
    : /REAL|FLOA|DOUB/i.test(type)
    ? [int, fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })]
    : /BLOB/i.test(type)
    ? [fc.uint8Array({ minLength: 1, maxLength: 16 })]
    : /CHAR|CLOB|TEXT/i.test(type)
    ? [text]
    : [int, text, fc.uint8Array({ minLength: 1, maxLength: 16 })]
  return fc.oneof(...kinds, ...(rowidAlias ? [] : [fc.constant(null)])).filter((v) => !same(old, v))
}

/** Code points [from, from + 10) of `s` replaced by the marker (all of `s` when it is shorter): the length stays. */
const markAt = (s: string, at: number): string => {
  const cp = [...s]
  if (cp.length <= MARKER.length) return MARKER
  const from = at % (cp.length - MARKER.length + 1)
  return [...cp.slice(0, from), MARKER, ...cp.slice(from + MARKER.length)].join("")
}

/** `old` as a redaction rewrites it: the marker in place, in the text or in every string of its JSON. */
const redacted = (old: string, at: number): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(old)
  } catch {
    return markAt(old, at)
  }
  if (typeof parsed !== "object" || parsed === null) return markAt(old, at)
  const walk = (v: unknown): unknown =>
    typeof v === "string" ? markAt(v, at) : Array.isArray(v) ? v.map(walk) : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
      : v
  return JSON.stringify(walk(parsed))
}

interface Case {
  /**
   * random: any subset of the columns, each a redaction of its text or a random value;
   * redaction: only redactable texts, each as a redaction rewrites it; mixed: a redaction and one
   * other column changed
   */
  readonly shape: "random" | "redaction" | "mixed"
  readonly table: number
  readonly row: number
  readonly permit: boolean
  readonly op: "update" | "delete" | "replace"
  /** which columns the UPDATE sets: a random subset by bit */
  readonly pick: ReadonlyArray<boolean>
  /** of the picked columns, which get a redaction of their text instead of a random value */
  readonly asRedaction: ReadonlyArray<boolean>
  readonly at: number
  readonly seed: number
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  shape: fc.constantFrom("random" as const, "redaction" as const, "mixed" as const),
  table: fc.nat(),
  row: fc.nat(),
  permit: fc.boolean(),
  op: fc.oneof({ arbitrary: fc.constant("update" as const), weight: 6 }, fc.constant("delete" as const), fc.constant("replace" as const)),
  pick: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
  asRedaction: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
  at: fc.nat({ max: 400 }),
  seed: fc.integer()
})

// ---------------------------------------------------------------------------------------------

let tables: ReadonlyArray<Table> = []

beforeAll(async () => {
  ;({ dir, cleanup } = tempDir("gn-append-only-"))
  await run(testConfig(dir, approvalOf("autonomous")), seed)
  db = new Database(scopeFile(dir, "sales"))
  for (const p of PRAGMAS) db.exec(p)
  tables = tablesOf(db)
}, 60_000)
afterAll(() => {
  db.close()
  cleanup()
})

/** Runs `f` inside a transaction (with the permit when asked) and rolls it back. */
const inTransaction = <A>(permit: boolean, f: () => A): A => {
  d().exec("BEGIN IMMEDIATE")
  try {
    if (permit) d().prepare("INSERT INTO redaction_permit (redaction_seq) VALUES (?)").run(nextSeq())
    const out = f()
    if (permit) d().exec("DELETE FROM redaction_permit")
    return out
  } finally {
    d().exec("ROLLBACK")
  }
}

describe("append-only tables (from the triggers)", () => {
  it("are the tables of the design, each with rows from the service's writers", () => {
    expect(tables.map((t) => t.name)).toEqual([
      "classification", "decision", "entity", "entity_override", "entity_version", "link", "meta", "proposal_neighbour", "redaction",
      "redaction_permit", "redaction_place", "redaction_salt", "review", "rule", "rule_version", "secret_finding",
      "source", "source_attachment", "source_auth", "source_segment", "vec_rule"
    ])
    const empty = tables.filter((t) => t.name !== "redaction_permit" && rowsOf(t).length === 0).map((t) => t.name)
    expect(empty).toEqual([])
    expect(tables.filter((t) => !t.deleteGuarded).map((t) => t.name)).toEqual(DELETABLE)
    // every table the design lets a redaction change is append-only here, with those columns
    for (const [name, cols] of Object.entries(REDACTABLE)) {
      const t = tables.find((x) => x.name === name)
      expect(t?.columns, name).toEqual(expect.arrayContaining([...cols]))
    }
  })

  it("random UPDATEs and DELETEs: refused without the permit; with it, only a redaction of the text columns goes through", () => {
    const seen = { refused: 0, redacted: 0, permitRefused: 0 }
    fc.assert(
      fc.property(caseArb, (c) => {
        const t = tables[c.table % tables.length] as Table
        const rows = rowsOf(t)
        if (rows.length === 0) return true
        const before = rows[c.row % rows.length] as Row
        const key = keyOf(t, before)
        const redactable = new Set(c.permit ? REDACTABLE[t.name] ?? [] : [])
        // a table with a rowid of its own (no INTEGER PRIMARY KEY) can have that rowid changed too
        const columns = t.key[0] === "rowid" && t.alias === null ? [...t.columns, "rowid"] : t.columns
        const types = [...t.types, "INTEGER"]
        const rnd = fc.sample(fc.tuple(...columns.map((col, i) => changed(before[col], types[i] ?? "", col === t.alias || col === "rowid"))), { numRuns: 1, seed: c.seed })[0] ?? []
        // the columns set, each with its new value: a redaction of a redactable text, else a random value of any kind
        const texts = t.columns.filter((col) => REDACTABLE[t.name]?.includes(col) === true && typeof before[col] === "string")
        const others = columns.filter((col) => REDACTABLE[t.name]?.includes(col) !== true)
        const random = (col: string) => rnd[columns.indexOf(col)]
        const picked = (cols: ReadonlyArray<string>) => {
          const some = cols.filter((_, i) => c.pick[i % c.pick.length] === true)
          return some.length > 0 || cols.length === 0 ? some : [cols[c.at % cols.length] as string]
        }
        const sets: ReadonlyArray<readonly [string, unknown, boolean]> = c.shape === "random"
          ? columns.flatMap((col, i) => {
            if (c.pick[i % c.pick.length] !== true) return []
            const old = before[col]
            const asRedaction = c.asRedaction[i % c.asRedaction.length] === true && redactable.has(col) && typeof old === "string"
            return [[col, asRedaction ? redacted(old, c.at) : random(col), asRedaction] as const]
          })
          : [
            ...picked(texts).map((col) => [col, redacted(before[col] as string, c.at), true] as const),
            ...(c.shape === "mixed" && others.length > 0 ? [[others[(c.seed >>> 0) % others.length] as string] as const] : [])
              .map(([col]) => [col, random(col), false] as const)
          ]
        if (c.op === "update" && sets.length === 0) return true
        const { message, after } = inTransaction(c.permit, () => {
          const m = c.op === "delete"
            ? attempt(`DELETE FROM ${q(t.name)} WHERE ${where(t)}`, key)
            : c.op === "replace"
            ? attempt(`INSERT OR REPLACE INTO ${q(t.name)} (${t.columns.map(q).join(", ")}) SELECT ${t.columns.map(q).join(", ")} FROM ${q(t.name)} WHERE ${where(t)}`, key)
            : attempt(`UPDATE ${q(t.name)} SET ${sets.map(([col]) => `${q(col)} = ?`).join(", ")} WHERE ${where(t)}`, [...sets.map(([, v]) => v), ...key])
          return { message: m, after: rowAt(t, key) }
        })
        const label = `${t.name} ${c.op} permit=${c.permit} ${JSON.stringify(sets.map(([col]) => col))}: ${message ?? "ran"}`

        if (c.op !== "update") {
          if (!t.deleteGuarded) return true
          // a REPLACE deletes the row it collides with (recursive_triggers: the delete trigger fires),
          // unless an insert trigger of the table refuses the copy first
          if (c.op === "delete") expect(message, label).toBe("append-only")
          else expect(message, label).not.toBeNull()
          expect(after, label).toEqual(before)
          seen.refused++
          return true
        }
        const isGuarded = (col: string) => t.guarded.has(col) || (col === "rowid" && t.guarded.size === t.columns.length)
        const changes = sets.filter(([col, v]) => !same(before[col], v)).map(([col]) => col)
        // link's one change of its own: valid_to set once (graph.md §3.3), with nothing else changed
        const endsLink = t.name === "link" && changes.length === 1 && changes[0] === "valid_to" && before.valid_to === null
        // without the permit a trigger refuses any UPDATE naming a guarded column, even to the same
        // value; with it, the exemption compares values: what did not change does not count
        const counted = c.permit ? changes.filter(isGuarded) : sets.map(([col]) => col).filter(isGuarded)
        if (counted.length === 0 || endsLink) {
          expect(message, label).not.toBe("append-only")
          return true
        }
        if (c.permit && changes.every((col) => redactable.has(col))) {
          const written = { ...before, ...Object.fromEntries(sets.map(([col, v]) => [col, v])) }
          if (sets.every(([, , asRedaction]) => asRedaction)) {
            // a redaction: it goes through, the text columns carry the new text, nothing else moved
            expect(message, label).toBeNull()
            expect(after, label).toEqual(written)
            seen.redacted++
          } else {
            // any other value of those columns: the trigger lets it by; the column's own constraints
            // (NOT NULL, CHECK) may refuse it, and then nothing changed
            expect(message, label).not.toBe("append-only")
            expect(after, label).toEqual(message === null ? written : before)
          }
          return true
        }
        expect(message, label).toBe("append-only")
        expect(after, label).toEqual(before)
        if (c.permit) seen.permitRefused++
        else seen.refused++
        return true
      }),
      { numRuns: 1500, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) }
    )
    // each branch was driven, not only one of them
    expect(seen.refused).toBeGreaterThan(100)
    expect(seen.redacted).toBeGreaterThan(20)
    expect(seen.permitRefused).toBeGreaterThan(20)
  })

  it("a redaction changes every redactable column of every exempt table at once, and commits", () => {
    for (const [name, cols] of Object.entries(REDACTABLE)) {
      const t = tables.find((x) => x.name === name) as Table
      for (const before of rowsOf(t)) {
        const sets = cols.filter((col) => typeof before[col] === "string").map((col) => [col, redacted(before[col] as string, 3)] as const)
        if (sets.length === 0) continue
        const after = inTransaction(true, () => {
          expect(attempt(`UPDATE ${q(t.name)} SET ${sets.map(([col]) => `${q(col)} = ?`).join(", ")} WHERE ${where(t)}`,
            [...sets.map(([, v]) => v), ...keyOf(t, before)]), `${name} ${JSON.stringify(before)}`).toBeNull()
          return rowAt(t, keyOf(t, before))
        })
        expect(after).toEqual({ ...before, ...Object.fromEntries(sets) })
      }
    }
  })
})

describe("the permit", () => {
  it("only with the next redaction seq, and once", () => {
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 40 }), (seq) => {
        const next = nextSeq()
        const message = inTransaction(false, () => attempt("INSERT INTO redaction_permit (redaction_seq) VALUES (?)", [seq]))
        if (seq === next) expect(message).toBeNull()
        else expect(message).toMatch(/redaction-not-permitted|CHECK constraint failed/)
        return true
      }),
      { numRuns: 60 }
    )
    inTransaction(true, () => {
      expect(attempt("INSERT INTO redaction_permit (redaction_seq) VALUES (?)", [nextSeq()])).toBe("redaction-not-permitted")
      expect(attempt("INSERT INTO redaction_permit (redaction_seq) VALUES (?)", [nextSeq() + 1])).toBe("redaction-not-permitted")
      expect(attempt("UPDATE redaction_permit SET redaction_seq = redaction_seq + 1", [])).toBe("append-only")
    })
  })

  it("a redaction row or place only under its permit", () => {
    const seq = nextSeq()
    const redaction = [seq, `sales-x${String(seq).padStart(4, "0")}`, "b".repeat(64), 2, "person:2", "anna@acme.example", "request 18", T]
    const INSERT_REDACTION = "INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    const INSERT_PLACE = "INSERT INTO redaction_place (redaction_seq, tbl, key, col, offsets) VALUES (?, 'source', '[\"jamie:meeting-2026-03-12\"]', 'title', '[[0,6]]')"
    inTransaction(false, () => {
      expect(attempt(INSERT_REDACTION, redaction)).toBe("redaction-not-permitted")
      expect(attempt(INSERT_PLACE, [seq - 1])).toBe("redaction-not-permitted")
    })
    inTransaction(true, () => {
      // the permit of seq: not a redaction of another seq, not a place of an earlier one
      expect(attempt(INSERT_REDACTION, [seq + 1, `sales-x${String(seq + 1).padStart(4, "0")}`, ...redaction.slice(2)])).toBe("redaction-not-permitted")
      expect(attempt(INSERT_PLACE, [seq - 1])).toBe("redaction-not-permitted")
      expect(attempt(INSERT_REDACTION, redaction)).toBeNull()
      expect(attempt(INSERT_PLACE, [seq])).toBeNull()
    })
  })
})
