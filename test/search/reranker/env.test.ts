/** TYPESAFE_BASE_URL reaches Env as set (stage c and doctor check it where they use it). */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { readEnv } from "../../../src/config/env.js"

const ENV = {
  GROUNDNOTE_AUTH_MODE: "dev-token",
  GROUNDNOTE_SESSION_SECRET: "s".repeat(40),
  GROUNDNOTE_OPS_TOKEN: "o".repeat(40),
  GROUNDNOTE_DEV_MCP_TOKEN: "m".repeat(40),
  GROUNDNOTE_DEV_APPROVAL_TOKEN: "a".repeat(40),
  GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}

describe("readEnv: TYPESAFE_BASE_URL", () => {
  it("is absent when unset or empty, and the value as set otherwise (not checked at start: stage c reports an unusable one)", () => {
    expect("typesafeBaseUrl" in Effect.runSync(readEnv(ENV, "/srv"))).toBe(false)
    expect("typesafeBaseUrl" in Effect.runSync(readEnv({ ...ENV, TYPESAFE_BASE_URL: "" }, "/srv"))).toBe(false)
    expect(Effect.runSync(readEnv({ ...ENV, TYPESAFE_BASE_URL: "http://reranker.example.com/v1" }, "/srv")).typesafeBaseUrl)
      .toBe("http://reranker.example.com/v1")
  })
})
