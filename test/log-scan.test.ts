import { expect, it } from "vitest"
import { scanLog } from "./global-setup.js"

it("the suite's log scan finds tokens, JWTs, cookies, secrets and source text", () => {
  expect(scanLog("level=INFO message=ok grant=service:2")).toEqual([])
  expect(scanLog(`token gn_${"A".repeat(43)}`)).toHaveLength(1)
  expect(scanLog("eyJhbGciOiJSUzI1NiJ9.eyJlbWFpbCI6ImEifQ.sig")).toHaveLength(1)
  expect(scanLog("cookie gn_session=eyJzdWIi.abc")).toHaveLength(1)
  expect(scanLog(`secret=${"s".repeat(40)}`)).toHaveLength(1)
  expect(scanLog("quote: Vor jeder Bestellung schwarzer")).toHaveLength(1)
})
