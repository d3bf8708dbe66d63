/**
 * Structure adoption (gaps.md §13): an agent (a service grant over POST /v1/entities, real HTTP)
 * builds a 200-entity tree in a scope in mode A — 10 departments with 19 teams each — with four
 * teams given a doubtful reason (the doubt exception), then moves one department with its 19
 * teams (20 nodes > graph.large_subtree 10). Reports entities/s of the creates and how many
 * changes the policy adopted and how many wait for a person (only the exceptions should).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { publicListener } from "../src/http/server.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { freePort, seededRandom } from "./support.js"

const SYLLABLES = ["ba", "ko", "du", "li", "me", "ra", "su", "ti", "fo", "ne", "pa", "gu", "ze", "wi", "ho", "ma", "ri", "lo", "ke", "vu"]

export const structureAdoptionBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-structure-"))
  const port = await freePort()
  const config = benchConfig(dir, {
    public_url: `http://127.0.0.1:${port}`, limits: { requests_per_minute: 100_000 },
    approval: { default_mode: "autonomous", daily_limit: 1000, own_domains: [] }
  }, port)
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  const rng = seededRandom(13)
  const used = new Set<string>()
  const name = (): string => {
    for (;;) {
      const word = (n: number) => Array.from({ length: n }, () => SYLLABLES[rng.int(SYLLABLES.length)] ?? "ba").join("")
      const w = word(3 + rng.int(2))
      const candidate = `${w.charAt(0).toUpperCase()}${w.slice(1)} ${word(2)}`
      if (!used.has(candidate)) {
        used.add(candidate)
        return candidate
      }
    }
  }
  try {
    const token = await runtime.runPromise(Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      const agent = yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"], label: "agent" })
      return "token" in agent ? agent.token : ""
    }))
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } })
      return { status: res.status, json: JSON.parse(await res.text()) as { id?: string; adoption?: { kind: string }; policy?: { exceptions: Array<string> } } }
    }
    /** a generated name may come close to one made before (duplicate-candidate): the agent picks another, as it would */
    const create = async (body: Record<string, unknown>) => {
      for (let attempt = 0; ; attempt++) {
        const r = await post("/v1/entities", { ...body, name: name() })
        if (r.status === 201 || attempt === 5) return r
        retried++
      }
    }
    let retried = 0
    const outcomes: Array<{ adopted: boolean; exceptions: Array<string> }> = []
    const refused: Array<number> = []
    const departments: Array<string> = []
    const started = performance.now()
    for (let d = 0; d < 10; d++) {
      const dep = await create({ scope: "bench", type: "department", parent_id: null })
      if (dep.status !== 201) refused.push(dep.status)
      outcomes.push({ adopted: dep.json.adoption?.kind === "auto", exceptions: dep.json.policy?.exceptions ?? [] })
      departments.push(dep.json.id ?? "")
      for (let t = 0; t < 19; t++) {
        const doubtful = d * 19 + t < 76 && (d * 19 + t) % 19 === 7
        const team = await create({
          scope: "bench", type: "project", parent_id: dep.json.id,
          ...(doubtful ? { reason: "Vielleicht gehört das Team woanders hin?" } : {})
        })
        if (team.status !== 201) refused.push(team.status)
        outcomes.push({ adopted: team.json.adoption?.kind === "auto", exceptions: team.json.policy?.exceptions ?? [] })
      }
    }
    const seconds = (performance.now() - started) / 1000
    const move = await post(`/v1/entities/${departments[0] ?? ""}/move`, { scope: "bench", parent_id: departments[1] })
    const adopted = outcomes.filter((o) => o.adopted).length
    const waiting = outcomes.filter((o) => !o.adopted)
    const byException = new Map<string, number>()
    for (const o of waiting) for (const e of o.exceptions.length === 0 ? ["none"] : o.exceptions) byException.set(e, (byException.get(e) ?? 0) + 1)
    console.log(`structure adoption (mode A, real HTTP): ${outcomes.length} entity creates in ${seconds.toFixed(2)} s = ${(outcomes.length / seconds).toFixed(1)} entities/s`)
    console.log(`  adopted by the policy: ${adopted}; waiting for a person: ${waiting.length} (${[...byException].map(([e, n]) => `${e} ${n}`).join(", ") || "none"}); refused: ${refused.length} (${retried} names retried after duplicate-candidate)`)
    console.log(`  move of a department with 19 teams (20 nodes): ${move.json.adoption?.kind === "auto" ? "adopted" : `waits for a person (${(move.json.policy?.exceptions ?? []).join(", ")})`}`)
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
