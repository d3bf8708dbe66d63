/**
 * The client side of bench/load.ts and the soak, in a process of its own (so what it measures is
 * not spent on the server's thread): started with one JSON argument, it reports one JSON message
 * to its parent (process.send) and exits.
 *
 *   search  N keep-alive clients, each POST /v1/search in a loop for `seconds`; a 503 is waited out
 *           for its Retry-After, as a well-behaved client does; latency of every answer, answers
 *           per client
 *   probe   GET /healthz (its own keep-alive connection) and GET /ops/status on the ops socket,
 *           one after the other every `intervalMs`, until `seconds` are over
 *   steps   one POST /v1/search (limit 10) on one keep-alive connection for each message {text}
 *           of the parent, answered with its latency, status, size and the answer's terms (a
 *           sequential client in a process of its own: bench/search-http.ts); {done} ends it
 */
import { Agent, request } from "node:http"

export interface SearchJob {
  readonly mode: "search"
  readonly url: string
  readonly token: string
  readonly clients: number
  readonly seconds: number
  readonly scope: string
  readonly queries: ReadonlyArray<string>
  /** each query with 0–39 spaces before and after it: the same terms, 16,000 inputs in turn (none asked twice in a run) */
  readonly newInputs?: boolean
  /** what the new inputs are padded with (default a space; the load's warm-up pads with tabs, so its inputs are not the run's) */
  readonly pad?: string
  /** each query with one new word: newWordWith(query, from), newWordWith(…, from + 1), … in turn (after `count` the first again) */
  readonly newWords?: { readonly from: number; readonly count: number }
}

const SYL = ["ka", "ri", "mo", "te", "lu", "ser", "an", "dor", "vi", "pel", "gu", "nes", "tra", "bo", "lin", "ex"]

/** The k-th (0…65,535) word of four syllables, k's base-16 digits. */
export const fourSyllables = (k: number): string => [k & 15, (k >> 4) & 15, (k >> 8) & 15, (k >> 12) & 15].map((d) => SYL[d]).join("")

/** How many new words newWordWith has. */
export const NEW_WORDS = 65_536

/**
 * A query with its i-th new word (i < NEW_WORDS): a word of four syllables no other i gives (an odd
 * multiplier permutes 0…65,535), so the text and its analysis were never asked before.
 */
export const newWordWith = (query: string, i: number): string => `${query} ${fourSyllables((i * 40_503 + 12_345) & 0xffff)}`

export interface ProbeJob {
  readonly mode: "probe"
  readonly url: string
  readonly socketPath: string
  readonly opsToken: string
  readonly seconds: number
  readonly intervalMs: number
}

export interface StepsJob {
  readonly mode: "steps"
  readonly url: string
  readonly token: string
  readonly scope: string
}

/** The answer to one step: the latency up to the last byte of the body, ms, and what the parent checks. */
export interface StepAnswer {
  readonly ms: number
  readonly status: number
  readonly bytes: number
  readonly terms: ReadonlyArray<string>
}

export interface SearchReport {
  readonly mode: "search"
  readonly seconds: number
  /** latency of every 200, ms */
  readonly ok: ReadonlyArray<number>
  /** latency of every 503, ms */
  readonly overloaded: ReadonlyArray<number>
  readonly retryAfter: ReadonlyArray<string>
  readonly otherStatus: Readonly<Record<string, number>>
  /** 200 answers per client */
  readonly perClient: ReadonlyArray<number>
  /** one 503 body (its JSON) */
  readonly sample503: string | null
}

export interface ProbeReport {
  readonly mode: "probe"
  readonly healthz: ReadonlyArray<number>
  readonly ops: ReadonlyArray<number>
  readonly failures: number
}

interface Answer { readonly status: number; readonly headers: Record<string, string | Array<string> | undefined>; readonly body: string }

