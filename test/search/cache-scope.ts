/**
 * The hooks of the tests of what a search keeps per connection through writes: a data dir with the
 * scope sales (cache-support.ts) and one service on it, made before each test and gone after it.
 */
import type { ManagedRuntime } from "effect"
import { afterEach, beforeEach } from "vitest"
import { tempDir, testConfig } from "../support/env.js"
import type { Stores } from "../support/run.js"
import { serviceOf, writeSales } from "./cache-support.js"

/** A data dir with the scope sales written from `statements` before each test, and its service; both gone after it. */
export const salesScope = (statements: ReadonlyArray<readonly [string, ReadonlyArray<string>]>) => {
  const scope = {} as {
    dir: string
    config: ReturnType<typeof testConfig>
    service: ManagedRuntime.ManagedRuntime<Stores, unknown>
    cleanup: () => void
  }
  beforeEach(async () => {
    ;({ dir: scope.dir, cleanup: scope.cleanup } = tempDir())
    scope.config = testConfig(scope.dir)
    await writeSales(scope.config, statements)
    scope.service = serviceOf(scope.config)
  })
  afterEach(async () => {
    await scope.service.dispose()
    scope.cleanup()
  })
  return scope
}
