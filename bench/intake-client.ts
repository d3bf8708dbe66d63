/**
 * The client side of bench/intake.ts's HTTP part, in a process of its own (so what it measures is
 * not spent on the server's thread): sent one IntakeJob by its parent (process.send), N keep-alive
 * clients each POST /v1/proposals in a loop for `seconds`, every body a new proposal (the bodies
 * are the parent's, one per line of `bodies`, taken in turn); it reports one IntakeReport to its
 * parent (process.send) and exits.
 */
import { Agent, request } from "node:http"

export interface IntakeJob {
  readonly url: string
  readonly token: string
  readonly clients: number
  /** seconds not counted first (the JIT's warm-up), then `seconds` counted */
  readonly warmSeconds: number
  readonly seconds: number
  /** the JSON bodies, each sent at most once */
  readonly bodies: ReadonlyArray<string>
}

export interface IntakeReport {
  /** latency of every 201 in the counted seconds, ms */
  readonly ok: ReadonlyArray<number>
  readonly seconds: number
  /** count of each other status, with one body of each */
  readonly otherStatus: Readonly<Record<string, number>>
  readonly sample: string | null
  /** bodies sent in all (warm-up included): the parent checks it had enough */
  readonly sent: number
}

const post = (url: URL, agent: Agent, token: string, body: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.write(body)
    req.end()
  })

export const runIntake = async (job: IntakeJob): Promise<IntakeReport> => {
  const agents = Array.from({ length: job.clients }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
  const url = new URL("/v1/proposals", job.url)
  const ok: Array<number> = []
  const otherStatus: Record<string, number> = {}
  let sample: string | null = null
  const start = performance.now() + job.warmSeconds * 1000
  const end = start + job.seconds * 1000
  let next = 0
  await Promise.all(agents.map(async (agent) => {
    while (performance.now() < end && next < job.bodies.length) {
      const body = job.bodies[next++] ?? ""
      const t0 = performance.now()
      const answer = await post(url, agent, job.token, body).catch(() => ({ status: 0, body: "" }))
      const t1 = performance.now()
      if (answer.status === 201) {
        if (t0 >= start && t1 <= end) ok.push(t1 - t0)
      } else {
        otherStatus[String(answer.status)] = (otherStatus[String(answer.status)] ?? 0) + 1
        sample ??= answer.body.slice(0, 500)
      }
    }
  }))
  for (const a of agents) a.destroy()
  return { ok, seconds: job.seconds, otherStatus, sample, sent: next }
}

if (process.send !== undefined) {
  process.once("message", (job: IntakeJob) => {
    void runIntake(job).then((report) => process.send?.(report, () => process.exit(0)))
  })
  process.on("disconnect", () => process.exit(0))
}