const send = (url: URL, options: { method: string; agent?: Agent; socketPath?: string; headers: Record<string, string> }, body?: string) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: options.method, headers: options.headers,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath })
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.setTimeout(120_000, () => req.destroy(new Error("timeout")))
    if (body !== undefined) req.write(body)
    req.end()
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const runSearch = async (job: SearchJob): Promise<SearchReport> => {
  // each client its own keep-alive connection, as N separate programs would have
  const agents = Array.from({ length: job.clients }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
  const url = new URL("/v1/search", job.url)
  const ok: Array<number> = []
  const overloaded: Array<number> = []
  const retryAfter = new Set<string>()
  const otherStatus: Record<string, number> = {}
  const perClient = Array.from({ length: job.clients }, () => 0)
  let sample503: string | null = null
  const t0 = performance.now()
  const end = t0 + job.seconds * 1000
  let q = 0
  await Promise.all(agents.map(async (agent, c) => {
    while (performance.now() < end) {
      const query = job.queries[q % job.queries.length] ?? ""
      const n = Math.floor(q / job.queries.length)
      const pad = job.pad ?? " "
      const text = job.newWords !== undefined
        ? newWordWith(query, job.newWords.from + (q % job.newWords.count))
        : job.newInputs === true ? `${pad.repeat(n % 40)}${query}${pad.repeat(Math.floor(n / 40) % 40)}` : query
      q++
      const body = JSON.stringify({ scopes: [job.scope], text })
      const start = performance.now()
      let answer: Answer
      try {
        answer = await send(url, {
          method: "POST", agent,
          headers: { authorization: `Bearer ${job.token}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
        }, body)
      } catch {
        otherStatus.error = (otherStatus.error ?? 0) + 1
        continue
      }
      const ms = performance.now() - start
      if (performance.now() > end + 30_000) break
      if (answer.status === 200) {
        ok.push(ms)
        perClient[c] = (perClient[c] ?? 0) + 1
      } else if (answer.status === 503) {
        overloaded.push(ms)
        sample503 ??= answer.body
        const after = String(answer.headers["retry-after"] ?? "")
        retryAfter.add(after)
        const wait = Number(after)
        await sleep((Number.isFinite(wait) && wait > 0 ? wait : 1) * 1000)
      } else {
        otherStatus[String(answer.status)] = (otherStatus[String(answer.status)] ?? 0) + 1
      }
    }
  }))
  for (const a of agents) a.destroy()
  return { mode: "search", seconds: (performance.now() - t0) / 1000, ok, overloaded, retryAfter: [...retryAfter], otherStatus, perClient, sample503 }
}

export const runProbe = async (job: ProbeJob): Promise<ProbeReport> => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const healthz: Array<number> = []
  const ops: Array<number> = []
  let failures = 0
  const end = performance.now() + job.seconds * 1000
  const probe = async (list: Array<number>, call: () => Promise<Answer>) => {
    while (performance.now() < end) {
      const t = performance.now()
      try {
        const a = await call()
        if (a.status === 200) list.push(performance.now() - t)
        else failures++
      } catch {
        failures++
      }
      await sleep(job.intervalMs)
    }
  }
  await Promise.all([
    probe(healthz, () => send(new URL("/healthz", job.url), { method: "GET", agent, headers: {} })),
    probe(ops, () => send(new URL("http://ops.invalid/ops/status"), { method: "GET", socketPath: job.socketPath, headers: { authorization: `Bearer ${job.opsToken}` } }))
  ])
  agent.destroy()
  return { mode: "probe", healthz, ops, failures }
}

const runSteps = (job: StepsJob): Promise<void> =>
  new Promise((resolve) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const url = new URL("/v1/search", job.url)
    // a parent that ended without {done} (a failed bench) ends the client too
    process.on("disconnect", () => process.exit(0))
    process.on("message", (m: { readonly text?: string; readonly done?: true }) => {
      if (m.done === true || m.text === undefined) {
        agent.destroy()
        resolve()
        return
      }
      const body = JSON.stringify({ scopes: [job.scope], text: m.text, limit: 10 })
      const start = performance.now()
      void send(url, {
        method: "POST", agent,
        headers: { authorization: `Bearer ${job.token}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
      }, body).then((a) => {
        const ms = performance.now() - start
        const terms = a.status === 200 ? (JSON.parse(a.body) as { readonly query: { readonly terms: ReadonlyArray<string> } }).query.terms : []
        process.send?.({ ms, status: a.status, bytes: Buffer.byteLength(a.body), terms } satisfies StepAnswer)
      }, () => process.send?.({ ms: 0, status: 0, bytes: 0, terms: [] } satisfies StepAnswer))
    })
  })

const arg = process.argv[2]
if (arg !== undefined && process.send !== undefined && (JSON.parse(arg) as { mode: string }).mode === "steps") {
  void runSteps(JSON.parse(arg) as StepsJob).then(() => process.exit(0))
} else if (arg !== undefined && process.send !== undefined) {
  const job = JSON.parse(arg) as SearchJob | ProbeJob
  const done = job.mode === "search" ? runSearch(job) : runProbe(job)
  done.then(
    (report) => process.send?.(report, () => process.exit(0)),
    (e: unknown) => {
      console.error(e)
      process.exit(1)
    }
  )
}
