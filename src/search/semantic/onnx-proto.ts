/**
 * A minimal ONNX protobuf writer (onnx.proto, proto2; IR version 8, default-domain opset 17):
 * ModelProto, GraphProto, NodeProto, AttributeProto (int, ints, tensor), TensorProto with
 * raw_data, ValueInfoProto with fixed or symbolic dimensions. Repeated scalars are written
 * unpacked, as proto2 declares them. Stage b builds its exact-neighbour graph (knn.ts) with it;
 * the tests build their tiny embedding models with it. No onnx package is needed.
 */

const varint = (value: number | bigint): Array<number> => {
  let v = BigInt.asUintN(64, BigInt(value))
  const out: Array<number> = []
  do {
    let byte = Number(v & 0x7fn)
    v >>= 7n
    if (v !== 0n) byte |= 0x80
    out.push(byte)
  } while (v !== 0n)
  return out
}

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
const key = (field: number, wire: number): Array<number> => varint((field << 3) | wire)
const fInt = (field: number, value: number | bigint): Uint8Array => Uint8Array.from([...key(field, 0), ...varint(value)])
const fBytes = (field: number, bytes: Uint8Array): Uint8Array =>
  concat([Uint8Array.from([...key(field, 2), ...varint(bytes.length)]), bytes])
const fStr = (field: number, s: string): Uint8Array => fBytes(field, new TextEncoder().encode(s))
const fMsg = (field: number, parts: ReadonlyArray<Uint8Array>): Uint8Array => fBytes(field, concat(parts))

/** TensorProto.DataType values used here. */
export const DT = { FLOAT: 1, INT32: 6, INT64: 7 } as const

export interface TensorInit {
  readonly name: string
  readonly dims: ReadonlyArray<number>
  readonly type: number
  readonly data: Float32Array | BigInt64Array | Int32Array
}
const tensorProto = (t: TensorInit): Array<Uint8Array> => [
  ...t.dims.map((d) => fInt(1, d)),
  fInt(2, t.type),
  fStr(8, t.name),
  fBytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength))
]

export type Attr =
  | { readonly name: string; readonly i: number }
  | { readonly name: string; readonly ints: ReadonlyArray<number> }
  | { readonly name: string; readonly t: TensorInit }
const attrProto = (a: Attr): Array<Uint8Array> => {
  if ("i" in a) return [fStr(1, a.name), fInt(3, a.i), fInt(20, 2)]
  if ("ints" in a) return [fStr(1, a.name), ...a.ints.map((v) => fInt(8, v)), fInt(20, 7)]
  return [fStr(1, a.name), fMsg(5, tensorProto(a.t)), fInt(20, 4)]
}

export interface OnnxNode {
  readonly op: string
  readonly inputs: ReadonlyArray<string>
  readonly outputs: ReadonlyArray<string>
  readonly attrs?: ReadonlyArray<Attr>
}
const nodeProto = (n: OnnxNode, i: number): Array<Uint8Array> => [
  ...n.inputs.map((s) => fStr(1, s)),
  ...n.outputs.map((s) => fStr(2, s)),
  fStr(3, `${n.op.toLowerCase()}_${i}`),
  fStr(4, n.op),
  ...(n.attrs ?? []).map((a) => fMsg(5, attrProto(a)))
]

export interface ValueInfo {
  readonly name: string
  readonly type: number
  /** a number is a fixed size, a string a symbolic dimension */
  readonly shape: ReadonlyArray<number | string>
}
const valueInfoProto = (v: ValueInfo): Array<Uint8Array> => [
  fStr(1, v.name),
  fMsg(2, [fMsg(1, [
    fInt(1, v.type),
    fMsg(2, v.shape.map((d) => fMsg(1, [typeof d === "number" ? fInt(1, d) : fStr(2, d)])))
  ])])
]

export interface OnnxGraph {
  readonly nodes: ReadonlyArray<OnnxNode>
  readonly initializers: ReadonlyArray<TensorInit>
  readonly inputs: ReadonlyArray<ValueInfo>
  readonly outputs: ReadonlyArray<ValueInfo>
}

/** The bytes of a ModelProto holding `g`. */
export const encodeModel = (g: OnnxGraph, producer = "groundnote"): Uint8Array =>
  concat([
    fInt(1, 8),
    fStr(2, producer),
    fMsg(7, [
      ...g.nodes.map((n, i) => fMsg(1, nodeProto(n, i))),
      fStr(2, "graph"),
      ...g.initializers.map((t) => fMsg(5, tensorProto(t))),
      ...g.inputs.map((v) => fMsg(11, valueInfoProto(v))),
      ...g.outputs.map((v) => fMsg(12, valueInfoProto(v)))
    ]),
    fMsg(8, [fStr(1, ""), fInt(2, 17)])
  ])
