/**
 * From the model's output to one unit vector per text (pure functions).
 *
 * - An output [batch, dim] is already pooled (sentence_embedding, dense_vecs): its rows are taken.
 * - An output [batch, seq, dim] (last_hidden_state) is pooled per the model: `cls` takes the first
 *   position whose attention mask is 1 (position 0 under right padding, the [CLS]/<s> token),
 *   `last-token` the last position whose mask is 1 — which is the last column under left padding
 *   and the row's own last token under right padding (Qwen's last_token_pool, either side).
 * - Every vector is L2-normalised, so cosine similarity is a dot product (a zero vector stays zero).
 */

export type Pooling = "cls" | "last-token"

/** Scales `v` to length 1 in place and returns it. */
export const l2normalize = (v: Float32Array): Float32Array => {
  let sum = 0
  for (let i = 0; i < v.length; i++) sum += (v[i] ?? 0) * (v[i] ?? 0)
  const norm = Math.sqrt(sum)
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / norm
  return v
}

/** The position a row is pooled at, given its attention mask (row-major [batch, seq]). */
export const poolIndex = (mask: ArrayLike<bigint | number>, row: number, seq: number, pooling: Pooling): number => {
  const on = (i: number) => Number(mask[row * seq + i] ?? 0) !== 0
  if (pooling === "cls") {
    for (let i = 0; i < seq; i++) if (on(i)) return i
    return 0
  }
  for (let i = seq - 1; i >= 0; i--) if (on(i)) return i
  return seq - 1
}

/**
 * One normalised vector per row of `data` (dims [batch, dim] or [batch, seq, dim]); `mask` is the
 * batch's attention mask [batch, seq]. Throws on any other rank (the embedder reports it).
 */
export const poolRows = (
  data: Float32Array,
  dims: ReadonlyArray<number>,
  mask: ArrayLike<bigint | number>,
  pooling: Pooling
): Array<Float32Array> => {
  if (dims.length === 2) {
    const [batch = 0, dim = 0] = dims
    return Array.from({ length: batch }, (_, b) => l2normalize(data.slice(b * dim, (b + 1) * dim)))
  }
  if (dims.length === 3) {
    const [batch = 0, seq = 0, dim = 0] = dims
    return Array.from({ length: batch }, (_, b) => {
      const at = (b * seq + poolIndex(mask, b, seq, pooling)) * dim
      return l2normalize(data.slice(at, at + dim))
    })
  }
  throw new Error(`model output has rank ${dims.length}; expected [batch, dim] or [batch, seq, dim]`)
}

/** IEEE half floats (an fp16 export's output) as float32. */
export const halfToFloat = (half: Uint16Array): Float32Array => {
  const out = new Float32Array(half.length)
  for (let i = 0; i < half.length; i++) {
    const h = half[i] ?? 0
    const sign = h & 0x8000 ? -1 : 1
    const exp = (h >> 10) & 0x1f
    const frac = h & 0x3ff
    out[i] = exp === 0
      ? sign * 2 ** -14 * (frac / 1024)
      : exp === 31
      ? (frac === 0 ? sign * Infinity : NaN)
      : sign * 2 ** (exp - 15) * (1 + frac / 1024)
  }
  return out
}
