/**
 * Every trigger and CHECK refusal of architecture.md §4.1, §4.2 and graph.md §3, tried on a real
 * scope or ops file and answered with its exact message (triggers) or SQLite's CHECK code.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sqliteCode, triggerMessage } from "../../src/db/errors.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { counts, fileHash, run, sqlOf } from "../support/run.js"

const T = "2026-03-12T09:15:00Z"

/** A scope with one row of everything, so each case can try one refused statement. */
const SEED = [
  `INSERT INTO source VALUES ('mail:<a@x>', 'mail', 'Subject', '${T}', 's@x', NULL, NULL, 'text of the mail', 'h1', '${T}', 'service:1')`,
  `INSERT INTO source VALUES ('jamie:m1', 'jamie', 'Meeting', '${T}', NULL, NULL, 'https://j/1', NULL, 'h2', '${T}', 'service:1')`,
  `INSERT INTO source VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '${T}', 'person:1')`,
  `INSERT INTO source_segment VALUES ('jamie:m1', 1, 0, 'Tom', 'hello there')`,
  `INSERT INTO source_attachment VALUES ('mail:<a@x>', 1, 'a.pdf', 'application/pdf', 10, NULL, NULL, 'none')`,
  `INSERT INTO rule VALUES (1, 'sales-0001', '${T}', 'service:1')`,
  `INSERT INTO rule VALUES (2, 'sales-0002', '${T}', 'service:1')`,
  `INSERT INTO rule VALUES (3, 'sales-0003', '${T}', 'service:1')`,
  // sales-0001: proposed → confirmed
  `INSERT INTO rule_version VALUES ('sales-0001', 1, 'rule', 'A statement of the rule', 'mail:<a@x>', 'a quote that is long enough', NULL, NULL, '${T}', NULL, '[]', '[]', '2026-03-12', NULL, NULL, NULL, 'proposed', 'proposed via api', 'service:1', '${T}')`,
  `INSERT INTO rule_version VALUES ('sales-0001', 2, 'rule', 'A statement of the rule', 'mail:<a@x>', 'a quote that is long enough', NULL, NULL, '${T}', NULL, '[]', '[]', '2026-03-12', NULL, NULL, NULL, 'confirmed', 'confirmed', 'person:1', '${T}')`,
  // sales-0002: proposed → rejected
  `INSERT INTO rule_version VALUES ('sales-0002', 1, 'rule', 'Another statement here', 'jamie:m1', 'another quote long enough', 0, 'https://j/1', '${T}', NULL, '[]', '[]', '2026-03-12', NULL, NULL, NULL, 'proposed', 'proposed via api', 'service:1', '${T}')`,
  `INSERT INTO rule_version VALUES ('sales-0002', 2, 'rule', 'Another statement here', 'jamie:m1', 'another quote long enough', 0, 'https://j/1', '${T}', NULL, '[]', '[]', '2026-03-12', NULL, NULL, NULL, 'rejected', 'wrong', 'person:1', '${T}')`,
  // sales-0003: proposed (manual)
  `INSERT INTO rule_version VALUES ('sales-0003', 1, 'note', 'A manual note statement', 'manual:person:1', 'x', NULL, NULL, '${T}', NULL, '[]', '[]', '2026-03-12', NULL, NULL, NULL, 'proposed', 'proposed via mcp', 'person:1', '${T}')`,
  `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 1, 'confirm', 'person:1', 'p@x', '${T}', NULL, 2)`,
  // graph: root e0001 (active), child e0002 (unconfirmed), archived e0003
  `INSERT INTO entity VALUES (1, 'sales-e0001', 'sales', '${T}', 'agent')`,
  `INSERT INTO entity_version VALUES ('sales-e0001', 1, 'organisation', 'Acme', '[]', NULL, 'unconfirmed', '2026-03-12', NULL, NULL, 'create', 'mcp', 'person:1', '${T}', 'created via mcp')`,
  `INSERT INTO entity_closure VALUES ('sales-e0001', 'sales-e0001', 0)`,
  `INSERT INTO entity_version VALUES ('sales-e0001', 2, 'organisation', 'Acme', '[]', NULL, 'active', '2026-03-12', NULL, NULL, 'confirm', 'approval', 'person:1', '${T}', 'ok')`,
  `INSERT INTO entity VALUES (2, 'sales-e0002', 'sales', '${T}', 'agent')`,
  `INSERT INTO entity_version VALUES ('sales-e0002', 1, 'department', 'Sales', '[]', 'sales-e0001', 'unconfirmed', '2026-03-12', NULL, NULL, 'create', 'mcp', 'person:1', '${T}', 'created via mcp')`,
  `INSERT INTO entity_closure VALUES ('sales-e0002', 'sales-e0002', 0)`,
  `INSERT INTO entity_closure VALUES ('sales-e0001', 'sales-e0002', 1)`,
  // e0002 was forced past a look-alike (migration 0008)
  `INSERT INTO entity_override VALUES ('sales-e0002', 1, 1, 'sales-e0001', 'Acme', 'organisation', 'unconfirmed', '[]', '["Acme"]', 0.9, 'typo')`,
  `INSERT INTO entity VALUES (3, 'sales-e0003', 'sales', '${T}', 'agent')`,
  `INSERT INTO entity_version VALUES ('sales-e0003', 1, 'topic', 'Old', '[]', NULL, 'unconfirmed', '2026-03-12', NULL, NULL, 'create', 'mcp', 'person:1', '${T}', 'created via mcp')`,
  `INSERT INTO entity_closure VALUES ('sales-e0003', 'sales-e0003', 0)`,
  `INSERT INTO entity_version VALUES ('sales-e0003', 2, 'topic', 'Old', '[]', NULL, 'archived', '2026-03-12', '2026-03-13', NULL, 'archive', 'approval', 'person:1', '${T}', 'gone')`,
  `INSERT INTO link VALUES (1, 'sales-l0001', 'rule/sales-0001', 'entity/sales-e0001', 'concerns', 'proposed', 0.8, 'mail says so', NULL, '${T}', NULL, '${T}', 'person:1')`,
  `INSERT INTO review VALUES (1, 'sales-r0001', 'link/sales-l0001', 'confirm', 'person:1', 'p@x', '${T}', NULL, NULL, 'grant')`
]

