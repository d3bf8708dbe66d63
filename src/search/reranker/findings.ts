/**
 * `groundnote doctor`'s stage c findings (cli.md §6, gaps.md §11): pure functions of the
 * configuration, the environment and the month's spend (OpsStatus.usage.reranker_month_usd), in
 * the Finding shape (id, status, message, remedy). Never the key itself.
 *
 *   rerankerKeyFinding(file, hasKey, env)       → reranker-key:    skip (off) | ok | fail (no key, unusable URL)
 *   rerankerBudgetFinding(file, spentMonthUsd)  → reranker-budget: skip (off) | ok | warn (≥ 80 %) | fail (exhausted)
 */
import type { ConfigFile } from "../../config/schema.js"
import { usdAmount } from "../../contracts/usd.js"
import { TYPESAFE_BASE_URL_ENV, typesafeBaseUrl } from "./typesafe.js"

export interface RerankerFinding {
  readonly id: "reranker-key" | "reranker-budget"
  readonly status: "ok" | "warn" | "fail" | "skip"
  readonly message: string
  readonly remedy: string | null
}

export const BUDGET_WARN_SHARE = 0.8

const usd = (x: number) => `$${usdAmount(x)}`

export const rerankerKeyFinding = (
  file: Pick<ConfigFile, "search">,
  hasKey: boolean,
  env: Readonly<Record<string, string | undefined>>
): RerankerFinding => {
  if (!file.search.reranker.enabled) return { id: "reranker-key", status: "skip", message: "stage c is off (search.reranker.enabled: false)", remedy: null }
  if (!hasKey) {
    return {
      id: "reranker-key", status: "fail", message: "search.reranker is on but TYPESAFE_API_KEY is not set: stage c fails on every search",
      remedy: "set TYPESAFE_API_KEY in the service's environment (never in groundnote.json) and restart"
    }
  }
  const url = typesafeBaseUrl(env)
  if ("error" in url) return { id: "reranker-key", status: "fail", message: url.error, remedy: `fix or unset ${TYPESAFE_BASE_URL_ENV}` }
  return { id: "reranker-key", status: "ok", message: `TYPESAFE_API_KEY is set; requests go to ${url.url}/rerank`, remedy: null }
}

export const rerankerBudgetFinding = (file: Pick<ConfigFile, "search">, spentMonthUsd: number): RerankerFinding => {
  const reranker = file.search.reranker
  if (!reranker.enabled) return { id: "reranker-budget", status: "skip", message: "stage c is off (search.reranker.enabled: false)", remedy: null }
  const cap = reranker.monthly_cap_usd
  const message = `${usd(spentMonthUsd)} of ${usd(cap)} estimated this month`
  if (spentMonthUsd >= cap) {
    return { id: "reranker-budget", status: "fail", message: `${message}: the cap is reached, stage c reports budget until the month ends`, remedy: "raise search.reranker.monthly_cap_usd or wait for the next month" }
  }
  if (spentMonthUsd >= cap * BUDGET_WARN_SHARE) return { id: "reranker-budget", status: "warn", message: `${message} (≥ ${BUDGET_WARN_SHARE * 100} %)`, remedy: "raise search.reranker.monthly_cap_usd if searches need stage c all month" }
  return { id: "reranker-budget", status: "ok", message, remedy: null }
}
