export { encodeGguf, writeGguf, type GgufDocument, type GgufTensor, type GgufValue, type GgufScalarType } from './writeGguf.ts';
export { makeLoraAdapter, readLoraBase, type LoraAdapterOptions, type LoraBase } from './loraAdapter.ts';
