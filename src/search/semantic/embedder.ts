/**
 * The Embedder of stage b and its ONNX implementation.
 *
 *   interface Embedder {
 *     model, dim
 *     embedQuery(text, { timeoutMs? })        → Effect<Float32Array, EmbedFailed>          (unit length)
 *     embedDocuments(texts, { timeoutMs? })   → Effect<Array<Float32Array>, EmbedFailed>   (in input order)
 *   }
 *   openOnnxEmbedder({ modelDir, model, … }) → Effect<Embedder, SemanticModelUnavailable, Scope>
 *
 * openOnnxEmbedder reads model_dir/<model>/ (model-files.ts), starts the worker thread
 * (ort-worker.ts), loads model.onnx there, checks its inputs and output (feeds.ts) and embeds one
 * probe text, so a model that loads but cannot run fails here and not in the first search. The
 * worker closes with the Scope.
 *
 * One run at a time goes to the worker; queries go before waiting document batches, and
 * documents run in batches (≤ batchSize texts, ≤ batchTokens padded tokens, sorted by length so
 * a batch pads little). A call that times out or is interrupted stops waiting at once: a queued
 * batch is dropped, a running one finishes in the worker and its answer is discarded.
 */
import { Duration, Effect, type Scope } from "effect"
import { EmbedFailed, SemanticModelUnavailable, STAGE_B_REASONS } from "./errors.js"
import { buildFeeds, type Feed, planModelIo } from "./feeds.js"
import { readModelFiles } from "./model-files.js"
import { MAX_DOCUMENT_TOKENS, MAX_QUERY_TOKENS, MODEL_SPECS, type SemanticModelId } from "./models.js"
import { type OrtOutput, spawnOrtWorker } from "./ort-worker.js"
import { halfToFloat, poolRows } from "./pooling.js"
import { makeTextTokenizer } from "./tokenize.js"

export interface EmbedOptions {
  /** overrides the embedder's default for this call */
  readonly timeoutMs?: number
}

export interface Embedder {
  readonly model: SemanticModelId
  readonly dim: number
  readonly embedQuery: (text: string, options?: EmbedOptions) => Effect.Effect<Float32Array, EmbedFailed>
  readonly embedDocuments: (texts: ReadonlyArray<string>, options?: EmbedOptions) => Effect.Effect<Array<Float32Array>, EmbedFailed>
}

export interface OnnxEmbedderOptions {
  readonly modelDir: string
  readonly model: SemanticModelId
  /** onnxruntime intra-op threads (default 1: the service shares the host) */
  readonly threads?: number
  /** default timeout of embedQuery (default 2000 ms) */
  readonly queryTimeoutMs?: number
  /** default timeout of one embedDocuments call (default 300 000 ms) */
  readonly documentTimeoutMs?: number
  readonly maxQueryTokens?: number
  readonly maxDocumentTokens?: number
  /** texts per document batch (default 8) */
  readonly batchSize?: number
  /** padded tokens per document batch (default 4096) */
  readonly batchTokens?: number
}

export const DEFAULT_QUERY_TIMEOUT_MS = 2_000
export const DEFAULT_DOCUMENT_TIMEOUT_MS = 300_000
const PROBE_TEXT = "probe"

interface Job {
  readonly priority: 0 | 1
  readonly feeds: ReadonlyArray<Feed>
  readonly output: string
  readonly resolve: (r: OrtOutput) => void
  readonly reject: (e: Error) => void
  cancelled: boolean
}

const failed = (detail: string) => new EmbedFailed({ reason: STAGE_B_REASONS.failed, detail })

