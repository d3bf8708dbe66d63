/**
 * The files of a model under model_dir/<model>/ (architecture.md §3; default model_dir
 * <data dir>/models): model.onnx (or onnx/model.onnx, the layout of the model repositories),
 * with its external weights file beside it when the export has one (model.onnx_data), and
 * tokenizer.json plus tokenizer_config.json when present (beside the folder or beside the onnx
 * file). Read from disk only: nothing is ever downloaded.
 */
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Tokenizer } from "@huggingface/tokenizers"
import { Effect } from "effect"
import { SemanticModelUnavailable, STAGE_B_REASONS } from "./errors.js"
import type { SemanticModelId } from "./models.js"

export interface ModelFiles {
  readonly folder: string
  readonly onnxPath: string
  /** built from tokenizer.json and tokenizer_config.json ({} when absent) */
  readonly tokenizer: Tokenizer
  readonly tokenizerConfig: Record<string, unknown>
}

/** model_dir/<model> */
export const modelFolder = (modelDir: string, model: SemanticModelId): string => join(modelDir, model)

const isFile = (p: string): boolean => existsSync(p) && statSync(p).isFile()

const parseJson = (path: string): Record<string, unknown> | string => {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"))
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : "not a JSON object"
  } catch (e) {
    return e instanceof Error ? e.message.slice(0, 200) : "unreadable"
  }
}

/** Locates and parses the files and builds the tokenizer (which proves tokenizer.json usable). */
export const readModelFiles = (modelDir: string, model: SemanticModelId): Effect.Effect<ModelFiles, SemanticModelUnavailable> =>
  Effect.suspend(() => {
    const folder = modelFolder(modelDir, model)
    const missing = (detail: string) => Effect.fail(new SemanticModelUnavailable({ model, reason: STAGE_B_REASONS.missing, detail }))
    const broken = (detail: string) => Effect.fail(new SemanticModelUnavailable({ model, reason: STAGE_B_REASONS.broken, detail }))
    if (!existsSync(folder) || !statSync(folder).isDirectory()) return missing(`no folder ${folder}`)
    const onnxPath = [join(folder, "model.onnx"), join(folder, "onnx", "model.onnx")].find(isFile)
    if (onnxPath === undefined) return missing(`no model.onnx in ${folder} (nor in ${join(folder, "onnx")})`)
    if (statSync(onnxPath).size === 0) return broken(`${onnxPath} is empty`)
    const beside = (name: string) => [join(folder, name), join(folder, "onnx", name)].find(isFile)
    const tokenizerPath = beside("tokenizer.json")
    if (tokenizerPath === undefined) return missing(`no tokenizer.json in ${folder}`)
    const tokenizerJson = parseJson(tokenizerPath)
    if (typeof tokenizerJson === "string") return broken(`${tokenizerPath}: ${tokenizerJson}`)
    if (typeof tokenizerJson.model !== "object" || tokenizerJson.model === null) return broken(`${tokenizerPath}: no "model" section`)
    const configPath = beside("tokenizer_config.json")
    const tokenizerConfig = configPath === undefined ? {} : parseJson(configPath)
    if (typeof tokenizerConfig === "string") return broken(`${configPath ?? ""}: ${tokenizerConfig}`)
    let tokenizer: Tokenizer
    try {
      tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig)
    } catch (e) {
      return broken(`${tokenizerPath}: the tokenizer cannot be built: ${e instanceof Error ? e.message.slice(0, 200) : String(e)}`)
    }
    return Effect.succeed({ folder, onnxPath, tokenizer, tokenizerConfig })
  })
