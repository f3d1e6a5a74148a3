export {
  encodeGguf,
  encodeGgufLayout,
  layoutOfGguf,
  metadataEntries,
  writeAtomically,
  writeGguf,
  type GgufDocument,
  type GgufLayout,
  type GgufRawTensor,
  type GgufScalarType,
  type GgufTensor,
  type GgufTypedValue,
  type GgufValue,
} from './writeGguf.ts';
export { makeLoraAdapter, readLoraBase, type LoraAdapterOptions, type LoraBase } from './loraAdapter.ts';