const v = (rule: string, version: number, status: string, extra: Partial<Record<string, string>> = {}) => {
  const f = {
    kind: "'rule'", statement: "'A statement of the rule'", source: "'mail:<a@x>'", quote: "'a quote that is long enough'",
    ts: "NULL", link: "NULL", valid_until: "NULL", superseded_by: "NULL", ...extra
  }
  return `INSERT INTO rule_version VALUES ('${rule}', ${version}, ${f.kind}, ${f.statement}, ${f.source}, ${f.quote}, ${f.ts}, ${f.link}, '${T}', NULL, '[]', '[]', '2026-03-12', ${f.valid_until}, NULL, ${f.superseded_by}, '${status}', 'r', 'person:1', '${T}')`
}
const ev = (id: string, version: number, change: string, status: string, extra: Partial<Record<string, string>> = {}) => {
  const f = { type: "'organisation'", name: "'Acme'", parent: "NULL", channel: change === "confirm" || change === "revert" || change === "archive" ? "'approval'" : "'mcp'", valid_to: "NULL", ...extra }
  return `INSERT INTO entity_version VALUES ('${id}', ${version}, ${f.type}, ${f.name}, '[]', ${f.parent}, '${status}', '2026-03-12', ${f.valid_to}, NULL, '${change}', ${f.channel}, 'person:1', '${T}', 'because')`
}
const link = (seq: number, from: string, to: string, extra: Partial<Record<string, string>> = {}) => {
  const f = { id: `'sales-l${String(seq).padStart(4, "0")}'`, type: "'mentions'", origin: "'human'", confidence: "NULL", reason: "'seen'", by: "'person:1'", ...extra }
  return `INSERT INTO link VALUES (${seq}, ${f.id}, '${from}', '${to}', ${f.type}, ${f.origin}, ${f.confidence}, ${f.reason}, NULL, '${T}', NULL, '${T}', ${f.by})`
}

interface Case { name: string; sql: string; trigger?: string; check?: true; unique?: true }