export const openOnnxEmbedder = (o: OnnxEmbedderOptions): Effect.Effect<Embedder, SemanticModelUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const spec = MODEL_SPECS[o.model]
    const files = yield* readModelFiles(o.modelDir, o.model)
    const broken = (detail: string) => new SemanticModelUnavailable({ model: o.model, reason: STAGE_B_REASONS.broken, detail })
    const tokenizer = makeTextTokenizer(files.tokenizer, files.tokenizerConfig, spec)
    const worker = yield* Effect.acquireRelease(Effect.sync(spawnOrtWorker), (w) => Effect.promise(() => w.close()))
    const meta = yield* Effect.tryPromise({
      try: () => worker.load(files.onnxPath, { intraOpNumThreads: o.threads ?? 1 }),
      catch: (e) => broken(`${files.onnxPath}: onnxruntime cannot load it: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`)
    })
    const io = planModelIo(meta.inputs, meta.outputs)
    if (typeof io === "string") return yield* broken(`${files.onnxPath}: ${io}`)

    const queue: Array<Job> = []
    let busy = false
    const pump = (): void => {
      if (busy) return
      const first = queue.findIndex((j) => j.priority === 0)
      const job = queue.splice(first >= 0 ? first : 0, 1)[0]
      if (job === undefined) return
      busy = true
      worker.run(job.feeds, job.output).then(job.resolve, job.reject).finally(() => {
        busy = false
        pump()
      })
    }
    const runJob = (priority: 0 | 1, feeds: ReadonlyArray<Feed>): Effect.Effect<OrtOutput, EmbedFailed> =>
      Effect.async<OrtOutput, EmbedFailed>((resume) => {
        const job: Job = {
          priority, feeds, output: io.output, cancelled: false,
          resolve: (r) => { if (!job.cancelled) resume(Effect.succeed(r)) },
          reject: (e) => { if (!job.cancelled) resume(Effect.fail(failed(e.message.slice(0, 300)))) }
        }
        queue.push(job)
        pump()
        return Effect.sync(() => {
          job.cancelled = true
          const at = queue.indexOf(job)
          if (at >= 0) queue.splice(at, 1)
        })
      })

    const batchSize = Math.max(1, o.batchSize ?? 8)
    const batchTokens = Math.max(1, o.batchTokens ?? 4096)
    /** Embeds texts (already in the model's query/document form) in length-sorted batches. */
    const embedTexts = (texts: ReadonlyArray<string>, maxTokens: number, priority: 0 | 1, dim: number | null) =>
      Effect.gen(function*() {
        const encoded = texts.map((t) => tokenizer.encode(t, maxTokens))
        const order = encoded.map((_, i) => i).sort((a, b) => (encoded[a]?.length ?? 0) - (encoded[b]?.length ?? 0))
        const batches: Array<Array<number>> = []
        for (const i of order) {
          const current = batches[batches.length - 1]
          const longest = encoded[i]?.length ?? 0
          if (current !== undefined && current.length < batchSize && (current.length + 1) * longest <= batchTokens) current.push(i)
          else batches.push([i])
        }
        const out = new Array<Float32Array>(texts.length)
        for (const members of batches) {
          const padded = tokenizer.pad(members.map((i) => encoded[i] ?? []))
          const result = yield* runJob(priority, buildFeeds(io, padded))
          const data = result.type === "float16" ? halfToFloat(result.data as Uint16Array) : result.data
          if (!(data instanceof Float32Array)) return yield* failed(`model output has type ${result.type}; expected float32 or float16`)
          const rows = yield* Effect.try({
            try: () => poolRows(data, result.dims, padded.mask, spec.pooling),
            catch: (e) => failed(e instanceof Error ? e.message : String(e))
          })
          if (rows.length !== members.length) return yield* failed(`model answered ${rows.length} rows for a batch of ${members.length}`)
          for (const [k, i] of members.entries()) {
            const v = rows[k] as Float32Array
            if (v.some((x) => !Number.isFinite(x))) return yield* failed("model output is not finite")
            if (dim !== null && v.length !== dim) return yield* failed(`model output has dimension ${v.length}, not ${dim}`)
            out[i] = v
          }
        }
        return out
      })

    const probe = yield* embedTexts([PROBE_TEXT], maxDocTokens(o), 0, null).pipe(
      Effect.mapError((e) => broken(`${files.onnxPath}: the probe embedding failed: ${e.detail}`))
    )
    const dim = probe[0]?.length ?? 0
    if (dim === 0) return yield* broken(`${files.onnxPath}: the model produced an empty vector`)

    const withTimeout = <A>(effect: Effect.Effect<A, EmbedFailed>, ms: number) =>
      effect.pipe(Effect.timeoutFail({
        duration: Duration.millis(ms),
        onTimeout: () => new EmbedFailed({ reason: STAGE_B_REASONS.timeout, detail: `no vector within ${ms} ms` })
      }))

    return {
      model: o.model,
      dim,
      embedQuery: (text, options) =>
        withTimeout(
          Effect.map(embedTexts([spec.queryText(text)], o.maxQueryTokens ?? MAX_QUERY_TOKENS, 0, dim), (vs) => vs[0] as Float32Array),
          options?.timeoutMs ?? o.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
        ),
      embedDocuments: (texts, options) =>
        texts.length === 0
          ? Effect.succeed([])
          : withTimeout(embedTexts(texts, maxDocTokens(o), 1, dim), options?.timeoutMs ?? o.documentTimeoutMs ?? DEFAULT_DOCUMENT_TIMEOUT_MS)
    } satisfies Embedder
  })

const maxDocTokens = (o: OnnxEmbedderOptions): number => o.maxDocumentTokens ?? MAX_DOCUMENT_TOKENS
