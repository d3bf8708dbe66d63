/**
 * InFlight: how many requests the service's listener is serving right now (from the moment a
 * request enters the public listener until its response is written). The public listener counts
 * (http/server.ts); the read pool reads it to tell a lone search from one among others (pool.ts):
 * a search on the main thread runs to its end without letting another request in, so the pool
 * alone could not see a second request waiting behind it.
 */
import { Context, Layer } from "effect"

export interface InFlightShape {
  /** requests being served now */
  readonly count: () => number
  readonly enter: () => void
  readonly leave: () => void
}

export class InFlight extends Context.Tag("Groundnote/InFlight")<InFlight, InFlightShape>() {}

export const makeInFlight = (): InFlightShape => {
  let n = 0
  return {
    count: () => n,
    enter: () => {
      n++
    },
    leave: () => {
      n = Math.max(0, n - 1)
    }
  }
}

export const InFlightLive: Layer.Layer<InFlight> = Layer.sync(InFlight, makeInFlight)