const SCOPE_CASES: ReadonlyArray<Case> = [
  ...["rule", "rule_version", "decision", "source", "source_attachment", "source_segment", "entity", "entity_version", "review", "entity_override"].flatMap((t) => [
    { name: `append-only: UPDATE ${t}`, sql: `UPDATE ${t} SET rowid = rowid WHERE 1`, trigger: "append-only" },
    { name: `append-only: DELETE ${t}`, sql: `DELETE FROM ${t}`, trigger: "append-only" }
  ]).filter((c) => !(c.sql.includes("rowid") && /source_attachment|source_segment/.test(c.sql))),
  { name: "append-only: UPDATE source_attachment", sql: "UPDATE source_attachment SET filename = 'b.pdf'", trigger: "append-only" },
  { name: "append-only: UPDATE source_segment", sql: "UPDATE source_segment SET text = 'changed'", trigger: "append-only" },
  { name: "append-only: UPDATE rule_version status", sql: "UPDATE rule_version SET status = 'confirmed' WHERE rule_id = 'sales-0003'", trigger: "append-only" },
  { name: "append-only: INSERT OR REPLACE rule (recursive_triggers)", sql: `INSERT OR REPLACE INTO rule VALUES (1, 'sales-0001', '${T}', 'x')`, trigger: "append-only" },
  { name: "meta: scope fixed", sql: "UPDATE meta SET scope = 'ops'", trigger: "append-only" },
  { name: "meta: created_at fixed", sql: "UPDATE meta SET created_at = 'x'", trigger: "append-only" },
  { name: "meta: no delete", sql: "DELETE FROM meta", trigger: "append-only" },
  { name: "link: no delete", sql: "DELETE FROM link", trigger: "append-only" },
  { name: "link: only valid_to may be set once", sql: "UPDATE link SET reason = 'other'", trigger: "append-only" },
  { name: "link: valid_to set twice", sql: `UPDATE link SET valid_to = '${T}'; UPDATE link SET valid_to = '2026-04-01T00:00:00Z'`, trigger: "append-only" },
  { name: "rule-id-not-in-scope: other scope", sql: `INSERT INTO rule VALUES (9, 'ops-0009', '${T}', 'x')`, trigger: "rule-id-not-in-scope" },
  { name: "rule-id-not-in-scope: short number", sql: `INSERT INTO rule VALUES (9, 'sales-009', '${T}', 'x')`, trigger: "rule-id-not-in-scope" },
  { name: "rule-id-not-in-scope: not digits", sql: `INSERT INTO rule VALUES (9, 'sales-00a9', '${T}', 'x')`, trigger: "rule-id-not-in-scope" },
  { name: "attachment-gap", sql: "INSERT INTO source_attachment VALUES ('mail:<a@x>', 3, 'c.pdf', 'application/pdf', 1, NULL, NULL, 'none')", trigger: "attachment-gap" },
  { name: "attachment-gap: first is not 1", sql: "INSERT INTO source_attachment VALUES ('jamie:m1', 2, 'c.pdf', 'application/pdf', 1, NULL, NULL, 'none')", trigger: "attachment-gap" },
  { name: "version-gap", sql: v("sales-0003", 3, "confirmed", { kind: "'note'", statement: "'A manual note statement'", source: "'manual:person:1'", quote: "'x'" }), trigger: "version-gap" },
  { name: "terminal-state: rejected", sql: v("sales-0002", 3, "confirmed", { statement: "'Another statement here'", source: "'jamie:m1'", quote: "'another quote long enough'", ts: "0", link: "'https://j/1'" }), trigger: "terminal-state" },
  { name: "invalid-transition: v1 not proposed", sql: `INSERT INTO rule VALUES (4, 'sales-0004', '${T}', 'x'); ${v("sales-0004", 1, "confirmed")}`, trigger: "invalid-transition" },
  { name: "invalid-transition: v>1 proposed", sql: v("sales-0001", 3, "proposed"), trigger: "invalid-transition" },
  { name: "invalid-transition: reject a confirmed rule", sql: v("sales-0001", 3, "rejected"), trigger: "invalid-transition" },
  { name: "invalid-transition: supersede a proposal", sql: v("sales-0003", 2, "superseded", { kind: "'note'", statement: "'A manual note statement'", source: "'manual:person:1'", quote: "'x'", valid_until: "'2026-04-01'" }), trigger: "invalid-transition" },
  { name: "source-immutable: quote", sql: v("sales-0001", 3, "confirmed", { quote: "'a different quote long enough'" }), trigger: "source-immutable" },
  { name: "source-immutable: source", sql: `INSERT INTO source VALUES ('mail:<b@x>', 'mail', 'S', '${T}', NULL, NULL, NULL, 't', 'h', '${T}', 's'); ${v("sales-0001", 3, "confirmed", { source: "'mail:<b@x>'" })}`, trigger: "source-immutable" },
  { name: "source-immutable: source_link", sql: v("sales-0001", 3, "confirmed", { link: "'https://other'" }), trigger: "source-immutable" },
  { name: "CHECK: superseded needs valid_until", sql: v("sales-0001", 3, "superseded"), check: true },
  { name: "CHECK: valid_until only when superseded", sql: v("sales-0001", 3, "confirmed", { valid_until: "'2026-04-01'" }), check: true },
  { name: "CHECK: valid_until before valid_from", sql: v("sales-0001", 3, "superseded", { valid_until: "'2026-01-01'" }), check: true },
  { name: "CHECK: superseded_by only when superseded", sql: v("sales-0001", 3, "confirmed", { superseded_by: "'sales-0003'" }), check: true },
  { name: "CHECK: statement too short", sql: `INSERT INTO rule VALUES (5, 'sales-0005', '${T}', 'x'); ${v("sales-0005", 1, "proposed", { statement: "'short'" })}`, check: true },
  { name: "CHECK: quote too short for mail", sql: `INSERT INTO rule VALUES (5, 'sales-0005', '${T}', 'x'); ${v("sales-0005", 1, "proposed", { quote: "'too short'" })}`, check: true },
  { name: "CHECK: jamie needs timestamp_s", sql: `INSERT INTO rule VALUES (5, 'sales-0005', '${T}', 'x'); ${v("sales-0005", 1, "proposed", { source: "'jamie:m1'" })}`, check: true },
  { name: "CHECK: timestamp_s only for jamie", sql: `INSERT INTO rule VALUES (5, 'sales-0005', '${T}', 'x'); ${v("sales-0005", 1, "proposed", { ts: "5" })}`, check: true },
  { name: "CHECK: source kind prefix", sql: `INSERT INTO source VALUES ('mail:<c@x>', 'jamie', 'S', '${T}', NULL, NULL, NULL, NULL, 'h', '${T}', 's')`, check: true },
  { name: "CHECK: thread only for mail", sql: `INSERT INTO source VALUES ('jamie:m2', 'jamie', 'S', '${T}', NULL, 'mail:<a@x>', NULL, NULL, 'h', '${T}', 's')`, check: true },
  { name: "CHECK: mail needs its text", sql: `INSERT INTO source VALUES ('mail:<c@x>', 'mail', 'S', '${T}', NULL, NULL, NULL, NULL, 'h', '${T}', 's')`, check: true },
  { name: "CHECK: manual has no hash", sql: `INSERT INTO source VALUES ('manual:person:2', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, 'h', '${T}', 's')`, check: true },
  { name: "CHECK: occurred_at is an instant", sql: `INSERT INTO source VALUES ('jamie:m3', 'jamie', 'S', '2026-03-12', NULL, NULL, NULL, NULL, 'h', '${T}', 's')`, check: true },
  { name: "CHECK: attachment text_origin none ⇔ no text", sql: "INSERT INTO source_attachment VALUES ('mail:<a@x>', 2, 'c.pdf', 'application/pdf', 1, NULL, 'text', 'none')", check: true },
  { name: "CHECK: segment text not empty", sql: "INSERT INTO source_segment VALUES ('jamie:m1', 2, 5, NULL, '')", check: true },
  { name: "CHECK: decision by a person", sql: `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 2, 'review', 'service:1', 'x', '${T}', NULL, NULL)`, check: true },
  { name: "CHECK: reject needs a reason", sql: `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0002', 1, 'reject', 'person:1', 'x', '${T}', '  ', 2)`, check: true },
  { name: "CHECK: confirm needs new_version", sql: `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 1, 'confirm', 'person:1', 'x', '${T}', NULL, NULL)`, check: true },
  { name: "CHECK: new_version after version", sql: `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 2, 'review', 'person:1', 'x', '${T}', NULL, 1)`, check: true },
  { name: "FOREIGN KEY: decision on an unknown version", sql: `INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 7, 'review', 'person:1', 'x', '${T}', NULL, NULL)` , check: true },
  { name: "CHECK: search_log search needs terms", sql: `INSERT INTO search_log VALUES ('id1', '${T}', 'g', 'api', 'search', 200, 0, '[]', NULL, NULL, NULL, NULL)`, check: true },
  { name: "CHECK: search_log unknown operation", sql: `INSERT INTO search_log VALUES ('id1', '${T}', 'g', 'api', 'drop', 200, 0, '[]', NULL, NULL, NULL, NULL)`, check: true },
  { name: "CHECK: search_log refs json", sql: `INSERT INTO search_log VALUES ('id1', '${T}', 'g', 'api', 'status', 200, 0, 'nope', NULL, NULL, NULL, NULL)`, check: true },
  // graph.md §3
  { name: "entity-id-not-in-scope: other scope", sql: `INSERT INTO entity VALUES (4, 'ops-e0004', 'ops', '${T}', 'agent')`, trigger: "entity-id-not-in-scope" },
  { name: "entity-id-not-in-scope: id not seq", sql: `INSERT INTO entity VALUES (4, 'sales-e0005', 'sales', '${T}', 'agent')`, trigger: "entity-id-not-in-scope" },
  { name: "entity version-gap", sql: ev("sales-e0001", 4, "move", "active"), trigger: "version-gap" },
  { name: "entity invalid-transition: v1 not create", sql: `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'agent'); ${ev("sales-e0004", 1, "move", "unconfirmed")}`, trigger: "invalid-transition" },
  { name: "entity invalid-transition: create after v1", sql: ev("sales-e0001", 3, "create", "unconfirmed"), trigger: "invalid-transition" },
  { name: "entity invalid-transition: confirm an active entity", sql: ev("sales-e0001", 3, "confirm", "active"), trigger: "invalid-transition" },
  { name: "entity invalid-transition: agent changes status", sql: ev("sales-e0002", 2, "move", "active", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'" }), trigger: "invalid-transition" },
  { name: "entity terminal-state", sql: ev("sales-e0003", 3, "update", "archived", { type: "'topic'", name: "'Old'", valid_to: "'2026-03-13'" }), trigger: "terminal-state" },
  { name: "entity state-changed", sql: ev("sales-e0002", 2, "confirm", "active", { type: "'department'", name: "'Renamed'", parent: "'sales-e0001'" }), trigger: "state-changed" },
  { name: "entity cycle", sql: ev("sales-e0001", 3, "move", "active", { parent: "'sales-e0002'" }), trigger: "cycle" },
  { name: "entity parent-archived", sql: ev("sales-e0002", 2, "move", "unconfirmed", { type: "'department'", name: "'Sales'", parent: "'sales-e0003'" }), trigger: "parent-archived" },
  { name: "entity has-children", sql: ev("sales-e0001", 3, "archive", "archived", { valid_to: "'2026-03-13'" }), trigger: "has-children" },
  { name: "CHECK: agents never confirm", sql: ev("sales-e0002", 2, "confirm", "active", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'", channel: "'mcp'" }), check: true },
  { name: "CHECK: approval versions by a person", sql: ev("sales-e0002", 2, "confirm", "active", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'" }).replace("'person:1'", "'service:1'"), check: true },
  { name: "CHECK: create is unconfirmed", sql: `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'agent'); ${ev("sales-e0004", 1, "create", "active")}`, check: true },
  { name: "CHECK: archived ⇔ valid_to", sql: ev("sales-e0002", 2, "archive", "archived", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'" }), check: true },
  { name: "CHECK: entity type vocabulary shape", sql: `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'agent'); ${ev("sales-e0004", 1, "create", "unconfirmed", { type: "'Bad-Type'" })}`, check: true },
  { name: "CHECK: entity created_by", sql: `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'robot')`, check: true },
  { name: "link-id-not-in-scope", sql: link(2, "rule/sales-0001", "entity/sales-e0002", { id: "'ops-l0002'" }), trigger: "link-id-not-in-scope" },
  { name: "link-endpoint-unknown: from", sql: link(2, "rule/sales-0099", "entity/sales-e0002"), trigger: "link-endpoint-unknown" },
  { name: "link-endpoint-unknown: to", sql: link(2, "rule/sales-0001", "attachment/mail:<a@x>#2"), trigger: "link-endpoint-unknown" },
  { name: "entity-archived", sql: link(2, "rule/sales-0001", "entity/sales-e0003"), trigger: "entity-archived" },
  { name: "CHECK: proposed ⇔ confidence", sql: link(2, "rule/sales-0001", "entity/sales-e0002", { origin: "'proposed'" }), check: true },
  { name: "CHECK: deterministic ⇔ created_by code", sql: link(2, "rule/sales-0001", "entity/sales-e0002", { origin: "'deterministic'" }), check: true },
  { name: "CHECK: human link needs a reason", sql: link(2, "rule/sales-0001", "entity/sales-e0002", { reason: "NULL" }), check: true },
  { name: "CHECK: link ends differ", sql: link(2, "rule/sales-0001", "rule/sales-0001"), check: true },
  { name: "UNIQUE: one open link per (from, type, to)", sql: link(2, "rule/sales-0001", "entity/sales-e0001", { type: "'concerns'" }), unique: true },
  { name: "review-id-not-in-scope", sql: `INSERT INTO review VALUES (2, 'ops-r0002', 'entity/sales-e0002@1', 'confirm', 'person:1', 'p@x', '${T}', NULL, NULL, 'grant')`, trigger: "review-id-not-in-scope" },
  { name: "UNIQUE: one review per target", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0001', 'reject', 'person:1', 'p@x', '${T}', 'no', NULL, 'grant')`, unique: true },
  { name: "CHECK: reject only links", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'reject', 'person:1', 'p@x', '${T}', 'no', NULL, 'grant')`, check: true },
  { name: "CHECK: revert only entities", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0009', 'revert', 'person:1', 'p@x', '${T}', 'no', NULL, 'grant')`, check: true },
  { name: "CHECK: revert needs a reason", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'revert', 'person:1', 'p@x', '${T}', NULL, NULL, 'grant')`, check: true },
  { name: "CHECK: review by a person", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'service:1', 'p@x', '${T}', NULL, NULL, 'grant')`, check: true },
  // 0011: structure adoption, retract, close, a person's create and unarchive
  { name: "CHECK: a version of the approval channel is a person's create, confirm, revert, archive or unarchive", sql: ev("sales-e0001", 3, "move", "active", { channel: "'approval'", parent: "NULL" }), check: true },
  { name: "CHECK: unarchive only by a person", sql: ev("sales-e0003", 3, "unarchive", "active", { type: "'topic'", name: "'Old'", channel: "'mcp'" }), check: true },
  { name: "CHECK: unarchive makes the entity active", sql: ev("sales-e0003", 3, "unarchive", "unconfirmed", { type: "'topic'", name: "'Old'", channel: "'approval'" }), check: true },
  { name: "entity invalid-transition: unarchive an entity that is not archived", sql: ev("sales-e0001", 3, "unarchive", "active", { channel: "'approval'" }), trigger: "invalid-transition" },
  { name: "entity state-changed: an unarchive changes nothing else", sql: ev("sales-e0003", 3, "unarchive", "active", { type: "'topic'", name: "'New'", channel: "'approval'" }), trigger: "state-changed" },
  { name: "CHECK: an agent's create is unconfirmed, a person's active", sql: `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'human'); ${ev("sales-e0004", 1, "create", "unconfirmed", { channel: "'approval'" })}`, check: true },
  { name: "CHECK: a confirm on an agent's channel is the policy's", sql: ev("sales-e0002", 2, "confirm", "active", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'", channel: "'mcp'" }).replace("'person:1'", "'service:1'"), check: true },
  { name: "CHECK: origin auto ⇔ decided by the policy", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'person:1', 'p@x', '${T}', NULL, NULL, 'auto')`, check: true },
  { name: "CHECK: the policy only confirms", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0001', 'reject', 'policy@gn-1', 'policy@gn-1', '${T}', 'no', NULL, 'auto')`, check: true },
  { name: "CHECK: close only links", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto'); INSERT INTO review VALUES (3, 'sales-r0003', 'entity/sales-e0002@1', 'close', 'person:1', 'p@x', '${T}', 'ends', NULL, 'grant')`, check: true },
  { name: "CHECK: a retract needs a reason", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto'); INSERT INTO review VALUES (3, 'sales-r0003', 'entity/sales-e0002@1', 'retract', 'person:1', 'p@x', '${T}', NULL, NULL, 'grant')`, check: true },
  { name: "not-retractable: nothing was adopted", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'retract', 'service:1', 'feeder', '${T}', 'mine', NULL, 'grant')`, trigger: "not-retractable" },
  { name: "not-retractable: a person decided on it", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0001', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto'); INSERT INTO review VALUES (3, 'sales-r0003', 'link/sales-l0001', 'retract', 'person:1', 'p@x', '${T}', 'mine', NULL, 'grant')`, trigger: "not-retractable" },
  { name: "UNIQUE: one adoption per target", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto'); INSERT INTO review VALUES (3, 'sales-r0003', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto')`, unique: true },
  { name: "invalid-transition: close a link nobody confirmed", sql: `${link(2, "rule/sales-0001", "entity/sales-e0002", { origin: "'proposed'", confidence: "0.7" })}; INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0002', 'close', 'person:1', 'p@x', '${T}', 'ends', NULL, 'grant')`, trigger: "invalid-transition" },
  { name: "already-decided: no verdict after a close", sql: `INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0001', 'close', 'person:1', 'p@x', '${T}', 'ends', NULL, 'grant'); INSERT INTO review VALUES (3, 'sales-r0003', 'link/sales-l0001', 'reject', 'person:1', 'p@x', '${T}', 'no', NULL, 'grant')`, trigger: "already-decided" }
]

const OPS_CASES: ReadonlyArray<Case> = [
  { name: "grant-disable-only: re-enable", sql: `UPDATE grant SET active = 1, disabled_at = NULL WHERE id = 'person:2'`, trigger: "grant-disable-only" },
  { name: "grant-disable-only: change label", sql: `UPDATE grant SET label = 'x' WHERE id = 'person:1'`, trigger: "grant-disable-only" },
  { name: "grant-disable-only: disable and widen scopes", sql: `UPDATE grant SET active = 0, disabled_at = '${T}', scopes = '["sales","ops"]' WHERE id = 'person:1'`, trigger: "grant-disable-only" },
  { name: "grant: no delete", sql: "DELETE FROM grant", trigger: "append-only" },
  { name: "CHECK: person ⇔ email", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'email', 'x@y', '["sales"]', '["read"]', NULL, 1, '${T}', NULL)`, check: true },
  { name: "CHECK: a service never decides", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'bearer', 'abc', '["sales"]', '["read","decide"]', NULL, 1, '${T}', NULL)`, check: true },
  { name: "redact-person-only: a service never redacts", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'bearer', 'abc', '["sales"]', '["read","redact"]', NULL, 1, '${T}', NULL)`, trigger: "redact-person-only" },
  { name: "redact-person-only: nor an Access service", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'access-service', 'feeder.access', '["sales"]', '["redact"]', NULL, 1, '${T}', NULL)`, trigger: "redact-person-only" },
  { name: "CHECK: active ⇔ no disabled_at", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'bearer', 'abc', '["sales"]', '["read"]', NULL, 1, '${T}', '${T}')`, check: true },
  { name: "CHECK: at least one scope", sql: `INSERT INTO grant VALUES (9, 'service:9', 'service', 'bearer', 'abc', '[]', '["read"]', NULL, 1, '${T}', NULL)`, check: true },
  { name: "UNIQUE: one active grant per identity", sql: `INSERT INTO grant VALUES (9, 'person:9', 'person', 'email', 'p@x', '["sales"]', '["read"]', NULL, 1, '${T}', NULL)`, unique: true },
  { name: "count-decreased", sql: "UPDATE backup_state SET version_count = 1 WHERE scope = 'sales'", trigger: "count-decreased" },
  { name: "backup_state: no delete", sql: "DELETE FROM backup_state", trigger: "append-only" },
  { name: "CHECK: version_count ≥ 0", sql: `INSERT INTO backup_state (scope, created_at, version_count, counted_at) VALUES ('x', '${T}', -1, '${T}')`, check: true },
  { name: "CHECK: verified_at is an instant", sql: "UPDATE backup_state SET verified_at = 'yesterday'", check: true },
  { name: "CHECK: export_sha256 is 64 hex", sql: "UPDATE backup_state SET export_sha256 = 'ABC'", check: true },
  { name: "backup_run: no update", sql: "UPDATE backup_run SET ok = 0", trigger: "append-only" },
  { name: "backup_run: no delete", sql: "DELETE FROM backup_run", trigger: "append-only" },
  { name: "CHECK: backup_run finished after started", sql: `INSERT INTO backup_run (kind, backup_kind, started_at, finished_at, ok, result) VALUES ('run', 'copy', '2026-03-12T10:00:00Z', '2026-03-12T09:00:00Z', 1, '{}')`, check: true }
]

const OPS_SEED = [
  `INSERT INTO grant VALUES (1, 'person:1', 'person', 'email', 'p@x', '["sales"]', '["read","decide"]', NULL, 1, '${T}', NULL)`,
  `INSERT INTO grant VALUES (2, 'person:2', 'person', 'email', 'q@x', '["sales"]', '["read"]', NULL, 0, '${T}', '${T}')`,
  `INSERT INTO backup_state (scope, created_at, version_count, counted_at) VALUES ('sales', '${T}', 5, '${T}') ON CONFLICT (scope) DO UPDATE SET version_count = 5`,
  `INSERT INTO backup_run (kind, backup_kind, started_at, finished_at, ok, result) VALUES ('run', 'copy', '${T}', '${T}', 1, '{}')`
]

/** Runs each statement of a case inside a transaction that is always rolled back. */
const attempt = (sql: SqlClient, statements: string) =>
  Effect.gen(function*() {
    const parts = statements.split(/;\s(?=INSERT|UPDATE|DELETE)/)
    return yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
      for (const p of parts) yield* sql.unsafe(p).raw
      return yield* Effect.fail("rollback" as const)
    })))
  })

const expectRefusal = (c: Case, exit: Exit.Exit<unknown, unknown>) => {
  expect(Exit.isFailure(exit), c.name).toBe(true)
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`${c.name}: no typed failure`)
  const err = exit.cause.error
  if (!(err instanceof SqlError)) throw new Error(`${c.name}: the statement was not refused (${String(err)})`)
  if (c.trigger !== undefined) expect(triggerMessage(err), c.name).toBe(c.trigger)
  if (c.check) expect(sqliteCode(err), c.name).toMatch(/^SQLITE_CONSTRAINT_(CHECK|FOREIGNKEY|NOTNULL)$/)
  if (c.unique) expect(sqliteCode(err), c.name).toBe("SQLITE_CONSTRAINT_UNIQUE")
}

describe("scope file triggers and CHECKs", () => {
  const { dir, cleanup } = tempDir()
  const config = testConfig(dir)
  beforeAll(() => run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    const { sql } = yield* store.use("sales")
    yield* sql.withTransaction(Effect.forEach(SEED, (s) => sql.unsafe(s).raw))
  })))
  afterAll(cleanup)

  it("the seed itself is accepted by every trigger", async () => {
    const n = await run(config, Effect.gen(function*() {
      const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("sales"))
      return yield* sql<{ n: number }>`SELECT count(*) AS n FROM rule_version`
    }))
    expect(n[0]?.n).toBe(5)
  })

  it("a refused write leaves the file byte-for-byte as it was (row counts and file hash)", async () => {
    const file = scopeFile(dir, "sales")
    const before = { hash: fileHash(file), counts: await run(config, Effect.flatMap(sqlOf("sales"), counts)) }
    await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      for (const statement of ["UPDATE rule_version SET statement = 'changed statement here'", "DELETE FROM source", v("sales-0001", 3, "proposed")]) {
        const exit = yield* Effect.exit(sql.unsafe(statement).raw)
        expect(Exit.isFailure(exit)).toBe(true)
      }
    }))
    expect(await run(config, Effect.flatMap(sqlOf("sales"), counts))).toEqual(before.counts)
    expect(fileHash(file)).toBe(before.hash)
  })

  it("0011 lets through: the policy's confirm on the agent's channel, a person's create born active, a person's unarchive, a retract of an adoption, a close of a confirmed link", async () => {
    const accepted = [
      // the policy adopts e0002's create: its confirm version and its review, origin auto
      `${ev("sales-e0002", 2, "confirm", "active", { type: "'department'", name: "'Sales'", parent: "'sales-e0001'", channel: "'mcp'" }).replace("'person:1'", "'policy@gn-1'")}; INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, 2, 'auto')`,
      // ... and the agent takes it back while no person decided
      `INSERT INTO review VALUES (2, 'sales-r0002', 'entity/sales-e0002@1', 'confirm', 'policy@gn-1', 'policy@gn-1', '${T}', NULL, NULL, 'auto'); INSERT INTO review VALUES (3, 'sales-r0003', 'entity/sales-e0002@1', 'retract', 'service:1', 'feeder', '${T}', 'wrong parent', NULL, 'grant')`,
      // a person creates an entity directly
      `INSERT INTO entity VALUES (4, 'sales-e0004', 'sales', '${T}', 'human'); ${ev("sales-e0004", 1, "create", "active", { channel: "'approval'" })}`,
      // a person unarchives e0003
      ev("sales-e0003", 3, "unarchive", "active", { type: "'topic'", name: "'Old'", channel: "'approval'" }),
      // a person closes the confirmed link l0001
      `UPDATE link SET valid_to = '${T}' WHERE id = 'sales-l0001'; INSERT INTO review VALUES (2, 'sales-r0002', 'link/sales-l0001', 'close', 'person:1', 'p@x', '${T}', 'ended', NULL, 'grant')`
    ]
    for (const statements of accepted) {
      const exit = await run(config, Effect.gen(function*() {
        const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("sales"))
        return yield* attempt(sql, statements)
      }))
      // attempt() rolls back with its own failure "rollback": anything else is a refusal
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit, statements).toBe("rollback")
    }
  })

  for (const c of SCOPE_CASES) {
    it(c.name, async () => {
      const exit = await run(config, Effect.gen(function*() {
        const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("sales"))
        return yield* attempt(sql, c.sql)
      }))
      expectRefusal(c, exit)
    })
  }
})

describe("ops file triggers and CHECKs", () => {
  const { dir, cleanup } = tempDir()
  const config = testConfig(dir)
  beforeAll(() => run(config, Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* ops.sql.withTransaction(Effect.forEach(OPS_SEED, (s) => ops.sql.unsafe(s).raw))
  })))
  afterAll(cleanup)

  for (const c of OPS_CASES) {
    it(c.name, async () => {
      const exit = await run(config, Effect.gen(function*() {
        const ops = yield* OpsStore
        return yield* attempt(ops.sql, c.sql)
      }))
      expectRefusal(c, exit)
    })
  }

  it("disabling an active grant is the one allowed update", async () => {
    const rows = await run(config, Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* ops.sql.unsafe(`UPDATE grant SET active = 0, disabled_at = '${T}' WHERE id = 'person:1'`).raw
      return yield* ops.sql<{ active: number }>`SELECT active FROM grant WHERE id = 'person:1'`
    }))
    expect(rows[0]?.active).toBe(0)
  })
})
