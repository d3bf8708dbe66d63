/**
 * `groundnote doctor`'s check of the stage b model (finding id `semantic-model`, cli.md §6):
 * the same path the service takes — files, tokenizer, onnxruntime load, inputs and output, one
 * probe embedding — then the worker is closed again. Imports no storage module (AT6).
 *
 *   checkModel(modelDir, model) → Effect<ModelCheck>                (never fails)
 *   semanticModelFinding(semantic, dataDir) → Effect<SemanticFinding> (skip when stage b is off)
 */
import { join } from "node:path"
import { Effect } from "effect"
import { openOnnxEmbedder } from "./embedder.js"
import { modelFolder } from "./model-files.js"
import type { SemanticModelId } from "./models.js"

export type ModelCheck =
  | { readonly ok: true; readonly model: SemanticModelId; readonly folder: string; readonly dim: number; readonly ms: number }
  | { readonly ok: false; readonly model: SemanticModelId; readonly folder: string; readonly reason: string; readonly detail: string }

export const checkModel = (modelDir: string, model: SemanticModelId): Effect.Effect<ModelCheck> =>
  Effect.scoped(Effect.gen(function*() {
    const t0 = performance.now()
    const embedder = yield* openOnnxEmbedder({ modelDir, model })
    return { ok: true as const, model, folder: modelFolder(modelDir, model), dim: embedder.dim, ms: Math.round(performance.now() - t0) }
  })).pipe(
    Effect.catchTag("SemanticModelUnavailable", (e) =>
      Effect.succeed({ ok: false as const, model, folder: modelFolder(modelDir, model), reason: e.reason, detail: e.detail }))
  )

/** model_dir, default <data dir>/models (architecture.md §3). */
export const modelDirOf = (semantic: { readonly model_dir?: string | undefined }, dataDir: string): string =>
  semantic.model_dir ?? join(dataDir, "models")

/** The doctor finding in the shape of cli.md §6 (id, status, message, remedy). */
export interface SemanticFinding {
  readonly id: "semantic-model"
  readonly status: "ok" | "fail" | "skip"
  readonly message: string
  readonly remedy: string | null
}

export const semanticModelFinding = (
  semantic: { readonly enabled: false } | { readonly enabled: true; readonly model: SemanticModelId; readonly model_dir?: string | undefined },
  dataDir: string
): Effect.Effect<SemanticFinding> => {
  if (!semantic.enabled) return Effect.succeed({ id: "semantic-model", status: "skip", message: "stage b is off (search.semantic.enabled: false)", remedy: null })
  return Effect.map(checkModel(modelDirOf(semantic, dataDir), semantic.model), (c): SemanticFinding =>
    c.ok
      ? { id: "semantic-model", status: "ok", message: `${c.model} loads from ${c.folder} (dimension ${c.dim}, ${c.ms} ms)`, remedy: null }
      : {
        id: "semantic-model", status: "fail", message: `${c.model}: ${c.reason}: ${c.detail}`,
        remedy: `put model.onnx (with its model.onnx_data), tokenizer.json and tokenizer_config.json of ${c.model} into ${c.folder} (docs/stages.md)`
      })
}
